//! Verdicts on instruction counts (`run --instructions`). The count is deterministic, so there is no interval
//! to draw: two counts are compared exactly, and any change beyond the instruction threshold (0.5% unless
//! `--instruction-threshold`) is one, named with both figures. Pure.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::analysis::decision;
use benchhost_record::{Decision, FunctionChange, FunctionCount, INSTRUCTIONS, MetricValue, Record, RunInfo, Verdict};

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
    let mut note = note(decision, old.value, new.value, &format!("against {}", label.join(" ")), threshold);
    let mut verdict = Verdict {
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
        functions: Vec::new(),
        functions_explain: None,
        accepted: None,
        between_runs: None,
    };
    attach_functions(&mut verdict, &mut note, reference, arm);
    Some(Record::verdict_on(arm, decision::with_detectable(verdict, decision::Rule::Interval), note, run.clone()))
}

/// Functions listed under a verdict on counts.
pub const FUNCTIONS_SHOWN: usize = 10;

/// Adds to a verdict on `before`'s and `after`'s counts the functions whose instructions per iteration changed
/// most (when both records carry per-function counts), and to its note the first of them with the share of the
/// change they explain: `; most in rig::work (lib.rs:40): +81920.0 per iteration, 97% of the change`.
pub fn attach_functions(verdict: &mut Verdict, note: &mut String, before: &Record, after: &Record) {
    let (Some(old), Some(new)) = (functions(before), functions(after)) else { return };
    let (Some(old_total), Some(new_total)) = (before.metrics.get(INSTRUCTIONS), after.metrics.get(INSTRUCTIONS)) else {
        return;
    };
    if old.is_empty() || new.is_empty() {
        return;
    }
    let changes = function_changes(old, new);
    let change = new_total.value - old_total.value;
    let explained: f64 = changes.iter().map(FunctionChange::difference).sum();
    let share = (change != 0.0).then(|| explained / change);
    if let (Some(first), Some(share)) = (changes.first().filter(|f| f.difference() != 0.0), share) {
        note.push_str(&format!(
            "; most in {}: {:+.1} per iteration, {:.0}% of the change",
            first.place(),
            first.difference(),
            share * 100.0
        ));
    }
    verdict.functions = changes;
    verdict.functions_explain = share;
}

/// The functions a record's count kept, if it has a count.
fn functions(record: &Record) -> Option<&[FunctionCount]> {
    record.cell.as_ref()?.instructions.as_ref().map(|c| c.functions.as_slice())
}

/// The [`FUNCTIONS_SHOWN`] functions whose count per iteration differs most between `old` and `new` (a function
/// on one side only counts 0 on the other), by absolute difference; unchanged ones are left out.
pub fn function_changes(old: &[FunctionCount], new: &[FunctionCount]) -> Vec<FunctionChange> {
    let key = |f: &FunctionCount| (f.name.clone(), f.file.clone());
    let mut by_place: BTreeMap<(String, Option<String>), FunctionChange> = BTreeMap::new();
    for (side, list) in [(0, old), (1, new)] {
        for f in list {
            let entry = by_place.entry(key(f)).or_insert_with(|| FunctionChange {
                name: f.name.clone(),
                file: f.file.clone(),
                line: f.line,
                before: 0.0,
                after: 0.0,
            });
            if side == 0 {
                entry.before = f.per_iteration
            } else {
                entry.after = f.per_iteration
            }
            entry.line = entry.line.or(f.line);
        }
    }
    let mut changes: Vec<FunctionChange> = by_place.into_values().filter(|c| c.difference() != 0.0).collect();
    changes.sort_by(|a, b| b.difference().abs().total_cmp(&a.difference().abs()).then_with(|| a.name.cmp(&b.name)));
    changes.truncate(FUNCTIONS_SHOWN);
    changes
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

    fn with_functions(mut record: Record, functions: &[(&str, f64)]) -> Record {
        let functions = functions
            .iter()
            .map(|(name, per)| FunctionCount {
                name: name.to_string(),
                file: Some("/src/workloads.rs".into()),
                line: Some(140),
                per_iteration: *per,
            })
            .collect();
        let count = benchhost_record::InstructionCount { functions, ..Default::default() };
        record.cell = Some(benchhost_record::CellInfo { instructions: Some(count), ..Default::default() });
        record
    }

    #[test]
    fn a_regression_names_the_function_it_came_from_and_its_share() {
        let reference = with_functions(counted(1000.0, 0), &[("rig::sort", 900.0), ("rig::noise", 5.0)]);
        let arm = with_functions(
            counted(1100.0, 1),
            &[("rig::sort", 900.0), ("rig::noise", 6.0), ("rig::injected_regression_work", 97.0)],
        );
        let v =
            verdict(&arm, &reference, reference.variant.clone(), &|_, _| 0.005, &RunInfo::for_tests(2, None)).unwrap();
        let verdict = v.verdict.as_ref().unwrap();
        let listed: Vec<(&str, f64, f64)> =
            verdict.functions.iter().map(|f| (f.name.as_str(), f.before, f.after)).collect();
        assert_eq!(
            listed,
            [("rig::injected_regression_work", 0.0, 97.0), ("rig::noise", 5.0, 6.0)],
            "sort did not move"
        );
        assert!((verdict.functions_explain.unwrap() - 0.98).abs() < 1e-9, "98 of the 100 more");
        let note = v.note.as_deref().unwrap();
        assert!(
            note.ends_with(
                "; most in rig::injected_regression_work (workloads.rs:140): +97.0 per iteration, 98% of the change"
            ),
            "{note}"
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
