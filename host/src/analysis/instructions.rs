//! Verdicts on instruction counts (`run --instructions`). The count is deterministic, so there is no interval
//! to draw: two counts are compared exactly, and any change beyond the instruction threshold (0.5% unless
//! `--instruction-threshold`) is one, named with both figures. Pure.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::analysis::decision;
use benchhost_record::{Decision, INSTRUCTIONS, MetricValue, Record, RunInfo, Verdict};

/// The test named in every verdict on a count.
pub const TEST: &str = "exact: instructions per iteration counted under Valgrind, compared as they are";

/// The decision on two counts, the worse direction being more instructions.
pub fn decide(old: f64, new: f64, threshold: f64) -> Decision {
    let ratio = new / old;
    decision::decide([ratio, ratio], false, threshold)
}

/// The note of a verdict on two counts: both figures and the change, e.g.
/// `instructions regressed: 1200.0 -> 1212.0 per iteration (+1.00%) against replica=0, threshold ±0.5%`.
pub fn note(decision: Decision, old: f64, new: f64, against: &str, threshold: f64) -> String {
    format!(
        "{INSTRUCTIONS} {}: {old:.1} -> {new:.1} per iteration ({:+.2}%) {against}, exact counts, threshold ±{:.1}%",
        decision.name(),
        (new / old - 1.0) * 100.0,
        threshold * 100.0
    )
}

/// The verdict on `arm`'s count against `reference`'s (an interleaved arm against its rig's first, a build
/// against the other), when both have one.
pub fn verdict(
    arm: &Record,
    reference: &Record,
    against: BTreeMap<String, Value>,
    threshold: decision::Threshold<'_>,
    run: &RunInfo,
) -> Option<Record> {
    let (old, new) = (reference.metrics.get(INSTRUCTIONS)?, arm.metrics.get(INSTRUCTIONS)?);
    let threshold = threshold(arm, INSTRUCTIONS);
    let ratio = ratio(old, new)?;
    let decision = decide(old.value, new.value, threshold);
    let label: Vec<String> = against.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let note = note(decision, old.value, new.value, &format!("against {}", label.join(" ")), threshold);
    let verdict = Verdict {
        metric: Some(INSTRUCTIONS.into()),
        test: TEST.into(),
        baseline: None,
        against: Some(against),
        ratio: Some(ratio),
        ci95: Some([ratio, ratio]),
        higher_is_better: Some(false),
        threshold,
        decision,
        detectable: None,
        reason: None,
        method: None,
    };
    Some(Record::verdict_on(arm, decision::with_detectable(verdict), note, run.clone()))
}

/// new / old, when both counts are positive.
fn ratio(old: &MetricValue, new: &MetricValue) -> Option<f64> {
    (old.value > 0.0 && new.value > 0.0).then(|| new.value / old.value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchhost_record::Kind;

    fn counted(value: f64, replica: i64) -> Record {
        let mut record =
            Record::new("harness", Kind::Measurement, RunInfo::for_tests(1, Some("r")), Default::default());
        record.variant.insert("replica".into(), replica.into());
        let metric =
            MetricValue { value, unit: "instructions".into(), higher_is_better: false, ci95: None, n: Some(1) };
        record.metrics.insert(INSTRUCTIONS.into(), metric);
        record
    }

    #[test]
    fn one_percent_more_instructions_is_a_regression_with_both_figures() {
        let (reference, arm) = (counted(1200.0, 0), counted(1212.0, 1));
        let against = reference.variant.clone();
        let v = verdict(&arm, &reference, against, &|_, _| 0.005, &RunInfo::for_tests(2, None)).unwrap();
        assert_eq!(v.verdict.as_ref().unwrap().decision, Decision::Regressed);
        assert_eq!(
            v.note.as_deref(),
            Some(
                "instructions regressed: 1200.0 -> 1212.0 per iteration (+1.00%) against replica=0, exact counts, threshold ±0.5%"
            )
        );
    }

    #[test]
    fn equal_counts_are_no_change_and_fewer_an_improvement() {
        assert_eq!(decide(1200.0, 1200.0, 0.005), Decision::NoChange);
        assert_eq!(decide(1200.0, 1203.0, 0.005), Decision::NoChange, "0.25% is within the threshold");
        assert_eq!(decide(1200.0, 1100.0, 0.005), Decision::Improved);
        let none = Record::new("harness", Kind::Measurement, RunInfo::for_tests(1, None), Default::default());
        let with = counted(5.0, 0);
        assert!(verdict(&with, &none, BTreeMap::new(), &|_, _| 0.005, &RunInfo::for_tests(2, None)).is_none());
    }
}
