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
//!
//! The newest record of a series decides, failures included: a series whose newest record on the new side is a
//! `failure` is `failed` (which fails every gate), never judged by an older good number. Where no ratio can be
//! formed (a value of zero on either side, a baseline whose newest record failed) the decision is
//! `undefined`, with the reason; but a count (a rig's counter) of 0 on both sides did not change: `no_change`.

use std::collections::BTreeMap;

use crate::analysis::decision::{self, Threshold, decide};
use crate::analysis::instructions;
use crate::stats::Z_95;
use benchhost_record::{BaselineRef, Decision, Kind, MetricValue, Record, RunInfo, SeriesKey, Verdict, series};

/// The test named in every verdict.
pub const TEST: &str = "ratio of estimates; CI95 from both records' CI95 (log-normal delta method)";

/// The newest measurement or failure of every series in `records` (a later line wins a tie). A failure is
/// kept as the newest record: a series whose last run failed must never be reported with an older number.
pub fn latest(records: &[Record]) -> BTreeMap<SeriesKey, &Record> {
    let mut newest: BTreeMap<SeriesKey, &Record> = BTreeMap::new();
    for record in records.iter().filter(|r| matches!(r.kind, Kind::Measurement | Kind::Failure)) {
        let slot = newest.entry(series(record)).or_insert(record);
        if record.run.ts_ms >= slot.run.ts_ms {
            *slot = record;
        }
    }
    newest
}

/// Verdict records for `new` against `old`, stamped with `run` (the judging invocation).
pub fn compare(old: &[Record], new: &[Record], threshold: Threshold<'_>, run: &RunInfo) -> Vec<Record> {
    let (old, new) = (latest(old), latest(new));
    let mut verdicts = Vec::new();
    for (key, after) in &new {
        if after.kind == Kind::Failure {
            verdicts.push(one_sided(after, Decision::Failed, threshold(after, ""), run));
            continue;
        }
        let Some(before) = old.get(key) else {
            verdicts.push(one_sided(after, Decision::Added, threshold(after, ""), run));
            continue;
        };
        if before.kind == Kind::Failure {
            verdicts.push(one_sided(after, Decision::Undefined, threshold(after, ""), run));
            continue;
        }
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

/// The series whose newest records in `old` and `new` ran on different CPUs, counted per pair of CPUs
/// (old, new): a ratio across machines holds the machine's change beside the code's.
pub fn other_machines(old: &[Record], new: &[Record]) -> BTreeMap<(String, String), usize> {
    let (old, new) = (latest(old), latest(new));
    let mut changes = BTreeMap::new();
    for (key, after) in &new {
        if let Some(before) = old.get(key).filter(|b| b.run.cpu != after.run.cpu) {
            *changes.entry((before.run.cpu.clone(), after.run.cpu.clone())).or_insert(0) += 1;
        }
    }
    changes
}

/// new / old with its CI95: each side's CI95 half-width is taken as 1.96 standard errors of its log estimate
/// (log-normal delta method); a side without a CI counts as exact. Two counts of zero are equal: 1, exactly.
pub fn ratio_ci(old: &MetricValue, new: &MetricValue) -> (f64, [f64; 2]) {
    if zero_counts(old, new) {
        return (1.0, [1.0, 1.0]);
    }
    let ratio = new.value / old.value;
    let rel_se = |m: &MetricValue| m.ci95.map_or(0.0, |[lo, hi]| (hi - lo) / 2.0 / m.value.abs() / Z_95);
    let se = (rel_se(old).powi(2) + rel_se(new).powi(2)).sqrt();
    (ratio, [ratio * (-Z_95 * se).exp(), ratio * (Z_95 * se).exp()])
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
    let baseline =
        BaselineRef { run_id: before.run.id.clone(), commit: before.run.commit.clone(), ts_ms: before.run.ts_ms };
    let against = format!(
        "against run {} ({})",
        baseline.run_id.as_deref().unwrap_or("?"),
        baseline.commit.as_deref().unwrap_or("no commit")
    );
    let mut verdict = Verdict {
        metric: Some(name.to_string()),
        test: TEST.into(),
        baseline: Some(baseline),
        against: None,
        ratio: None,
        ci95: None,
        higher_is_better: Some(new.higher_is_better),
        threshold,
        decision: Decision::Undefined,
        detectable: None,
        reason: None,
        method: None,
        functions: Vec::new(),
        functions_explain: None,
        accepted: None,
    };
    let (ratio, ci95) = ratio_ci(old, new);
    if let Some(reason) = undefined_ratio(old, new, ratio, ci95) {
        let note = format!("{name} undefined: {reason} ({against})");
        verdict.reason = Some(reason);
        return Record::verdict_on(
            after,
            decision::with_detectable(verdict, decision::Rule::Interval),
            note,
            run.clone(),
        );
    }
    verdict.decision = decide(ci95, new.higher_is_better, threshold);
    if name == benchhost_record::INSTRUCTIONS {
        // A count has no interval: the figures themselves say what changed.
        verdict.test = instructions::TEST.into();
        let mut note = instructions::note(verdict.decision, old.value, new.value, &against, threshold);
        (verdict.ratio, verdict.ci95) = (Some(ratio), Some(ci95));
        instructions::attach_functions(&mut verdict, &mut note, before, after);
        return Record::verdict_on(
            after,
            decision::with_detectable(verdict, decision::Rule::Interval),
            note,
            run.clone(),
        );
    }
    let note = format!(
        "{name} {}: x{ratio:.4} [{:.4}, {:.4}] {against}, threshold ±{:.1}%",
        verdict.decision.name(),
        ci95[0],
        ci95[1],
        threshold * 100.0
    );
    (verdict.ratio, verdict.ci95) = (Some(ratio), Some(ci95));
    Record::verdict_on(after, decision::with_detectable(verdict, decision::Rule::Interval), note, run.clone())
}

/// Why new / old cannot be judged, if it cannot: a ratio needs two non-zero finite values (a miss rate of 0%
/// on both sides has no ratio, and `NaN` must never reach a record, whose reader would reject it).
pub fn undefined_ratio(old: &MetricValue, new: &MetricValue, ratio: f64, ci95: [f64; 2]) -> Option<String> {
    let zero = |m: &MetricValue| m.value == 0.0;
    match (zero(old), zero(new)) {
        _ if zero_counts(old, new) => None,
        (true, true) => Some("both values are 0: a ratio of zero values is undefined".into()),
        (true, false) => Some(format!("the baseline's value is 0 and the new one {}: no finite ratio", new.value)),
        (false, true) => Some(format!("the new value is 0 (the baseline's {}): no ratio to judge", old.value)),
        _ if !(ratio.is_finite() && ci95.iter().all(|b| b.is_finite())) => {
            Some(format!("the values {} and {} give no finite ratio", old.value, new.value))
        }
        _ => None,
    }
}

/// Both are counts (a rig's counter: exact, so neither a CI nor a number of samples) and both are 0: nothing
/// changed (a querier that pruned no file before and after), where a ratio of two measured zeros is undefined.
fn zero_counts(old: &MetricValue, new: &MetricValue) -> bool {
    let zero_count = |m: &MetricValue| m.value == 0.0 && m.ci95.is_none() && m.n.is_none();
    zero_count(old) && zero_count(new)
}

fn one_sided(side: &Record, decision: Decision, threshold: f64, run: &RunInfo) -> Record {
    let (reason, note) = match decision {
        Decision::Failed => {
            let why = side.failure.as_ref().map_or("no reason given".into(), |f| format!("{}: {}", f.cause, f.message));
            (Some(why.clone()), format!("series failed in its newest run ({why})"))
        }
        Decision::Undefined => {
            let why = "the baseline's newest record of this series is a failure: there is no number to compare with";
            (Some(why.to_string()), format!("series undefined: {why}"))
        }
        _ => (None, format!("series {}: present on one side only", decision.name())),
    };
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
        reason,
        detectable: None,
        method: None,
        functions: Vec::new(),
        functions_explain: None,
        accepted: None,
    };
    Record::verdict_on(side, verdict, note, run.clone())
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
