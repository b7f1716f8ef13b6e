//! The parts of the HTML report that grow with history: one chart per series of its whole history (one panel
//! per metric, each on its own scale: the newest value of each time bucket as a line over the band of the
//! bucket's lowest and highest, that value's CI95 as a whisker, and a line at each change point), and for a
//! block of many arms without a numeric axis a table of its newest run instead of bars.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::report::format::{metric, quantity};
use crate::report::html_text::{date, esc, provenance};
use crate::report::trend::Mark;
use benchhost_record::history::{Buckets, Group, Span};

/// Width of every chart of the page (the bars of `html.rs` too, so the page's charts line up), px.
pub const W: f64 = 640.0;
/// Left margin of every chart, for the labels of its axis, px.
pub const LEFT: f64 = 120.0;
/// Height of one metric's panel, px.
const PANEL: u32 = 56;
/// Space under the last panel for the time axis, px.
const AXIS: u32 = 18;

/// The 64 digits of the positions in a chart's data (history.js reads them back).
const DIGITS: &[u8; 64] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";

/// A chart of the whole history of one series: one panel per metric. The page's script (history.js) draws it
/// from `data-chart` as it comes near the screen: per span of time its position (two digits) and its newest,
/// lowest and highest value (one digit each: a panel is 42 px high), so a chart is a few hundred bytes where
/// its SVG was a few kilobytes.
pub fn history_chart(group: &Group, label: &str, marks: &[Mark]) -> String {
    let latest = group.latest();
    let panels: Vec<(&String, &Buckets)> =
        latest.metrics.keys().filter_map(|m| Some((m, group.buckets.get(m)?))).collect();
    let starts = panels.iter().flat_map(|(_, b)| b.spans.values().map(|s| s.newest.0));
    let (t0, t1) = starts.fold((u64::MAX, 0), |(lo, hi), t| (lo.min(t), hi.max(t)));
    if panels.is_empty() || t0 > t1 {
        return String::new();
    }
    let width = W - 10.0 - LEFT;
    let x = |t: u64| ((t - t0) as f64 / (t1 - t0).max(1) as f64 * width) as usize;
    // Every panel's positions; those of the first are the chart's, and a panel that differs carries its own.
    let positions: Vec<String> =
        panels.iter().map(|(_, b)| digits(b.spans.values().map(|s| x(s.newest.0)), 2)).collect();
    let shared = &positions[0];
    let mut data = Vec::new();
    for ((name, buckets), own) in panels.iter().zip(&positions) {
        let m = &latest.metrics[*name];
        // Each span's newest CI95 (its value where its record had none), when any record had one.
        let with_ci = buckets.spans.values().any(|s| s.newest_ci.is_some());
        let ci = |s: &Span| s.newest_ci.filter(|_| with_ci).unwrap_or([s.newest.2; 2]);
        let (lo, hi) = buckets.spans.values().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| {
            (lo.min(s.min).min(ci(s)[0]), hi.max(s.max).max(ci(s)[1]))
        });
        let y = |v: f64| ((hi - v) / (hi - lo) * (PANEL - 14) as f64) as usize;
        // A metric that never changed, nor its interval, is a flat line: no digits. Per span the newest, lowest
        // and highest value, and the newest's CI95 (five digits) when the records have one.
        let ys = match (hi > lo, with_ci) {
            (true, true) => digits(
                buckets.spans.values().flat_map(|s| [y(s.newest.2), y(s.min), y(s.max), y(ci(s)[0]), y(ci(s)[1])]),
                1,
            ),
            (true, false) => digits(buckets.spans.values().flat_map(|s| [y(s.newest.2), y(s.min), y(s.max)]), 1),
            (false, _) => String::new(),
        };
        let arrow = if m.higher_is_better { "↑" } else { "↓" };
        let range = format!("{} to {}", quantity(lo, &m.unit), quantity(hi, &m.unit));
        let mut panel = vec![name.to_string(), format!("{} {arrow}", metric(m)), range, ys];
        if own != shared {
            panel.push(own.clone());
        }
        data.push(panel);
    }
    // Change points: a line on their metric's panel at the time of their first night.
    let marked: Vec<serde_json::Value> = marks
        .iter()
        .filter_map(|m| {
            let panel = panels.iter().position(|(name, _)| **name == m.metric)?;
            Some(serde_json::json!([panel, x(m.ts_ms.clamp(t0, t1)), m.text, m.bad, m.accepted]))
        })
        .collect();
    let chart = serde_json::json!({ "x": shared, "from": date(t0), "to": date(t1), "panels": data, "marks": marked });
    let height = PANEL * panels.len() as u32 + AXIS;
    let title = format!("{} {label}: {} runs", latest.bench, group.count);
    format!(
        "<figure class=\"history\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{height}\" \
role=\"img\" data-chart='{}'><title>{}</title></svg><figcaption><b>{}</b><br>newest: {}</figcaption></figure>\n",
        chart.to_string().replace('&', "&amp;").replace('\'', "&#39;"),
        esc(&title),
        esc(&title),
        esc(&provenance(&[latest]))
    )
}

/// `values` as base-64 numbers of `width` digits each.
pub(super) fn digits(values: impl Iterator<Item = usize>, width: u32) -> String {
    let mut out = String::new();
    for value in values {
        let value = value.min(64usize.pow(width) - 1);
        for place in (0..width).rev() {
            out.push(DIGITS[value / 64usize.pow(place) % 64] as char);
        }
    }
    out
}

/// The newest run of a rig of many arms: one row per arm, one column per metric, with the change from the run
/// before.
pub fn newest_table(series: &[&Group], labels: &[String], metrics: &BTreeSet<&String>) -> String {
    let mut out = String::from("<table><tr><th>#</th><th>arm</th>");
    for name in metrics {
        let _ = write!(out, "<th>{}</th>", esc(name));
    }
    out.push_str("</tr>");
    for (i, (group, label)) in series.iter().zip(labels).enumerate() {
        let _ = write!(out, "<tr><td>{}</td><td style=\"text-align:left\">{}</td>", i + 1, esc(label));
        let latest = group.latest();
        let before = group.newest.len().checked_sub(2).map(|i| &group.newest[i].1);
        for name in metrics {
            let Some(m) = latest.metrics.get(*name) else {
                out.push_str("<td></td>");
                continue;
            };
            let change = before.and_then(|b| b.metrics.get(*name)).filter(|b| b.value != 0.0);
            let change = change.map_or(String::new(), |b| format!(" ({:+.1}%)", (m.value / b.value - 1.0) * 100.0));
            let _ = write!(out, "<td>{}{}</td>", esc(&metric(m)), esc(&change));
        }
        out.push_str("</tr>");
    }
    let newest: Vec<&benchhost_record::Record> = series.iter().map(|g| g.latest()).collect();
    let _ = writeln!(out, "</table><p class=\"provenance\">{}</p>", esc(&provenance(&newest)));
    out
}
