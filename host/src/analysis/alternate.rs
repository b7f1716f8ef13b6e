//! Verdicts of sample-paired comparisons (`--pairing alternate`). Inside a process, each pair of samples gives
//! one log ratio (the arm over its reference, same iterations); the process's estimate is their trimmed mean.
//! The verdict is taken over the processes, a Student-t interval of their estimates, so what differs between
//! processes (code layout, where the allocator put things, a slow phase that lasted a whole process) is in
//! the interval, not hidden by the thousands of pairs inside each. Pure.

use std::collections::BTreeMap;

use benchhost_plugin_api::{Descriptor, Source};

use crate::analysis::compare;
use crate::stats;
use benchhost_record::{Decision, Method, Record, RunInfo, Verdict};

/// What one process of a duel measured: its pairs (iterations, side 0's ns, side 1's ns) and the counters of
/// both arms' outcomes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Process {
    /// Each pair: iterations per sample and the two samples' nanoseconds.
    pub pairs: Vec<(u64, [u64; 2])>,
    /// Each side's teardown counters.
    pub counters: [BTreeMap<String, u64>; 2],
}

impl Process {
    /// The log ratios of time per iteration, side 1 over side 0, one per pair with time on both sides.
    fn log_ratios(&self) -> Vec<f64> {
        self.pairs
            .iter()
            .filter(|(_, [a, b])| *a > 0 && *b > 0)
            .map(|(_, [a, b])| (*b as f64 / *a as f64).ln())
            .collect()
    }

    /// The process's estimate of the log ratio: the mean of its pairs' log ratios after the tenth at each end
    /// is cut. A pair one of whose samples a preemption hit reads 10-50% off; a plain mean would carry it,
    /// a median would throw away most of what the other pairs know (a trimmed mean keeps ~95% of the mean's
    /// efficiency on clean data).
    pub fn estimate(&self) -> Option<f64> {
        trimmed_mean(&self.log_ratios(), TRIM)
    }
}

/// Fraction cut at each end of a process's log ratios.
pub const TRIM: f64 = 0.1;

/// The mean of `values` without the `trim` fraction at each end; `None` when empty.
pub fn trimmed_mean(values: &[f64], trim: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let cut = ((sorted.len() as f64 * trim).floor() as usize).min((sorted.len() - 1) / 2);
    let kept = &sorted[cut..sorted.len() - cut];
    Some(kept.iter().sum::<f64>() / kept.len() as f64)
}

/// The decision rule of sample-paired verdicts (see [`decide`]).
pub const RULE: &str = "regressed (improved): significant at 5% (the CI95 of the ratio excludes 1) and the estimate beyond \
    +threshold (-threshold); no_change: the CI90 within +-threshold (two one-sided tests at 5%); otherwise inconclusive";

/// Decides from the estimate, its CI95 and its CI90 (ratios): a change is a change when it is significant and
/// its estimate is beyond the threshold; no change when equivalence within the threshold is shown. Tango's
/// rule (|z| past its cut and the estimate past the threshold) needs ~4.6x fewer samples than asking the whole
/// CI95 to clear the threshold, at the same false-alarm rate when the noise is as small as pairing makes it.
pub fn decide(ratio: f64, ci95: [f64; 2], ci90: [f64; 2], higher_is_better: bool, threshold: f64) -> Decision {
    let worse = |r: f64| if higher_is_better { 1.0 / r } else { r };
    let flip = |[lo, hi]: [f64; 2]| if higher_is_better { [1.0 / hi, 1.0 / lo] } else { [lo, hi] };
    let (estimate, [lo95, hi95], [lo90, hi90]) = (worse(ratio), flip(ci95), flip(ci90));
    let (up, down) = (1.0 + threshold, 1.0 / (1.0 + threshold));
    if lo95 > 1.0 && estimate > up {
        Decision::Regressed
    } else if hi95 < 1.0 && estimate < down {
        Decision::Improved
    } else if lo90 >= down && hi90 <= up {
        Decision::NoChange
    } else {
        Decision::Inconclusive
    }
}

/// One comparison's inputs: the arm, its reference, what names the reference in the verdict, and the
/// processes they shared.
pub struct Paired<'a> {
    /// The arm compared (its record gives the series).
    pub arm: &'a Record,
    /// The reference arm.
    pub reference: &'a Record,
    /// What the verdict's `against` says: the reference arm's parameters, or the other build.
    pub against: BTreeMap<String, serde_json::Value>,
    /// The processes both measured in.
    pub processes: &'a [Process],
}

/// One verdict per metric of the rig that pairs can judge: times per iteration, rates over them (scaled by the
/// ratio of their counters) and counters.
pub fn verdicts(
    paired: &Paired<'_>,
    descriptor: &Descriptor,
    threshold: compare::Threshold<'_>,
    run: &RunInfo,
) -> Vec<Record> {
    let pairs_per_process = paired.processes.iter().map(|p| p.pairs.len() as u64).max().unwrap_or(0);
    let test = "paired: samples alternating in one process, each process's trimmed mean log ratio; Student-t \
        intervals over processes";
    let mut verdicts = Vec::new();
    for metric in &descriptor.metrics {
        // Per process: the log ratio of this metric (side 1 over side 0).
        let counter_ratio = |p: &Process, c: &str| match (p.counters[0].get(c), p.counters[1].get(c)) {
            (Some(&a), Some(&b)) if a > 0 && b > 0 => Some((b as f64 / a as f64).ln()),
            _ => None,
        };
        let per_process: Vec<f64> = paired
            .processes
            .iter()
            .filter_map(|p| match &metric.source {
                Source::IterTime => p.estimate(),
                Source::Rate { counter } => Some(counter_ratio(p, counter)? - p.estimate()?),
                Source::Counter { counter } => counter_ratio(p, counter),
                Source::Observed => None,
            })
            .collect();
        if per_process.is_empty() {
            continue;
        }
        let threshold = threshold(paired.arm, &metric.name);
        let mut verdict = Verdict {
            metric: Some(metric.name.clone()),
            test: test.into(),
            baseline: None,
            against: Some(paired.against.clone()),
            ratio: None,
            ci95: None,
            higher_is_better: Some(metric.higher_is_better),
            threshold,
            decision: Decision::Inconclusive,
            reason: None,
            method: Some(Method {
                mode: "alternate".into(),
                processes: per_process.len() as u64,
                pairs_per_process,
                rule: RULE.into(),
                libraries: libraries(paired.arm, paired.reference),
            }),
        };
        let label: Vec<String> = paired.against.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let summary = stats::summarize(&per_process).expect("not empty");
        let ratio = summary.mean.exp();
        let note = match intervals(&per_process) {
            Some((ci95, ci90)) => {
                verdict.decision = decide(ratio, ci95, ci90, metric.higher_is_better, threshold);
                (verdict.ratio, verdict.ci95) = (Some(ratio), Some(ci95));
                format!(
                    "{} {}: x{ratio:.4} [{:.4}, {:.4}] against {} over {} processes of {pairs_per_process} alternating \
                     pairs, threshold ±{:.1}%",
                    metric.name,
                    verdict.decision.name(),
                    ci95[0],
                    ci95[1],
                    label.join(" "),
                    per_process.len(),
                    threshold * 100.0
                )
            }
            None => {
                verdict.ratio = Some(ratio);
                let why = "one process gives no interval across processes: run at least two (--rounds)".to_string();
                verdict.reason = Some(why.clone());
                format!("{} inconclusive: x{ratio:.4}; {why}", metric.name)
            }
        };
        verdicts.push(Record::verdict_on(paired.arm, verdict, note, run.clone()));
    }
    verdicts
}

/// The CI95 and CI90 of the mean of the per-process log ratios, as ratios; `None` below two processes.
fn intervals(logs: &[f64]) -> Option<([f64; 2], [f64; 2])> {
    let s = stats::summarize(logs)?;
    if s.n < 2 {
        return None;
    }
    let se = s.stddev / (s.n as f64).sqrt();
    let ci = |t: f64| [(s.mean - t * se).exp(), (s.mean + t * se).exp()];
    Some((ci(stats::t_975(s.n - 1)), ci(stats::t_95(s.n - 1))))
}

/// Both libraries' SHA-256 when the arms ran from two different files (`--against`), else none.
fn libraries(arm: &Record, reference: &Record) -> Vec<String> {
    let sha = |r: &Record| r.plugin.as_ref().and_then(|p| p.sha256.clone());
    match (sha(arm), sha(reference)) {
        (Some(a), Some(b)) if a != b => vec![a, b],
        _ => vec![],
    }
}

#[cfg(test)]
#[path = "alternate_tests.rs"]
mod tests;
