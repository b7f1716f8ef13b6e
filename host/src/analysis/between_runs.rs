//! The spread between runs of one series, which a comparison of two runs' records must count (the change table
//! after `run`, `compare`, `run --baseline`, `report`'s "since the previous run"). A record's own interval holds
//! the spread of its run's samples only, and two runs minutes apart differ by more: 20 back-to-back runs of wal
//! (`compression=zstd rows=1000`), each ±0.1% within itself, moved 0.42% (median) and up to 1.23% from run to
//! run, and the CI95 of 38 of their 40 A/A ratios excluded 1 (issue 83). Pure.
//!
//! Where the spread comes from, in this order:
//! - **the series' own history on the machine of the run judged**: its records on the same host and CPU (a
//!   series is measured one way: `cell.method` is in its key), not run in doubtful conditions, in the order they
//!   ran, from [`MIN_RUNS`] runs on: the root mean square of the log differences of successive runs (what the
//!   ratio of two runs of the same code spreads by), and never less than the largest of those differences
//!   over its Student-t quantile, so that the interval reaches at least as far as two successive runs have
//!   ever been apart. Runs on a 2-core VM have heavy tails (a phase of runs 20-30% slow): a normal model read
//!   from a few runs let through 1-3 false alarms in 40 A/A comparisons; the largest of n exchangeable
//!   differences is passed by the next with a chance of 1 in n + 1, under 5% from 19 differences on, whatever
//!   their distribution, while the machine stays as they found it (a slow phase it had not shown before passes
//!   it: `results/unpaired-proof-2.json`). A change of the code inside the history widens the interval while
//!   it is there.
//! - **`calibrate`'s rounds** of the series on that machine: their spread (`round_cv_pct`), each round standing
//!   for a run, so two runs differ by `√2` of it.
//! - **none**: the comparison cannot say how far two runs differ, and is `inconclusive`; pairing the builds
//!   (`run --against`, `--interleave`) decides instead.

use std::collections::HashMap;

use benchhost_record::{BetweenRuns, Kind, Record, SeriesKey, series};

use crate::analysis::calibrate;

/// The fewest earlier runs of a series (on this machine, in good conditions) its history must hold to give
/// the spread: 19 differences, the fewest whose largest a next one passes under 5% of the time.
pub const MIN_RUNS: usize = 20;

/// The newest runs of a series read for its spread: enough for a steady estimate, few enough that it follows
/// the machine as it is now.
pub const KEPT_RUNS: usize = 30;

/// Where a spread holds: a series and metric on one machine (host and CPU).
type Key = (SeriesKey, String, String, String);

/// The spread of the log ratio of two runs of one series, and its origin, for each series and metric on each
/// machine.
#[derive(Debug, Default)]
pub struct Spreads {
    by_series: HashMap<Key, BetweenRuns>,
}

impl Spreads {
    /// No spread for any series: every comparison of two runs is `inconclusive`.
    #[cfg(test)]
    pub fn none() -> Spreads {
        Spreads::default()
    }

    /// The spreads of the series in `history` (records of any kind, in any order, a record given twice counted
    /// once), each on the machine it ran on, from its own records where there are enough, else from the
    /// `calibrations` made there.
    pub fn new(history: &[Record], calibrations: &[Record]) -> Spreads {
        let mut runs: HashMap<(SeriesKey, &str, &str), Vec<&Record>> = HashMap::new();
        let usable = |r: &&Record| {
            r.kind == Kind::Measurement
                && !r.variant.contains_key(calibrate::MARK)
                && r.cell.as_ref().and_then(|c| c.conditions.as_ref()).is_none_or(|c| c.doubts().is_empty())
        };
        for record in history.iter().filter(usable) {
            runs.entry((series(record), &record.run.host, &record.run.cpu)).or_default().push(record);
        }
        let mut by_series = HashMap::new();
        for ((key, host, cpu), mut records) in runs {
            records.sort_by(|a, b| (a.run.ts_ms, &a.run.id).cmp(&(b.run.ts_ms, &b.run.id)));
            records.dedup_by(|a, b| (a.run.ts_ms, &a.run.id) == (b.run.ts_ms, &b.run.id));
            let records = &records[records.len().saturating_sub(KEPT_RUNS)..];
            let metrics: std::collections::BTreeSet<&String> = records.iter().flat_map(|r| r.metrics.keys()).collect();
            for metric in metrics {
                let logs: Vec<f64> = records
                    .iter()
                    .filter_map(|r| r.metrics.get(metric))
                    .filter(|m| m.value > 0.0 && m.ci95.is_some())
                    .map(|m| m.value.ln())
                    .collect();
                let none = BetweenRuns { sd: None, origin: NONE.into(), runs: logs.len() as u64 };
                let at = (key.clone(), metric.clone(), host.to_string(), cpu.to_string());
                by_series.insert(at, of_runs(&logs).unwrap_or(none));
            }
        }
        for calibrated in calibrate::round_spreads(calibrations) {
            let sd = Some(std::f64::consts::SQRT_2 * calibrated.cv);
            let at = (calibrated.series, calibrated.metric, calibrated.host, calibrated.cpu);
            let calibrated = BetweenRuns { sd, origin: CALIBRATION.into(), runs: calibrated.rounds };
            match by_series.get(&at) {
                Some(own) if own.sd.is_some() => {}
                _ => {
                    by_series.insert(at, calibrated);
                }
            }
        }
        Spreads { by_series }
    }

    /// The spread of `metric` of `record`'s series on the machine it ran on: origin `none`, without `sd`,
    /// where neither its runs there nor a calibration there give one.
    pub fn get(&self, record: &Record, metric: &str) -> BetweenRuns {
        let at = (series(record), metric.to_string(), record.run.host.clone(), record.run.cpu.clone());
        let none = || BetweenRuns { sd: None, origin: NONE.into(), runs: 0 };
        self.by_series.get(&at).cloned().unwrap_or_else(none)
    }
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
    let history = BetweenRuns { sd: None, origin: HISTORY.into(), runs: logs.len() as u64 };
    let t = crate::stats::t_975(degrees_of_freedom(&history));
    Some(BetweenRuns { sd: Some(rms.max(largest / t)), ..history })
}

/// The degrees of freedom of a spread's estimate, at least 1: a history's differences (their squares
/// averaged about 0), one fewer than its runs; a calibration's rounds less one.
pub fn degrees_of_freedom(spread: &BetweenRuns) -> usize {
    (spread.runs as usize).saturating_sub(1).max(1)
}

/// The `origin` of a spread read from the series' own runs.
pub const HISTORY: &str = "history";
/// The `origin` of a spread read from `calibrate`'s rounds.
pub const CALIBRATION: &str = "calibration";
/// The `origin` of no spread: the verdict is `inconclusive`.
pub const NONE: &str = "none";

#[cfg(test)]
#[path = "between_runs_tests.rs"]
mod tests;
