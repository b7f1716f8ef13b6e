//! The noise floor of this host: A/A comparisons of a cell against itself, from the rounds of one
//! interleaved run, stored as records that later comparisons on the same host use as their threshold. Pure.
//!
//! Every pair of rounds of one cell is an A/A comparison (no code changed), judged exactly as `compare`
//! judges a real change. Any `improved` or `regressed` among them is a false alarm.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::analysis::decision::decide;
use crate::analysis::decision::ratio_ci;
use crate::stats;
use benchhost_record::{Decision, SeriesKey, series};
use benchhost_record::{Kind, MetricValue, Record, RunInfo};

/// Variant key marking a calibration series (its value is always `"aa"`).
pub const MARK: &str = "calibration";
/// Variant key naming the metric a calibration record is about.
pub const METRIC: &str = "calibrated_metric";
/// False-alarm rate the suggested threshold keeps to.
pub const TARGET_FALSE_ALARMS: f64 = 0.01;

/// One calibration record per cell and metric, from each cell's per-round measurement records.
pub fn calibrate(cells: &[Vec<Record>], threshold: f64, run: &RunInfo) -> Vec<Record> {
    let mut out = Vec::new();
    for rounds in cells.iter().filter(|r| r.len() >= 2 && r.iter().all(|r| r.kind == Kind::Measurement)) {
        let first = &rounds[0];
        for (name, metric) in &first.metrics {
            let values: Vec<&MetricValue> = rounds.iter().filter_map(|r| r.metrics.get(name)).collect();
            if values.len() < 2 || values.iter().any(|m| m.value == 0.0) {
                continue;
            }
            let pairs = pair_cis(&values);
            let alarms = |t: f64| pairs.iter().filter(|ci| is_alarm(decide(**ci, metric.higher_is_better, t))).count();
            let rate = alarms(threshold) as f64 / pairs.len() as f64;
            let suggested = suggested_threshold(&pairs, metric.higher_is_better);
            let estimates: Vec<f64> = values.iter().map(|m| m.value).collect();
            let cv = crate::stats::summarize(&estimates).map_or(f64::NAN, |s| s.stddev / s.mean.abs());
            let widths: Vec<f64> =
                values.iter().filter_map(|m| m.ci95.map(|[lo, hi]| (hi - lo) / 2.0 / m.value.abs())).collect();
            let pct = |v: f64, n: usize| MetricValue {
                value: 100.0 * v,
                unit: "%".into(),
                higher_is_better: false,
                ci95: None,
                n: Some(n as u64),
            };
            let mut metrics = BTreeMap::from([
                ("false_alarm_pct".to_string(), pct(rate, pairs.len())),
                ("round_cv_pct".to_string(), pct(cv, values.len())),
            ]);
            if !widths.is_empty() {
                metrics.insert("ci_half_width_pct".into(), pct(stats::median(&widths), widths.len()));
            }
            if let Some(t) = suggested {
                metrics.insert("suggested_threshold_pct".into(), pct(t, pairs.len()));
            }
            let mut variant = first.variant.clone();
            variant.insert(MARK.into(), Value::from("aa"));
            variant.insert(METRIC.into(), Value::from(name.as_str()));
            let note = format!(
                "A/A: {} of {} round pairs alarmed at ±{:.1}%; rounds vary {:.2}% (CV)",
                alarms(threshold),
                pairs.len(),
                threshold * 100.0,
                cv * 100.0
            );
            out.push(Record {
                metrics,
                note: Some(note),
                plugin: first.plugin.clone(),
                ..Record::new(first.bench.clone(), Kind::Measurement, run.clone(), variant)
            });
        }
    }
    out
}

/// The ratio CI of every pair of rounds (later over earlier), exactly as `compare` builds it.
fn pair_cis(values: &[&MetricValue]) -> Vec<[f64; 2]> {
    let mut cis = Vec::new();
    for (i, a) in values.iter().enumerate() {
        for b in &values[i + 1..] {
            cis.push(ratio_ci(a, b).1);
        }
    }
    cis
}

/// The smallest threshold (in 0.1% steps) at which at most 1% of the A/A pairs alarm. A pair stops alarming
/// once the threshold reaches the far side of its interval, so a noisy cell gets a large threshold, not none;
/// `None` only for an interval that is not a finite positive ratio.
fn suggested_threshold(pairs: &[[f64; 2]], higher_is_better: bool) -> Option<f64> {
    let mut quiet_from: Vec<f64> = pairs
        .iter()
        .map(|&[lo, hi]| {
            let (worse_lo, worse_hi) = if higher_is_better { (1.0 / hi, 1.0 / lo) } else { (lo, hi) };
            (worse_lo - 1.0).max(1.0 / worse_hi - 1.0).max(0.0)
        })
        .collect();
    if quiet_from.iter().any(|t| !t.is_finite()) {
        return None;
    }
    quiet_from.sort_by(|a, b| b.total_cmp(a));
    let allowed = (TARGET_FALSE_ALARMS * pairs.len() as f64).floor() as usize;
    let bound = quiet_from.get(allowed).copied().unwrap_or(0.0);
    // The first step at or above the bound; `decide` has the last word where rounding moves the bound a hair.
    let alarms = |t: f64| pairs.iter().filter(|ci| is_alarm(decide(**ci, higher_is_better, t))).count();
    let mut steps = (bound * 1000.0 - 1e-6).ceil().max(1.0);
    while alarms(steps / 1000.0) > allowed {
        steps += 1.0;
    }
    Some(steps / 1000.0)
}

fn is_alarm(decision: Decision) -> bool {
    matches!(decision, Decision::Improved | Decision::Regressed)
}

/// The suggested thresholds of one host, by series and metric: the newest calibration of each, indexed once
/// so a comparison of many series asks in constant time.
pub struct Thresholds {
    newest: HashMap<(SeriesKey, String), (u64, f64)>,
}

impl Thresholds {
    /// The calibrations among `records` made on `host`.
    pub fn new(records: &[Record], host: &str) -> Thresholds {
        let newest = newest_of(records, (host, None), "suggested_threshold_pct")
            .into_iter()
            .map(|(key, (ts_ms, suggested))| (key, (ts_ms, suggested.value / 100.0)))
            .collect();
        Thresholds { newest }
    }

    /// The suggested threshold for `metric` of the series of `record`, if it was calibrated.
    pub fn get(&self, record: &Record, metric: &str) -> Option<f64> {
        self.newest.get(&(series(record), metric.to_string())).map(|(_, t)| *t)
    }
}

/// The newest value of `metric` in the calibrations among `records` made on `host` (with `cpu`, when given), per
/// calibrated series and metric.
fn newest_of(
    records: &[Record],
    (host, cpu): (&str, Option<&str>),
    metric: &str,
) -> HashMap<(SeriesKey, String), (u64, MetricValue)> {
    let mut newest: HashMap<(SeriesKey, String), (u64, MetricValue)> = HashMap::new();
    let there = |r: &&Record| r.run.host == host && cpu.is_none_or(|cpu| r.run.cpu == cpu);
    for r in records.iter().filter(there).filter(|r| r.variant.get(MARK).is_some_and(|v| v == "aa")) {
        let (Some(calibrated), Some(value)) = (r.variant.get(METRIC).and_then(Value::as_str), r.metrics.get(metric))
        else {
            continue;
        };
        let mut variant = r.variant.clone();
        variant.remove(MARK);
        variant.remove(METRIC);
        let key = ((r.bench.clone(), serde_json::to_string(&variant).expect("variants serialize")), calibrated.into());
        match newest.get(&key) {
            Some((ts_ms, _)) if *ts_ms > r.run.ts_ms => {}
            _ => {
                newest.insert(key, (r.run.ts_ms, value.clone()));
            }
        }
    }
    newest
}

#[cfg(test)]
#[path = "calibrate_tests.rs"]
mod tests;
