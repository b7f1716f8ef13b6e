//! The parts of the HTML report that grow with history: one chart per series of its whole history (one panel
//! per metric, each on its own scale: the newest value of each time bucket as a line over the band of the
//! bucket's lowest and highest), and for a rig of many arms a table of its newest run instead of bars.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::report::html::{LEFT, W, date, esc, provenance};
use crate::report::{metric, quantity};
use benchhost_record::history::{Buckets, Group};

/// Height of one metric's panel, px.
const PANEL: u32 = 56;
/// Space under the last panel for the time axis, px.
const AXIS: u32 = 18;

/// A chart of the whole history of one series: one panel per metric.
pub fn history_chart(group: &Group, label: &str) -> String {
    let latest = group.latest();
    let panels: Vec<(&String, &Buckets)> =
        latest.metrics.keys().filter_map(|m| Some((m, group.buckets.get(m)?))).collect();
    let starts = panels.iter().flat_map(|(_, b)| b.spans.values().map(|s| s.newest.0));
    let (t0, t1) = starts.fold((u64::MAX, 0), |(lo, hi), t| (lo.min(t), hi.max(t)));
    if panels.is_empty() || t0 > t1 {
        return String::new();
    }
    let right = W as u32 - 10;
    let x = |t: u64| LEFT as u32 + ((t - t0) as f64 / (t1 - t0).max(1) as f64 * (right - LEFT as u32) as f64) as u32;
    let height = PANEL * panels.len() as u32 + AXIS;
    let mut svg = String::new();
    for (i, (name, buckets)) in panels.iter().enumerate() {
        let top = PANEL * i as u32;
        let m = &latest.metrics[*name];
        let (lo, hi) = buckets
            .spans
            .values()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| (lo.min(s.min), hi.max(s.max)));
        let y = |v: f64| match hi > lo {
            true => top + 6 + ((hi - v) / (hi - lo) * (PANEL - 14) as f64) as u32,
            false => top + PANEL / 2,
        };
        let arrow = if m.higher_is_better { "↑" } else { "↓" };
        let _ = write!(
            svg,
            "<text x=\"4\" y=\"{}\">{}</text><text x=\"4\" y=\"{}\" fill=\"#555\">{} {arrow}</text>\
<line x1=\"{LEFT}\" y1=\"{}\" x2=\"{right}\" y2=\"{}\" stroke=\"#ddd\"/>",
            top + 20,
            esc(name),
            top + 36,
            esc(&metric(m)),
            top + PANEL - 2,
            top + PANEL - 2
        );
        let spans: Vec<_> = buckets.spans.values().collect();
        let upper = spans.iter().map(|s| format!("{},{}", x(s.newest.0), y(s.max)));
        let lower = spans.iter().rev().map(|s| format!("{},{}", x(s.newest.0), y(s.min)));
        let band: Vec<String> = upper.chain(lower).collect();
        let line: Vec<String> = spans.iter().map(|s| format!("{},{}", x(s.newest.0), y(s.newest.2))).collect();
        let _ = write!(
            svg,
            "<polygon points=\"{}\" fill=\"#4269d0\" fill-opacity=\"0.15\"/><polyline points=\"{}\" fill=\"none\" \
stroke=\"#4269d0\" stroke-width=\"1.5\"><title>{}: {} to {}</title></polyline>",
            band.join(" "),
            line.join(" "),
            esc(name),
            esc(&quantity(lo, &m.unit)),
            esc(&quantity(hi, &m.unit))
        );
    }
    let bottom = height - 4;
    let _ = write!(
        svg,
        "<text x=\"{LEFT}\" y=\"{bottom}\">{}</text><text x=\"{right}\" y=\"{bottom}\" text-anchor=\"end\">{}</text>",
        date(t0),
        date(t1)
    );
    let title = format!("{} {label}: {} runs", latest.bench, group.count);
    format!(
        "<figure class=\"history\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{height}\" role=\"img\">\
<title>{}</title>{svg}</svg><figcaption><b>{}</b>, each metric on its own scale: the newest value of each span of \
time, over the band from its lowest to its highest<br>newest: {}</figcaption></figure>\n",
        esc(&title),
        esc(&title),
        esc(&provenance(&[latest]))
    )
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
