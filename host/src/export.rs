//! Reports and exports of result streams (`benchhost report`): Markdown in the style of seed 000's table,
//! CSV, JSON, github-action-benchmark's custom JSON (one file per direction, as that tool has one direction
//! per file) and Bencher Metric Format. Formats only; reads nothing, measures nothing.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::{Value, json};

use crate::compare::{self, SeriesKey};
use crate::record::{Kind, MetricValue, Record};
use crate::report::{metric, plain};

/// A stable series name: `bench/key=value/...` over every variant key, sorted; never a computed value.
pub fn series_name(record: &Record) -> String {
    let mut name = record.bench.clone();
    for (key, value) in &record.variant {
        let _ = write!(name, "/{key}={}", plain(value));
    }
    name
}

/// Measurement records per series, oldest first.
fn history(records: &[Record]) -> BTreeMap<SeriesKey, Vec<&Record>> {
    let mut series: BTreeMap<SeriesKey, Vec<&Record>> = BTreeMap::new();
    for record in records.iter().filter(|r| r.kind == Kind::Measurement) {
        series.entry(compare::series(record)).or_default().push(record);
    }
    for runs in series.values_mut() {
        runs.sort_by_key(|r| r.run.ts_ms);
    }
    series
}

/// Markdown: per rig, `Benchmark | Estimate | vs previous run`, one row per series and metric of the newest
/// run, the change against the series' previous run with the decision at `threshold`.
pub fn markdown(records: &[Record], threshold: f64) -> String {
    let mut by_bench: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for runs in history(records).values() {
        let latest = runs[runs.len() - 1];
        let previous = runs.len().checked_sub(2).map(|i| runs[i]);
        for (name, m) in &latest.metrics {
            let change = match previous.and_then(|p| p.metrics.get(name)) {
                Some(before) => vs_previous(before, m, threshold),
                None => "first run".into(),
            };
            let row = format!("| {}/{name} | {} | {change} |", series_name(latest), metric(m));
            by_bench.entry(latest.bench.as_str()).or_default().push(row);
        }
    }
    let mut out = String::new();
    for (bench, rows) in by_bench {
        let _ = writeln!(out, "## {bench}\n\n| Benchmark | Estimate | vs previous run |\n|---|---|---|");
        for row in rows {
            let _ = writeln!(out, "{row}");
        }
        out.push('\n');
    }
    out
}

fn vs_previous(before: &MetricValue, after: &MetricValue, threshold: f64) -> String {
    let (ratio, ci) = compare::ratio_ci(before, after);
    let decision = compare::decide(ci, after.higher_is_better, threshold);
    format!("{:+.1}% ({})", (ratio - 1.0) * 100.0, decision.name())
}

/// CSV: one row per measurement record and metric, oldest run first.
pub fn csv(records: &[Record]) -> String {
    let mut out =
        String::from("bench,series,metric,value,unit,higher_is_better,ci_low,ci_high,n,run_id,commit,ts_ms\n");
    let mut rows: Vec<&Record> = records.iter().filter(|r| r.kind == Kind::Measurement).collect();
    rows.sort_by_key(|r| r.run.ts_ms);
    for r in rows {
        for (name, m) in &r.metrics {
            let [lo, hi] = m.ci95.map_or([String::new(), String::new()], |[lo, hi]| [lo.to_string(), hi.to_string()]);
            let fields = [
                r.bench.clone(),
                series_name(r),
                name.clone(),
                m.value.to_string(),
                m.unit.clone(),
                m.higher_is_better.to_string(),
                lo,
                hi,
                m.n.map(|n| n.to_string()).unwrap_or_default(),
                r.run.id.clone().unwrap_or_default(),
                r.run.commit.clone().unwrap_or_default(),
                r.run.ts_ms.to_string(),
            ];
            let quoted: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
            let _ = writeln!(out, "{}", quoted.join(","));
        }
    }
    out
}

fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n']) { format!("\"{}\"", field.replace('"', "\"\"")) } else { field.to_string() }
}

/// Every record, as one JSON array.
pub fn json(records: &[Record]) -> String {
    serde_json::to_string_pretty(records).expect("records serialize")
}

/// github-action-benchmark's custom format for the newest run of each series: `(smaller_is_better,
/// bigger_is_better)`, since the tool reads one direction per file.
pub fn gab(records: &[Record]) -> (String, String) {
    let (mut smaller, mut bigger) = (Vec::new(), Vec::new());
    for record in compare::latest(records).values() {
        for (name, m) in &record.metrics {
            let mut entry =
                json!({ "name": format!("{}/{name}", series_name(record)), "unit": m.unit, "value": m.value });
            if let Some([lo, hi]) = m.ci95 {
                entry["range"] = Value::from(format!("±{}", (hi - lo) / 2.0));
            }
            entry["extra"] = Value::from(extra(record));
            if m.higher_is_better { bigger.push(entry) } else { smaller.push(entry) }
        }
    }
    let pretty = |v: Vec<Value>| serde_json::to_string_pretty(&v).expect("json");
    (pretty(smaller), pretty(bigger))
}

fn extra(record: &Record) -> String {
    let r = &record.run;
    format!("commit {} on {} ({} cores), {}", r.commit.as_deref().unwrap_or("?"), r.cpu, r.cores, r.profile)
}

/// Bencher Metric Format for the newest run of each series: benchmark → measure → value with bounds.
pub fn bmf(records: &[Record]) -> String {
    let mut out = serde_json::Map::new();
    for record in compare::latest(records).values() {
        let measures: serde_json::Map<String, Value> = record
            .metrics
            .iter()
            .map(|(name, m)| {
                let mut v = json!({ "value": m.value });
                if let Some([lo, hi]) = m.ci95 {
                    v["lower_value"] = Value::from(lo);
                    v["upper_value"] = Value::from(hi);
                }
                (name.clone(), v)
            })
            .collect();
        out.insert(series_name(record), Value::Object(measures));
    }
    serde_json::to_string_pretty(&Value::Object(out)).expect("json")
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
