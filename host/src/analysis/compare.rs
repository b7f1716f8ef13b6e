//! Compares two sets of records series by series and emits one `verdict` record per series and metric. Pure.
//!
//! A series is `bench` + `variant`; each side contributes its newest measurement of it. Per metric the change
//! is the ratio new / old. Its CI95 counts both records' own intervals (log-normal delta method: each CI95
//! half-width is taken as 1.96 standard errors of the log estimate) and how far two runs of the series differ
//! ([`between_runs`]): the wider of the two. Where that spread is not known (a series with few runs on this
//! machine) or the runs compared show the machine as its history does not, the verdict is `inconclusive`,
//! without an interval. An exact count (no
//! interval on either side) is compared as it is. With the metric's direction of goodness and a noise threshold
//! `t`, the decision is:
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

use crate::analysis::between_runs::{self, Spreads};
use crate::analysis::decision::{self, Threshold, decide, ratio_ci, zero_counts};
use crate::analysis::instructions;
use benchhost_record::{
    BaselineRef, BetweenRuns, Decision, Kind, MetricValue, Record, RunInfo, SeriesKey, Verdict, series,
};

/// The test named in every verdict.
pub const TEST: &str = "ratio of estimates; CI95 the wider of both records' CI95 (log-normal delta method) and the \
    spread between two runs of the series (Student-t of its estimate)";

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

/// Verdict records for `new` against `old`, with each series' spread between runs from `spreads`, stamped with
/// `run` (the judging invocation).
pub fn compare(
    old: &[Record],
    new: &[Record],
    threshold: Threshold<'_>,
    spreads: &Spreads,
    run: &RunInfo,
) -> Vec<Record> {
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
                let sides = Sides { before, after, old: base, new: metric };
                verdicts.push(judge(&sides, name, threshold(after, name), spreads, run));
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

/// Whether either value was measured (has an interval), not an exact count: only then do two runs differ.
pub fn measured(old: &MetricValue, new: &MetricValue) -> bool {
    old.ci95.is_some() || new.ci95.is_some()
}

/// The CI95 of new / old across two runs: an exact count's as it is (`spread` `None`); a measured value's the
/// wider of both records' own interval ([`ratio_ci`]) and that of how far two runs of the series differ (its
/// Student-t over the spread's degrees of freedom); `None` when that is not known or the runs are unsettled.
pub fn unpaired_interval(old: &MetricValue, new: &MetricValue, spread: Option<&BetweenRuns>) -> Option<[f64; 2]> {
    let (ratio, own) = ratio_ci(old, new);
    let Some(spread) = spread else { return Some(own) };
    if spread.unsettled.is_some() {
        return None;
    }
    let between = crate::stats::t_975(between_runs::degrees_of_freedom(spread.runs)) * spread.sd?;
    let half = ((own[1] / own[0]).ln().max(0.0) / 2.0).max(between);
    Some([ratio * (-half).exp(), ratio * half.exp()])
}

/// The two records of one series compared, and their values of one metric.
struct Sides<'a> {
    before: &'a Record,
    after: &'a Record,
    old: &'a MetricValue,
    new: &'a MetricValue,
}

fn judge(sides: &Sides<'_>, name: &str, threshold: f64, spreads: &Spreads, run: &RunInfo) -> Record {
    let Sides { before, after, old, new } = *sides;
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
        between_runs: None,
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
    if name == benchhost_record::INSTRUCTIONS {
        verdict.decision = decide(ci95, new.higher_is_better, threshold);
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
    let spread = measured(old, new).then(|| spreads.get(after, name, old, new));
    let ci95 = unpaired_interval(old, new, spread.as_ref());
    verdict.ratio = Some(ratio);
    let note = match ci95 {
        Some(ci95) => {
            verdict.decision = decide(ci95, new.higher_is_better, threshold);
            verdict.ci95 = Some(ci95);
            format!(
                "{name} {}: x{ratio:.4} [{:.4}, {:.4}] {against}, threshold ±{:.1}%{}",
                verdict.decision.name(),
                ci95[0],
                ci95[1],
                threshold * 100.0,
                spread.as_ref().map(spread_said).unwrap_or_default()
            )
        }
        None => {
            verdict.decision = Decision::Inconclusive;
            format!("{name} inconclusive: x{ratio:.4} {against}; {}", unknown_spread(spread.as_ref()))
        }
    };
    verdict.between_runs = spread;
    Record::verdict_on(after, decision::with_detectable(verdict, decision::Rule::Interval), note, run.clone())
}

/// Where the spread between runs in an interval came from, for a verdict's note.
fn spread_said(spread: &BetweenRuns) -> String {
    let sd = 100.0 * spread.sd.unwrap_or(0.0);
    format!("; two runs differ by {sd:.2}% (sd; the series' last {} runs here)", spread.runs)
}

/// Why a comparison of two runs cannot decide (the spread between runs not known, or the runs unsettled), and
/// what decides instead.
fn unknown_spread(spread: Option<&BetweenRuns>) -> String {
    let why = match spread.and_then(|s| s.unsettled.as_deref()) {
        Some(unsettled) => format!("{unsettled}, so how far two runs differ now is not known"),
        None => format!(
            "how far two runs of this series differ is not known here ({} earlier runs on this machine, {} \
             needed), and its records' own intervals hold one run's spread only",
            spread.map_or(0, |s| s.runs),
            between_runs::MIN_RUNS
        ),
    };
    format!("{why}: pair the builds with `run --against` (or `--interleave`) to decide")
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
        between_runs: None,
    };
    Record::verdict_on(side, verdict, note, run.clone())
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
