//! One block of a rig's newest run on the HTML page (a `[[rig]]` block, `chart_groups`): a chart per metric that
//! varies between its arms (`html_chart`), the open-loop percentile plots, each table of metrics the rig
//! declares (the querier's mechanism), and beneath them the metrics equal in every arm as one line each of a
//! table, never as a chart of equal bars. Its provenance closes it.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::report::blocks::Block;
use crate::report::format::{UNCORRECTED, metric, quantity};
use crate::report::html_chart::{chart, layout};
use crate::report::html_text::{esc, provenance};
use crate::report::order;
use benchhost_record::history::Group;
use benchhost_record::{Record, SeriesKey};

/// A block without a numeric axis and with more arms than this gets a table of its newest run instead of
/// bar charts, where bars would be too thin to read.
const MOST_BARS: usize = 16;
/// A block of more series than colours (a `branch` key times the matrix) gets a table too: lines that share
/// a colour cannot be told apart.
const MOST_SERIES: usize = crate::report::html_frame::PALETTE.len();

/// The section of `block`, whose members index `series` (one per arm, newest record last); `changed` holds
/// the arms and metrics that a comparison between arms found changed.
pub fn html(block: &Block, series: &[&Group], changed: &BTreeSet<(SeriesKey, String)>) -> String {
    let groups: Vec<&Group> = block.members.iter().map(|&i| series[i]).collect();
    let arms: Vec<&Record> = groups.iter().map(|g| g.latest()).collect();
    let mut out = String::new();
    if !block.label.is_empty() {
        let _ = writeln!(out, "<h3>{}</h3>", esc(&block.label));
    }
    let mut metrics: Vec<&String> = Vec::new();
    for name in arms.iter().flat_map(|r| r.metrics.keys()) {
        if !metrics.contains(&name) {
            metrics.push(name);
        }
    }
    metrics.sort_by(|a, b| order::natural(a, b));
    let declared = tables(&arms);
    // Each arm's series key, made once: it serializes the arm's variant.
    let keys: Vec<SeriesKey> = arms.iter().map(|r| benchhost_record::series(r)).collect();
    let tabled: Vec<&String> = declared.iter().flat_map(|t| &t.metrics).collect();
    let (constant, varying): (Vec<&String>, Vec<&String>) =
        metrics.into_iter().filter(|m| !tabled.contains(m)).partition(|m| {
            let compared = keys.iter().any(|k| changed.contains(&(k.clone(), m.to_string())));
            !compared && equal_in_every_arm(&arms, m)
        });
    // An uncorrected latency is drawn beside its corrected twin, never on a chart of its own.
    let twinned = |m: &str| m.strip_suffix(UNCORRECTED).is_some_and(|c| varying.iter().any(|n| *n == c));
    let charted: Vec<&String> = varying.iter().copied().filter(|m| !twinned(m)).collect();
    let variants: Vec<_> = arms.iter().map(|r| &r.variant).collect();
    let names: Vec<String> = block.names.iter().map(|n| n.replace('/', " ")).collect();
    match layout(&variants) {
        Some(found) if found.series.len() <= MOST_SERIES && (found.numeric || arms.len() <= MOST_BARS) => {
            // Side by side where the page is wide enough.
            out.push_str("<div class=\"charts\">");
            for name in &charted {
                out.push_str(&chart(&found, &arms, name));
            }
            out.push_str(&crate::report::html_percentiles::plots(&arms, &names));
            out.push_str("</div>\n");
        }
        Some(_) if !varying.is_empty() => {
            let shown = varying.iter().copied().collect();
            out.push_str(&crate::report::html_series::newest_table(&groups, &names, &shown));
        }
        _ => {}
    }
    for table in &declared {
        out.push_str(&metric_table(table, &arms, &names));
    }
    out.push_str(&constants(&arms, &constant));
    let _ = writeln!(out, "<p class=\"provenance\">{}</p>", esc(&provenance(&arms)));
    out
}

/// Whether `name` is equal in every arm that reports it: the same value, or CI95s that all share a value.
pub fn equal_in_every_arm(arms: &[&Record], name: &str) -> bool {
    let values: Vec<&benchhost_record::MetricValue> = arms.iter().filter_map(|r| r.metrics.get(name)).collect();
    let Some(first) = values.first() else { return true };
    let same = values.iter().all(|m| (m.value - first.value).abs() <= 1e-9 * first.value.abs().max(1e-300));
    let cis: Option<Vec<[f64; 2]>> = values.iter().map(|m| m.ci95).collect();
    let overlap = cis.is_some_and(|cis| {
        let low = cis.iter().map(|c| c[0]).fold(f64::NEG_INFINITY, f64::max);
        let high = cis.iter().map(|c| c[1]).fold(f64::INFINITY, f64::min);
        low <= high
    });
    same || overlap
}

/// The tables the arms' records declare, each once, in the order first declared.
fn tables(arms: &[&Record]) -> Vec<benchhost_record::MetricTable> {
    let mut found: Vec<benchhost_record::MetricTable> = Vec::new();
    for table in arms.iter().flat_map(|r| &r.tables) {
        match found.iter_mut().find(|t| t.name == table.name) {
            Some(known) => {
                let new: Vec<String> = table.metrics.iter().filter(|m| !known.metrics.contains(m)).cloned().collect();
                known.metrics.extend(new);
            }
            None => found.push(table.clone()),
        }
    }
    found
}

/// A declared table: one row per arm, one column per metric.
fn metric_table(table: &benchhost_record::MetricTable, arms: &[&Record], names: &[String]) -> String {
    let mut out = format!(
        "<table class=\"metric-table\" data-table=\"{0}\"><caption>{0}</caption><tr><th>arm</th>",
        esc(&table.name)
    );
    for name in &table.metrics {
        let _ = write!(out, "<th>{}</th>", esc(name));
    }
    out.push_str("</tr>");
    for (record, name) in arms.iter().zip(names) {
        let name = if name.is_empty() { record.bench.clone() } else { name.clone() };
        let _ = write!(out, "<tr><td style=\"text-align:left\">{}</td>", esc(&name));
        for column in &table.metrics {
            let text = record.metrics.get(column).map_or(String::new(), |m| quantity(m.value, &m.unit));
            let _ = write!(out, "<td>{}</td>", esc(&text));
        }
        out.push_str("</tr>");
    }
    out + "</table>\n"
}

/// The metrics equal in every arm: one row each, `input_files · 24 files · in every arm`.
fn constants(arms: &[&Record], names: &[&String]) -> String {
    if names.is_empty() {
        return String::new();
    }
    let every = if arms.len() == 1 { "its one arm".to_string() } else { format!("every arm ({})", arms.len()) };
    let mut out = String::from("<table class=\"constants\">");
    for name in names {
        let values: Vec<&benchhost_record::MetricValue> = arms.iter().filter_map(|r| r.metrics.get(*name)).collect();
        let (lo, hi) =
            values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), m| (lo.min(m.value), hi.max(m.value)));
        let unit = &values[0].unit;
        let value = match lo == hi {
            true => metric(values[0]),
            false => format!("{} to {}, within each other's CI95", quantity(lo, unit), quantity(hi, unit)),
        };
        let _ = write!(
            out,
            "<tr><th style=\"text-align:left\">{}</th><td>{}</td><td style=\"text-align:left\">in {every}</td></tr>",
            esc(name),
            esc(&value)
        );
    }
    out + "</table>\n"
}

#[cfg(test)]
mod tests {
    use benchhost_record::history::History;
    use benchhost_record::{MetricTable, MetricValue, RunInfo};

    use super::*;

    fn arm(order: &str, reached: f64, time: f64) -> Record {
        let value = |value: f64, unit: &str| MetricValue {
            value,
            unit: unit.into(),
            higher_is_better: false,
            ci95: None,
            n: None,
        };
        let variant = [("order".to_string(), serde_json::Value::from(order))].into();
        let metrics = [
            ("files_reached".to_string(), value(reached, "files")),
            ("files_pruned".to_string(), value(60.0 - reached, "files")),
            ("files_total".to_string(), value(60.0, "files")),
            ("query_time".to_string(), value(time, "ns")),
        ];
        let mut record =
            Record::measurement_for_tests("querier", RunInfo::for_tests(1, Some("a")), variant, metrics.into());
        record.tables = vec![MetricTable {
            name: "mechanism".into(),
            metrics: vec!["files_reached".into(), "files_pruned".into()],
        }];
        record
    }

    #[test]
    fn a_declared_table_is_drawn_as_one_and_a_constant_as_a_line_of_the_table_beneath() {
        let records = [arm("attested", 4.0, 17.6e6), arm("unattested", 60.0, 19.6e6)];
        let html = crate::report::html::page(&History::of(&records, crate::report::html::NEEDS), &[]);
        let table = html
            .split("<table class=\"metric-table\" data-table=\"mechanism\">")
            .nth(1)
            .expect("the table")
            .split("</table>")
            .next()
            .unwrap();
        assert!(
            table.contains("<th>files_reached</th><th>files_pruned</th>"),
            "its columns in declared order: {table}"
        );
        assert!(
            table.contains("<td style=\"text-align:left\">order=attested</td><td>4 files</td><td>56 files</td>"),
            "{table}"
        );
        assert_eq!(table.matches("<tr>").count(), 3, "a header and a row per arm");
        assert!(!html.contains("data-metric=\"files_reached\""), "a tabled metric is not charted");
        assert!(html.contains("data-metric=\"query_time\""), "the others are");
        assert!(!html.contains("data-metric=\"files_total\""), "a constant is not charted");
        assert!(html.contains("<th style=\"text-align:left\">files_total</th><td>60 files</td><td style=\"text-align:left\">in every arm (2)</td>"));
        assert!(equal_in_every_arm(&records.iter().collect::<Vec<_>>(), "files_total"));
        assert!(!equal_in_every_arm(&records.iter().collect::<Vec<_>>(), "query_time"));
    }

    #[test]
    fn values_within_each_others_ci95_are_equal_and_apart_are_not() {
        let with_ci = |value: f64, ci: [f64; 2]| {
            let mut r = arm("a", 4.0, value);
            r.metrics.get_mut("query_time").unwrap().ci95 = Some(ci);
            r
        };
        let overlapping = [with_ci(10.0, [9.0, 11.0]), with_ci(10.5, [10.2, 10.8])];
        assert!(equal_in_every_arm(&overlapping.iter().collect::<Vec<_>>(), "query_time"));
        let apart = [with_ci(10.0, [9.0, 11.0]), with_ci(12.0, [11.5, 12.5])];
        assert!(!equal_in_every_arm(&apart.iter().collect::<Vec<_>>(), "query_time"));

        // A paired comparison of the two arms that found a change outweighs their overlapping intervals.
        let (a, b) = (arm("attested", 4.0, 10.0), arm("unattested", 4.0, 10.5));
        let ci = |mut r: Record, ci: [f64; 2]| {
            r.metrics.get_mut("query_time").unwrap().ci95 = Some(ci);
            r
        };
        let (a, b) = (ci(a, [9.0, 11.0]), ci(b, [10.2, 10.8]));
        let page =
            |records: &[Record]| crate::report::html::page(&History::of(records, crate::report::html::NEEDS), &[]);
        assert!(!page(&[a.clone(), b.clone()]).contains("data-metric=\"query_time\""), "equal within their CI95");
        let verdict: benchhost_record::Verdict = serde_json::from_value(serde_json::json!({
            "metric": "query_time", "test": "paired", "against": {"order": "attested"}, "ratio": 1.05,
            "ci95": [1.04, 1.06], "threshold": 0.03, "decision": "regressed"
        }))
        .unwrap();
        let run = RunInfo::for_tests(2, Some("b"));
        let regressed = Record::verdict_on(&b, verdict, "regressed".into(), run);
        assert!(page(&[a, b, regressed]).contains("data-metric=\"query_time\""), "charted: the comparison saw it");
    }

    #[test]
    fn a_block_of_more_arms_than_bars_fit_and_no_numeric_axis_is_a_table() {
        let records: Vec<Record> = (0..=MOST_BARS)
            .map(|i| {
                let mut r = arm(&format!("order{}", (b'a' + i as u8) as char), 4.0, 10.0 + i as f64);
                r.tables.clear();
                r
            })
            .collect();
        let html = crate::report::html::page(&History::of(&records, crate::report::html::NEEDS), &[]);
        assert!(!html.contains("<svg"), "no chart of 17 thin bars");
        assert!(html.contains("<table><tr><th>#</th><th>arm</th><th>query_time</th></tr>"), "what varies: {html}");
        assert_eq!(html.matches("<td style=\"text-align:left\">order=order").count(), MOST_BARS + 1, "a row per arm");
    }

    #[test]
    fn a_block_of_more_series_than_colours_is_a_table() {
        let records: Vec<Record> = (0..=MOST_SERIES)
            .flat_map(|branch| {
                [100, 1000, 10_000].map(|rows| {
                    let mut r = arm("a", 4.0, rows as f64 * (1.0 + branch as f64));
                    r.variant.insert("branch".into(), format!("b{branch}").into());
                    r.variant.insert("rows".into(), rows.into());
                    r
                })
            })
            .collect();
        let html = crate::report::html::page(&History::of(&records, crate::report::html::NEEDS), &[]);
        assert!(!html.contains("<svg"), "no chart of nine lines in eight colours");
        assert!(html.contains("<table><tr><th>#</th><th>arm</th><th>query_time</th></tr>"), "{html}");
        let last = format!("b{MOST_SERIES}");
        let fewer: Vec<Record> = records.into_iter().filter(|r| r.variant["branch"] != last.as_str()).collect();
        let html = crate::report::html::page(&History::of(&fewer, crate::report::html::NEEDS), &[]);
        assert_eq!(html.matches("<polyline").count(), MOST_SERIES, "a line per branch over rows");
    }
}
