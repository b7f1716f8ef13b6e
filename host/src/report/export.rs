//! Reports and exports of result streams (`benchhost report`) beside the Markdown and HTML reports:
//! CSV, JSON, github-action-benchmark's custom JSON (one file per direction, as that tool has one direction
//! per file) and Bencher Metric Format. Formats only; reads nothing, measures nothing.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::{Value, json};

use crate::analysis::compare;
use crate::report::format::plain;
use benchhost_record::{Kind, Record};

/// A stable series name: `bench/key=value/...` over every variant key, sorted; never a computed value.
pub fn series_name(record: &Record) -> String {
    let mut name = record.bench.clone();
    for (key, value) in &record.variant {
        let _ = write!(name, "/{key}={}", plain(value));
    }
    name
}

/// The series whose newest record is a failure, by name: what a format that holds numbers only (gab, BMF)
/// leaves out, and the report command warns about.
pub fn failed_series(records: &[Record]) -> Vec<String> {
    compare::latest(records).values().filter(|r| r.kind == Kind::Failure).map(|r| series_name(r)).collect()
}

/// Each record's variant as tables show it: of each rig, only the keys whose values differ between its rows
/// (all of them for a rig with a single row).
pub(crate) fn shown_variants(records: &[&Record]) -> Vec<String> {
    let mut by_bench: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, record) in records.iter().enumerate() {
        by_bench.entry(&record.bench).or_default().push(i);
    }
    let mut shown = vec![String::new(); records.len()];
    for rows in by_bench.values() {
        let variants: Vec<_> = rows.iter().map(|&i| &records[i].variant).collect();
        let (fixed, names) = short_names(&variants);
        for (&i, name) in rows.iter().zip(names) {
            let name = if name.is_empty() { fixed.clone() } else { name.replace('/', " ") };
            shown[i] = name + &super::format::method_suffix(&benchhost_record::method(records[i]));
        }
    }
    shown
}

/// Of a rig's variants: the `key=value` pairs all share (joined by spaces), and for each variant the pairs
/// that differ, joined by `/`. The records keep every key; tables and Markdown show what tells series apart.
pub fn short_names(variants: &[&BTreeMap<String, Value>]) -> (String, Vec<String>) {
    let keys: std::collections::BTreeSet<&String> = variants.iter().flat_map(|v| v.keys()).collect();
    // Which keys vary, found once (one pass over the variants per key): asked per row and key, it made
    // `show` quadratic in the records of a rig.
    let varying: std::collections::BTreeSet<&String> =
        keys.iter().copied().filter(|k| variants.iter().any(|v| v.get(*k) != variants[0].get(*k))).collect();
    let fixed: Vec<String> = keys
        .iter()
        .filter(|k| !varying.contains(*k))
        .filter_map(|k| variants[0].get(*k).map(|v| format!("{k}={}", plain(v))))
        .collect();
    let names = variants
        .iter()
        .map(|v| {
            let parts: Vec<String> =
                v.iter().filter(|(k, _)| varying.contains(k)).map(|(k, v)| format!("{k}={}", plain(v))).collect();
            parts.join("/")
        })
        .collect();
    (fixed.join(" "), names)
}

/// `FAILED (cause): message`.
pub fn failure_text(record: &Record) -> String {
    let f = record.failure.as_ref();
    format!("FAILED ({}): {}", f.map_or("unknown", |f| f.cause.as_str()), f.map_or("", |f| f.message.as_str()))
}

/// `accepted: regressed x1.050 [1.040, 1.060] of METRIC: REASON (BY, DATE) [ID]`, or what a revoke undid and why.
pub fn acknowledgement_text(record: &Record) -> String {
    let Some(a) = &record.acknowledgement else { return "acknowledgement".into() };
    let said = crate::analysis::acknowledgements::accepted(record).said();
    let change = format!("{} x{:.3} [{:.3}, {:.3}] of {}", a.decision.name(), a.ratio, a.ci95[0], a.ci95[1], a.metric);
    match &a.revokes {
        Some(id) => format!("revokes {id} ({change}): {}", said.trim_start_matches("accepted: ")),
        None => format!("{said}: {change} [{}]", a.id),
    }
}

/// CSV (RFC 4180, through the csv crate): one row per measurement record and metric, and one per failure
/// (its `failure` column filled, no metric), oldest run first.
pub fn csv(records: &[Record]) -> String {
    let mut rows: Vec<&Record> =
        records.iter().filter(|r| matches!(r.kind, Kind::Measurement | Kind::Failure)).collect();
    rows.sort_by_key(|r| r.run.ts_ms);
    let mut out = CSV_HEADER.to_string();
    for record in rows {
        out.push_str(&csv_rows(record));
    }
    out
}

/// The header line of [`csv`].
pub const CSV_HEADER: &str =
    "bench,series,metric,value,unit,higher_is_better,ci_low,ci_high,n,run_id,commit,ts_ms,failure\n";

/// The rows of [`csv`] for one record (none for a verdict).
pub fn csv_rows(r: &Record) -> String {
    let mut out = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    let run = [r.run.id.clone().unwrap_or_default(), r.run.commit.clone().unwrap_or_default(), r.run.ts_ms.to_string()];
    match r.kind {
        Kind::Verdict | Kind::Acknowledgement => {}
        Kind::Failure => {
            let failure = r.failure.as_ref().map(|f| format!("{}: {}", f.cause, f.message)).unwrap_or_default();
            let empty = || String::new();
            let fields =
                [r.bench.clone(), series_name(r), empty(), empty(), empty(), empty(), empty(), empty(), empty()];
            let _ = out.write_record(fields.into_iter().chain(run).chain([failure]));
        }
        Kind::Measurement => {
            for (name, m) in &r.metrics {
                let [lo, hi] =
                    m.ci95.map_or([String::new(), String::new()], |[lo, hi]| [lo.to_string(), hi.to_string()]);
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
                ];
                let _ = out.write_record(fields.into_iter().chain(run.clone()).chain([String::new()]));
            }
        }
    }
    String::from_utf8(out.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// Every record, as one JSON array.
pub fn json(records: &[Record]) -> String {
    serde_json::to_string_pretty(records).expect("records serialize")
}

/// One record as an element of [`json`]'s array: its pretty text indented by two spaces, so that
/// `[\n` + elements joined by `,\n` + `\n]` is the array's text, written one record at a time.
pub fn json_element(record: &Record) -> String {
    let text = serde_json::to_string_pretty(record).expect("records serialize");
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("  ");
        out.push_str(line);
    }
    out
}

/// github-action-benchmark's custom format for the newest run of each series (a series whose newest run
/// failed is left out: the format has no place for a failure, and an older number would be a lie): `(smaller_is_better,
/// bigger_is_better)`, since the tool reads one direction per file.
pub fn gab(records: &[Record]) -> (String, String) {
    let (mut smaller, mut bigger) = (Vec::new(), Vec::new());
    for record in compare::latest(records).values().filter(|r| r.kind == Kind::Measurement) {
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

/// Bencher Metric Format for the newest run of each series: benchmark → measure → value with bounds. As in
/// [`gab`], a series whose newest run failed is left out.
pub fn bmf(records: &[Record]) -> String {
    let mut out = serde_json::Map::new();
    for record in compare::latest(records).values().filter(|r| r.kind == Kind::Measurement) {
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
