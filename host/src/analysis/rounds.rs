//! Interleaved runs: every round runs every cell once, each in its own child process, so drift in machine
//! speed hits all arms alike. This module combines a cell's rounds into one record, and compares the arms of a
//! rig round by round (paired). Pure.
//!
//! Why rounds: run-to-run variance dwarfs the variance inside one process (measured on the project's 2-core VM
//! before it started: Criterion 0.8's in-process CI was 0.2-0.7% wide while its estimate moved 1.2-2.4% between
//! runs, and 39 of 80 of its A/A comparisons alarmed), so intervals drawn across separate processes are the
//! honest ones.

use std::collections::BTreeMap;

use crate::analysis::decision;
use crate::stats;
use benchhost_record::{Conditions, Kind, MetricValue, Record, RunInfo};
use benchhost_record::{Decision, Method, Verdict};

/// One record from the per-round records of a cell: a failed round makes the whole cell a failure (the first
/// one, named); otherwise each metric is the mean of the rounds' estimates with a Student-t CI95 over rounds,
/// and `n` counts rounds.
pub fn combine(mut rounds: Vec<Record>) -> Record {
    let total = rounds.len();
    if let Some(i) = rounds.iter().position(|r| r.kind == Kind::Failure) {
        let mut failed = rounds.swap_remove(i);
        if let Some(f) = failed.failure.as_mut() {
            f.message = format!("round {} of {total}: {}", i + 1, f.message);
        }
        return failed;
    }
    let mut combined = rounds.last().cloned().expect("at least one round");
    let mut stats = BTreeMap::new();
    for (name, metric) in combined.metrics.iter_mut() {
        let values: Vec<f64> = rounds.iter().filter_map(|r| r.metrics.get(name).map(|m| m.value)).collect();
        let Some(summary) = crate::stats::summarize(&values) else { continue };
        *metric = MetricValue {
            value: summary.mean,
            ci95: stats::metric_mean_ci95(&values),
            n: Some(values.len() as u64),
            ..metric.clone()
        };
        stats.insert(name.clone(), summary);
    }
    if let Some(cell) = combined.cell.as_mut() {
        cell.rounds = Some(total as u32);
        cell.samples = rounds.iter().filter_map(|r| r.cell.as_ref().map(|c| c.samples)).sum();
        cell.wall_ms = rounds.iter().filter_map(|r| r.cell.as_ref().map(|c| c.wall_ms)).sum();
        cell.sampled_ns = rounds.iter().map(|r| r.cell.as_ref().and_then(|c| c.sampled_ns)).sum();
        cell.planned_ns = rounds.iter().map(|r| r.cell.as_ref().and_then(|c| c.planned_ns)).sum();
        cell.peak_rss_kib = rounds.iter().filter_map(|r| r.cell.as_ref().and_then(|c| c.peak_rss_kib)).max();
        cell.page_faults = rounds.iter().map(|r| r.cell.as_ref().and_then(|c| c.page_faults)).sum();
        // The worst steal of any round: a record is as doubtful as its most-stolen round.
        let worst = |of: fn(&Conditions) -> Option<f64>| {
            rounds.iter().filter_map(|r| of(r.cell.as_ref()?.conditions.as_ref()?)).reduce(f64::max)
        };
        if let Some(conditions) = cell.conditions.as_mut() {
            conditions.steal_percent = worst(|c| c.steal_percent);
            conditions.idle_arm_cpu_percent = worst(|c| c.idle_arm_cpu_percent);
        }
        cell.stats = stats;
    }
    combined
}

/// What every paired verdict's processes draw anew (`verdict.method.randomised`): the child loads each library
/// from a private copy (`plugin/library.rs`), so where its code lands in physical memory, and so in the
/// physically indexed caches, differs from process to process instead of favouring one file in all of them.
/// Alternating duels also swap which arm goes first, and rounds reverse the order of the cells.
pub const RANDOMISED: &str = "each library loaded from a private copy per process (its physical pages drawn anew)";

/// Paired verdicts of arms against their references (`--interleave`), per metric, from the ratio of their
/// estimates in each round (a Student-t CI95 of the log ratios). `pairs` holds (the arm's rounds, its reference's
/// rounds), all measurements.
pub fn paired(pairs: &[(&[Record], &[Record])], threshold: decision::Threshold<'_>, run: &RunInfo) -> Vec<Record> {
    let test = "paired: ratio per interleaved round against the reference arm; Student-t CI95 of the log ratios";
    let mut verdicts = Vec::new();
    for (rounds, base) in pairs {
        let Some(first) = base.first() else { continue };
        verdicts.extend(pair(rounds, base, first.variant.clone(), test, threshold, run));
    }
    verdicts
}

/// Paired verdicts of each cell against its twin on another build (`run --against DIR`): `pairs` holds
/// (this build's rounds, the other build's rounds) per cell; `label` names the other build.
pub fn against(
    pairs: &[(&[Record], &[Record])],
    label: &str,
    threshold: decision::Threshold<'_>,
    run: &RunInfo,
) -> Vec<Record> {
    let test = "paired: ratio per interleaved round against the other build; Student-t CI95 of the log ratios";
    let other = BTreeMap::from([("build".to_string(), serde_json::Value::from(label))]);
    pairs.iter().flat_map(|(new, old)| pair(new, old, other.clone(), test, threshold, run)).collect()
}

/// One verdict per metric of `rounds` against `base`, round by round.
fn pair(
    rounds: &[Record],
    base: &[Record],
    against: BTreeMap<String, serde_json::Value>,
    test: &str,
    threshold: decision::Threshold<'_>,
    run: &RunInfo,
) -> Vec<Record> {
    let Some(first) = rounds.first() else { return vec![] };
    let mut verdicts = Vec::new();
    for (name, metric) in &first.metrics {
        let logs: Vec<f64> = rounds
            .iter()
            .zip(base)
            .filter_map(|(a, b)| Some((a.metrics.get(name)?.value / b.metrics.get(name)?.value).ln()))
            .filter(|l| l.is_finite())
            .collect();
        let threshold = threshold(first, name);
        let mut verdict = Verdict {
            metric: Some(name.clone()),
            test: test.into(),
            baseline: None,
            against: Some(against.clone()),
            ratio: None,
            ci95: None,
            higher_is_better: Some(metric.higher_is_better),
            threshold,
            decision: Decision::Undefined,
            detectable: None,
            reason: None,
            method: Some(Method {
                mode: "rounds".into(),
                processes: logs.len() as u64,
                pairs_per_process: 1,
                rule: RULE.into(),
                libraries: libraries(first, &base[0]),
                randomised: Some(crate::analysis::rounds::RANDOMISED.into()),
                fallback: None,
                log_ratios: logs.clone(),
                layouts: None,
            }),
            functions: Vec::new(),
            functions_explain: None,
            accepted: None,
            between_runs: None,
        };
        let label: Vec<String> = against.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let note = match crate::stats::summarize(&logs) {
            // Zero values on either side give no ratio: say so rather than write NaN, which no reader accepts.
            None => {
                let why = "no round gave a finite ratio (a value of 0 on one side or both)".to_string();
                verdict.reason = Some(why.clone());
                format!("{name} undefined: {why}")
            }
            Some(summary) => {
                let ratio = summary.mean.exp();
                let ci = stats::mean_ci95(&logs).map(|[lo, hi]| [lo.exp(), hi.exp()]);
                verdict.decision = match ci {
                    Some(ci) => decision::decide(ci, metric.higher_is_better, threshold),
                    None => Decision::Inconclusive,
                };
                (verdict.ratio, verdict.ci95) = (Some(ratio), ci);
                let [lo, hi] = ci.unwrap_or([f64::NAN; 2]);
                format!(
                    "{name} {}: x{ratio:.4} [{lo:.4}, {hi:.4}] against {} over {} interleaved rounds, threshold ±{:.1}%",
                    verdict.decision.name(),
                    label.join(" "),
                    logs.len(),
                    threshold * 100.0
                )
            }
        };
        verdicts.push(Record::verdict_on(
            first,
            decision::with_detectable(verdict, decision::Rule::Interval),
            note,
            run.clone(),
        ));
    }
    verdicts
}

/// The decision rule of every verdict (`decision::decide`).
const RULE: &str = "the whole CI95 of the ratio beyond +threshold (regressed) or below -threshold (improved); within +-threshold: no_change";

/// Both libraries' SHA-256 when `new` and `old` ran from two different files (`--against`), else none.
pub(crate) fn libraries(new: &Record, old: &Record) -> Vec<String> {
    let sha = |r: &Record| r.plugin.as_ref().and_then(|p| p.sha256.clone());
    match (sha(new), sha(old)) {
        (Some(a), Some(b)) if a != b => vec![a, b],
        _ => vec![],
    }
}

#[cfg(test)]
#[path = "rounds_tests.rs"]
mod tests;
