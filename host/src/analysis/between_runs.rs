//! The spread between runs of one series, which a comparison of two runs' records must count (the change table
//! after `run`, `compare`, `run --baseline`, `report`'s "since the previous run"). A record's own interval holds
//! the spread of its run's samples only, and two runs minutes apart differ by more: 20 back-to-back runs of wal
//! (`compression=zstd rows=1000`), each ±0.1% within itself, moved 0.42% (median) and up to 1.23% from run to
//! run, and the CI95 of 38 of their 40 A/A ratios excluded 1 (issue 83). Pure.
//!
//! The spread comes from **the series' own history on the machine of the run judged**: its records on the same
//! host and CPU (a series is measured one way: `cell.method` is in its key), not run in doubtful conditions, in
//! the order they ran, from [`MIN_RUNS`] runs on: the root mean square of the log differences of successive
//! runs (what the ratio of two runs of the same code spreads by), and never less than the largest of those
//! differences over its Student-t quantile, so that the interval reaches at least as far as two successive runs
//! have ever been apart. Runs on a 2-core VM have heavy tails (a phase of runs 20-30% slow): a normal model read
//! from a few runs let through 1-3 false alarms in 40 A/A comparisons; the largest of n exchangeable
//! differences is passed by the next with a chance of 1 in n + 1, under 5% from 19 differences on, whatever
//! their distribution. A change of the code inside the history widens the interval while it is there.
//!
//! That bound holds while the machine stays as the history found it, and a VM's does not always: a phase of
//! runs up to 55% slow came on after 26 quiet runs of wal (`results/unpaired-proof-2.json`). So a comparison
//! is **unsettled**, `inconclusive` without an interval, when either run shows the machine in a state its
//! history does not: the new run's own interval wider than that of every run before it (a disturbed run: a
//! change of the code moves a run's samples together, a busy neighbour spreads them), or the baseline run
//! further from the history's median than two successive runs have ever moved (a run of a phase: what came
//! after it is compared with the phase, not with the code). Neither says which runs will be slow. Made on that
//! set (its 3 alarms all unsettled), they were then run on a set of their own (`results/unpaired-proof-3.json`:
//! 0 alarms in 240 A/A comparisons idle and under load, 0-3 of each cell's 20-21 with a history unsettled).
//!
//! `benchhost calibrate`'s rounds are not a source: ten rounds back to back read wal's spread as 1.06% while its
//! runs moved 2.47% (median) from one to the next, and 8 of 40 A/A comparisons of wal on them were false alarms
//! at ±3% (`results/unpaired-proof-2.json`, "calibration"). Without history a comparison is `inconclusive`:
//! pairing the builds (`run --against`, `--interleave`) decides instead.

use std::collections::HashMap;

use benchhost_record::{BetweenRuns, Kind, MetricValue, Record, SeriesKey, series};

use crate::analysis::calibrate;

/// The fewest earlier runs of a series (on this machine, in good conditions) its history must hold to give
/// the spread: 19 differences, the fewest whose largest a next one passes under 5% of the time.
pub const MIN_RUNS: usize = 20;

/// The newest runs of a series read for its spread: enough for a steady estimate, few enough that it follows
/// the machine as it is now.
pub const KEPT_RUNS: usize = 30;

/// Where a history holds: a series on one machine (host and CPU).
type Key = (SeriesKey, String, String);

/// The earlier runs of each series on each machine, in the order they ran, each once: what says how far two
/// runs of it differ.
#[derive(Debug, Default)]
pub struct Spreads {
    by_series: HashMap<Key, Vec<Record>>,
}

impl Spreads {
    /// No history for any series: every comparison of two runs is `inconclusive`.
    #[cfg(test)]
    pub fn none() -> Spreads {
        Spreads::default()
    }

    /// The histories of the series in `history` (records of any kind, in any order, a record given twice
    /// counted once), each on the machine it ran on.
    pub fn new(history: &[Record]) -> Spreads {
        let mut runs: HashMap<Key, Vec<&Record>> = HashMap::new();
        let usable = |r: &&Record| {
            r.kind == Kind::Measurement
                && !r.variant.contains_key(calibrate::MARK)
                && r.cell.as_ref().and_then(|c| c.conditions.as_ref()).is_none_or(|c| c.doubts().is_empty())
        };
        for record in history.iter().filter(usable) {
            let key = (series(record), record.run.host.clone(), record.run.cpu.clone());
            runs.entry(key).or_default().push(record);
        }
        let mut by_series = HashMap::new();
        for (key, mut records) in runs {
            records.sort_by(|a, b| (a.run.ts_ms, &a.run.id).cmp(&(b.run.ts_ms, &b.run.id)));
            records.dedup_by(|a, b| (a.run.ts_ms, &a.run.id) == (b.run.ts_ms, &b.run.id));
            // The newest that `get` can read (one more, for the run judged when it is among them), not all: a
            // report hands over every run of a year's history.
            let kept = &records[records.len().saturating_sub(KEPT_RUNS + 1)..];
            by_series.insert(key, kept.iter().map(|r| (*r).clone()).collect());
        }
        Spreads { by_series }
    }

    /// How far two runs of `metric` differ, for the comparison of `old` with `new` (`after`'s value): from the
    /// newest [`KEPT_RUNS`] runs of `after`'s series on the machine it ran on, `after` itself left out; origin
    /// `none`, without `sd`, under [`MIN_RUNS`] of them; `unsettled` when either run shows the machine as its
    /// history does not.
    pub fn get(&self, after: &Record, metric: &str, old: &MetricValue, new: &MetricValue) -> BetweenRuns {
        let key = (series(after), after.run.host.clone(), after.run.cpu.clone());
        let earlier = self.by_series.get(&key).map_or(&[][..], Vec::as_slice);
        let not_after = |r: &&Record| (r.run.ts_ms, &r.run.id) != (after.run.ts_ms, &after.run.id);
        let earlier: Vec<&Record> = earlier.iter().filter(not_after).collect();
        let runs: Vec<(f64, f64)> = earlier[earlier.len().saturating_sub(KEPT_RUNS)..]
            .iter()
            .filter_map(|r| r.metrics.get(metric))
            .filter_map(|m| Some((m.value.ln(), own_spread(m)?)))
            .collect();
        let logs: Vec<f64> = runs.iter().map(|(log, _)| *log).collect();
        let Some(mut spread) = of_runs(&logs) else {
            return BetweenRuns { sd: None, origin: NONE.into(), runs: logs.len() as u64, unsettled: None };
        };
        spread.unsettled = unsettled(&runs, old, new);
        spread
    }
}

/// A record's own spread: the half-width of its CI95 on the log scale; `None` for an exact count or a value
/// that has no logarithm.
fn own_spread(m: &MetricValue) -> Option<f64> {
    let [lo, hi] = m.ci95?;
    (m.value > 0.0 && lo > 0.0 && hi >= lo).then(|| (hi / lo).ln() / 2.0)
}

/// Why the runs compared (`old`, `new`) show the machine as its history (`runs`: log values and own spreads,
/// in the order they ran) does not, if either does: the new run spread wider within itself than any before
/// it, or the baseline run further from the history's median than two successive runs have moved.
fn unsettled(runs: &[(f64, f64)], old: &MetricValue, new: &MetricValue) -> Option<String> {
    let widest = runs.iter().fold(0.0f64, |m, (_, own)| m.max(*own));
    if let Some(own) = own_spread(new).filter(|own| *own > widest) {
        return Some(format!(
            "the new run's own interval (±{:.1}%) is wider than that of each of the {} runs before it (at most \
             ±{:.1}%): a disturbed run",
            pct(own),
            runs.len(),
            pct(widest)
        ));
    }
    let mut logs: Vec<f64> = runs.iter().map(|(log, _)| *log).collect();
    let largest = logs.windows(2).fold(0.0f64, |m, w| m.max((w[1] - w[0]).abs()));
    logs.sort_by(f64::total_cmp);
    let median = (logs[(logs.len() - 1) / 2] + logs[logs.len() / 2]) / 2.0;
    let off = old.value.ln() - median;
    (old.value > 0.0 && off.abs() > largest).then(|| {
        format!(
            "the baseline run is {:+.1}% off the median of the {} runs here, further than two successive runs \
             have moved (at most {:.1}%): a run of a phase the machine does not stay in",
            100.0 * off.exp_m1(),
            runs.len(),
            pct(largest)
        )
    })
}

/// A spread on the log scale as the percentage it is about.
fn pct(log: f64) -> f64 {
    100.0 * log.exp_m1()
}

/// The spread of the log ratio of two successive runs from a series' log values in the order they ran: the
/// root mean square of their successive differences, at least the largest of them over its Student-t quantile;
/// `None` under [`MIN_RUNS`] values.
pub fn of_runs(logs: &[f64]) -> Option<BetweenRuns> {
    if logs.len() < MIN_RUNS {
        return None;
    }
    let differences: Vec<f64> = logs.windows(2).map(|w| w[1] - w[0]).collect();
    let rms = (differences.iter().map(|d| d * d).sum::<f64>() / differences.len() as f64).sqrt();
    let largest = differences.iter().fold(0.0f64, |m, d| m.max(d.abs()));
    let runs = logs.len() as u64;
    let t = crate::stats::t_975(degrees_of_freedom(runs));
    Some(BetweenRuns { sd: Some(rms.max(largest / t)), origin: HISTORY.into(), runs, unsettled: None })
}

/// The degrees of freedom of a spread read from `runs` runs, at least 1: their differences (squares averaged
/// about 0), one fewer than the runs.
pub fn degrees_of_freedom(runs: u64) -> usize {
    (runs as usize).saturating_sub(1).max(1)
}

/// The `origin` of a spread read from the series' own runs.
pub const HISTORY: &str = "history";
/// The `origin` of no spread: the verdict is `inconclusive`.
pub const NONE: &str = "none";

#[cfg(test)]
#[path = "between_runs_tests.rs"]
mod tests;
