//! Compares two sets of records series by series and emits one `verdict` record per series and metric. Pure.
//!
//! A series is `bench` + `variant`; each side contributes its newest measurement of it. Per metric the change
//! is the ratio new / old, with a CI95 built from both records' CI95 (log-normal delta method: each CI95
//! half-width is taken as 1.96 standard errors of the log estimate). With the metric's direction of goodness
//! and a noise threshold `t`, the decision is:
//! - `regressed` / `improved`: the whole CI is worse / better than `t`;
//! - `no_change`: the whole CI lies within ±`t`;
//! - `inconclusive`: anything else (the CI straddles the threshold).
//!
//! A series present on one side only is `added` or `removed`, never compared with something else.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::record::{Kind, MetricValue, Record, RunInfo, SCHEMA};

/// The test named in every verdict.
pub const TEST: &str = "ratio of estimates; CI95 from both records' CI95 (log-normal delta method)";

/// The outcome for one series and metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Better beyond the threshold, with 95% confidence.
    Improved,
    /// Worse beyond the threshold, with 95% confidence.
    Regressed,
    /// Within the threshold, with 95% confidence.
    NoChange,
    /// The data cannot tell.
    Inconclusive,
    /// Only the new side has the series.
    Added,
    /// Only the old side has the series.
    Removed,
}

impl Decision {
    /// The snake_case name, as in records and `--fail-on`.
    pub fn name(self) -> &'static str {
        match self {
            Decision::Improved => "improved",
            Decision::Regressed => "regressed",
            Decision::NoChange => "no_change",
            Decision::Inconclusive => "inconclusive",
            Decision::Added => "added",
            Decision::Removed => "removed",
        }
    }
}

/// The `verdict` section of a verdict record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The metric compared (absent for added/removed series).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// How the decision was reached.
    pub test: String,
    /// The old side's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineRef>,
    /// In a paired comparison within one run: the variant of the arm compared against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<BTreeMap<String, serde_json::Value>>,
    /// new / old.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// CI95 of the ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
    /// The metric's direction of goodness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub higher_is_better: Option<bool>,
    /// Noise threshold, as a fraction (0.03 for ±3%).
    pub threshold: f64,
    /// The outcome.
    pub decision: Decision,
}

/// The run a comparison was made against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineRef {
    /// Its run id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Its commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Its start.
    pub ts_ms: u64,
}

/// The identity of a series: bench and variant (its canonical JSON, keys sorted).
pub type SeriesKey = (String, String);

/// The series key of a record.
pub fn series(record: &Record) -> SeriesKey {
    (record.bench.clone(), serde_json::to_string(&record.variant).expect("variants serialize"))
}

/// The newest measurement of every series in `records` (a later line wins a tie).
pub fn latest(records: &[Record]) -> BTreeMap<SeriesKey, &Record> {
    let mut newest: BTreeMap<SeriesKey, &Record> = BTreeMap::new();
    for record in records.iter().filter(|r| r.kind == Kind::Measurement) {
        let slot = newest.entry(series(record)).or_insert(record);
        if record.run.ts_ms >= slot.run.ts_ms {
            *slot = record;
        }
    }
    newest
}

/// The noise threshold of a series' metric: a fixed one, or one calibrated for it on this host.
pub type Threshold<'a> = &'a dyn Fn(&Record, &str) -> f64;

/// Verdict records for `new` against `old`, stamped with `run` (the judging invocation).
pub fn compare(old: &[Record], new: &[Record], threshold: Threshold<'_>, run: &RunInfo) -> Vec<Record> {
    let (old, new) = (latest(old), latest(new));
    let mut verdicts = Vec::new();
    for (key, after) in &new {
        let Some(before) = old.get(key) else {
            verdicts.push(one_sided(after, Decision::Added, threshold(after, ""), run));
            continue;
        };
        for (name, metric) in &after.metrics {
            if let Some(base) = before.metrics.get(name) {
                verdicts.push(judge(after, before, name, base, metric, threshold(after, name), run));
            }
        }
    }
    for (key, before) in &old {
        if !new.contains_key(key) {
            verdicts.push(one_sided(before, Decision::Removed, threshold(before, ""), run));
        }
    }
    verdicts
}

/// new / old with its CI95: each side's CI95 half-width is taken as 1.96 standard errors of its log estimate
/// (log-normal delta method); a side without a CI counts as exact.
pub fn ratio_ci(old: &MetricValue, new: &MetricValue) -> (f64, [f64; 2]) {
    let ratio = new.value / old.value;
    let rel_se = |m: &MetricValue| m.ci95.map_or(0.0, |[lo, hi]| (hi - lo) / 2.0 / m.value.abs() / 1.96);
    let se = (rel_se(old).powi(2) + rel_se(new).powi(2)).sqrt();
    (ratio, [ratio * (-1.96 * se).exp(), ratio * (1.96 * se).exp()])
}

fn judge(
    after: &Record,
    before: &Record,
    name: &str,
    old: &MetricValue,
    new: &MetricValue,
    threshold: f64,
    run: &RunInfo,
) -> Record {
    let (ratio, ci95) = ratio_ci(old, new);
    let decision = decide(ci95, new.higher_is_better, threshold);
    let baseline =
        BaselineRef { run_id: before.run.id.clone(), commit: before.run.commit.clone(), ts_ms: before.run.ts_ms };
    let note = format!(
        "{name} {}: x{ratio:.4} [{:.4}, {:.4}] against run {} ({}), threshold ±{:.1}%",
        decision.name(),
        ci95[0],
        ci95[1],
        baseline.run_id.as_deref().unwrap_or("?"),
        baseline.commit.as_deref().unwrap_or("no commit"),
        threshold * 100.0
    );
    let verdict = Verdict {
        metric: Some(name.to_string()),
        test: TEST.into(),
        baseline: Some(baseline),
        against: None,
        ratio: Some(ratio),
        ci95: Some(ci95),
        higher_is_better: Some(new.higher_is_better),
        threshold,
        decision,
    };
    record(after, verdict, note, run)
}

/// The decision for a ratio CI; "worse" is up for lower-is-better metrics and down for higher-is-better.
pub fn decide([lo, hi]: [f64; 2], higher_is_better: bool, threshold: f64) -> Decision {
    let (worse_lo, worse_hi) = if higher_is_better { (1.0 / hi, 1.0 / lo) } else { (lo, hi) };
    let (up, down) = (1.0 + threshold, 1.0 / (1.0 + threshold));
    if worse_lo > up {
        Decision::Regressed
    } else if worse_hi < down {
        Decision::Improved
    } else if worse_lo >= down && worse_hi <= up {
        Decision::NoChange
    } else {
        Decision::Inconclusive
    }
}

fn one_sided(side: &Record, decision: Decision, threshold: f64, run: &RunInfo) -> Record {
    let verdict = Verdict {
        metric: None,
        test: TEST.into(),
        baseline: None,
        against: None,
        ratio: None,
        ci95: None,
        higher_is_better: None,
        threshold,
        decision,
    };
    let note = format!("series {}: present on one side only", decision.name());
    record(side, verdict, note, run)
}

fn record(series: &Record, verdict: Verdict, note: String, run: &RunInfo) -> Record {
    Record {
        schema: SCHEMA,
        bench: series.bench.clone(),
        kind: Kind::Verdict,
        run: run.clone(),
        variant: series.variant.clone(),
        metrics: BTreeMap::new(),
        note: Some(note),
        plugin: series.plugin.clone(),
        cell: None,
        checks: vec![],
        failure: None,
        verdict: Some(verdict),
    }
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
