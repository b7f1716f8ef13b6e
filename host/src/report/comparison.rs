//! How a comparison of two arms reads: what was held equal and what was compared, e.g. `at work_us=10: mode
//! split vs perthread`. Of what was held equal, only what tells a rig's comparisons apart is shown (the shared
//! `partitions=16` is not), so the verdicts of one level of the other axes read as a group.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::report::format::plain;
use benchhost_record::Record;

type Variant = BTreeMap<String, Value>;
/// A comparison's arm and reference variants.
type Sides<'a> = (&'a Variant, &'a Variant);

/// One comparison, as tables show it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Label {
    /// What was held equal, as `key=value` pairs (empty when nothing tells the rig's comparisons apart).
    pub held: String,
    /// What was compared: `mode split vs perthread`.
    pub asked: String,
}

impl std::fmt::Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.held.is_empty() {
            true => write!(f, "{}", self.asked),
            false => write!(f, "at {}: {}", self.held, self.asked),
        }
    }
}

/// The labels of comparisons of one rig's arms, `(arm, reference)` variants each, in their order.
pub fn labels(pairs: &[Sides<'_>]) -> Vec<Label> {
    let held = |arm: &Variant, reference: &Variant| -> Vec<(String, String)> {
        arm.iter().filter(|(k, v)| reference.get(*k) == Some(v)).map(|(k, v)| (k.clone(), plain(v))).collect()
    };
    // A held key is shown when its value is not the same in every comparison that holds it.
    let mut values: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (arm, reference) in pairs {
        for (key, value) in held(arm, reference) {
            values.entry(key).or_default().insert(value);
        }
    }
    pairs
        .iter()
        .map(|(arm, reference)| {
            let shown = held(arm, reference).into_iter().filter(|(k, _)| values[k].len() > 1);
            let held = shown.map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
            let differ = arm.iter().filter(|(k, v)| reference.get(*k) != Some(v));
            let asked = differ
                .map(|(k, v)| format!("{k} {} vs {}", plain(v), reference.get(k).map(plain).unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(", ");
            Label { held, asked }
        })
        .collect()
}

/// The reference arm of a verdict that compares two arms of a rig (`run --interleave`); `None` for a verdict
/// against a baseline, an earlier run or another build.
pub fn reference_of(verdict: &Record) -> Option<&Variant> {
    let v = verdict.verdict.as_ref()?;
    let against = v.against.as_ref()?;
    (v.baseline.is_none() && !against.contains_key("build")).then_some(against)
}

/// The labels of the verdicts in `verdicts` that compare arms, by index, each among its rig's.
pub fn verdict_labels(verdicts: &[&Record]) -> BTreeMap<usize, Label> {
    let mut by_bench: BTreeMap<&str, Vec<(usize, Sides<'_>)>> = BTreeMap::new();
    for (i, record) in verdicts.iter().enumerate() {
        if let Some(reference) = reference_of(record) {
            by_bench.entry(&record.bench).or_default().push((i, (&record.variant, reference)));
        }
    }
    let mut found = BTreeMap::new();
    for rows in by_bench.into_values() {
        let pairs: Vec<_> = rows.iter().map(|(_, pair)| *pair).collect();
        found.extend(rows.iter().map(|(i, _)| *i).zip(labels(&pairs)));
    }
    found
}

/// Functions shown in a verdict's line of where its count changed.
const WHERE_SHOWN: usize = 3;

/// Where a verdict on counts changed, from its `functions`: `+97.0 instr/iter in rig::injected
/// (workloads.rs:140), +1.0 in rig::noise; 98% of the change`. `None` without functions.
pub fn where_changed(verdict: &benchhost_record::Verdict) -> Option<String> {
    let parts: Vec<String> = verdict
        .functions
        .iter()
        .take(WHERE_SHOWN)
        .enumerate()
        .map(|(i, f)| format!("{:+.1}{} in {}", f.difference(), if i == 0 { " instr/iter" } else { "" }, f.place()))
        .collect();
    if parts.is_empty() {
        return None;
    }
    let share = verdict.functions_explain.map_or(String::new(), |s| format!("; {:.0}% of the change", s * 100.0));
    Some(format!("{}{share}", parts.join(", ")))
}

/// Each verdict among `verdicts` that says where its count changed: `(bench and variant, where)`.
pub fn where_lines(verdicts: &[&Record]) -> Vec<(String, String)> {
    verdicts
        .iter()
        .filter_map(|r| {
            let line = where_changed(r.verdict.as_ref()?)?;
            let variant: Vec<String> = r.variant.iter().map(|(k, v)| format!("{k}={}", plain(v))).collect();
            Some((format!("{} {}", r.bench, variant.join(" ")).trim().to_string(), line))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn variant(value: Value) -> Variant {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_comparison_names_the_level_it_holds_and_the_values_it_compares() {
        let arm = |mode: &str, work: i64| variant(json!({"mode": mode, "work_us": work, "partitions": 16}));
        let (s0, p0, s10, p10) = (arm("split", 0), arm("perthread", 0), arm("split", 10), arm("perthread", 10));
        let shown: Vec<String> = labels(&[(&s0, &p0), (&s10, &p10)]).iter().map(|l| l.to_string()).collect();
        assert_eq!(shown, ["at work_us=0: mode split vs perthread", "at work_us=10: mode split vs perthread"]);
        let alone: Vec<String> = labels(&[(&s0, &p0)]).iter().map(|l| l.to_string()).collect();
        assert_eq!(alone, ["mode split vs perthread"], "nothing to tell apart: no level shown");
    }

    #[test]
    fn a_verdict_on_counts_says_where_they_changed_in_every_format() {
        use benchhost_record::{Decision, FunctionChange, Kind, RunInfo, Verdict};
        let change = |name: &str, line, before, after| FunctionChange {
            name: name.into(),
            file: Some("/src/workloads.rs".into()),
            line,
            before,
            after,
        };
        let verdict = Verdict {
            metric: Some("instructions".into()),
            test: "exact".into(),
            baseline: None,
            against: Some(variant(json!({"replica": 0}))),
            ratio: Some(1.1),
            ci95: Some([1.1, 1.1]),
            higher_is_better: Some(false),
            threshold: 0.005,
            decision: Decision::Regressed,
            reason: None,
            detectable: None,
            method: None,
            functions: vec![change("rig::injected", Some(140), 0.0, 97.0), change("rig::noise", None, 5.0, 6.0)],
            functions_explain: Some(0.98),
            accepted: None,
            between_runs: None,
        };
        let mut record =
            Record::new("harness", Kind::Verdict, RunInfo::for_tests(1, None), variant(json!({"replica": 1})));
        record.verdict = Some(verdict);
        let line = "+97.0 instr/iter in rig::injected (workloads.rs:140), +1.0 in rig::noise (workloads.rs); 98% of the change";
        assert_eq!(where_changed(record.verdict.as_ref().unwrap()).as_deref(), Some(line));
        let groups = crate::report::verdicts::groups(&[&record]);
        assert!(crate::report::verdicts::markdown(&groups).ends_with(&format!("- where harness replica=1: {line}\n")));
        assert!(crate::report::html_forest::html(&groups).contains(&format!("<p>Where harness replica=1: {line}</p>")));
        assert!(crate::report::verdicts_table(&[&record]).ends_with(&format!("where: harness replica=1: {line}")));
        record.verdict.as_mut().unwrap().functions.clear();
        let groups = crate::report::verdicts::groups(&[&record]);
        assert!(!crate::report::verdicts::markdown(&groups).contains("where"), "nothing to say without functions");
    }
}
