//! `benchhost report --format html`: one self-contained page (inline SVG, CSS and a script, no fetch). Per
//! rig and metric, a bar chart of the newest run's arms with CI95 whiskers (a table for a rig of many arms; an
//! open-loop latency's uncorrected twin as a pale bar beside it, and a latency-by-percentile plot,
//! `html_percentiles`);
//! then its comparisons between arms (`run --interleave`, grouped by what they held equal), and for every series
//! with several runs one chart of its whole history (`html_series`), its change points marked and the newest
//! listed at the top (`trend`). The provenance of
//! the records (CPU, commit, date) is under every chart. Bars are always the value itself; the direction of
//! goodness is written on the chart, never implied by flipping.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::analysis::change_points::SeriesChanges;
use crate::report::format::{UNCORRECTED, plain, quantity};
use crate::report::html_frame::{BOTTOM, H, PALETTE, TOP, axis, figure};
use crate::report::html_series::{LEFT, W};
use crate::report::html_text::{esc, provenance};
use benchhost_record::history::{Group, History, Needs};
use benchhost_record::{Kind, Record};

/// What a page needs of each series: the newest two records (the newest run's bars, and a large rig's table
/// with the change from the run before), and the whole history in 64 time buckets per metric.
pub const NEEDS: Needs = Needs { newest: 2, trend: 0, buckets: 64 };

/// A rig with more arms than this gets a table of its newest run instead of bar charts, where bars would be
/// too thin to read.
const MOST_BARS: usize = 16;

/// The page for `history` (see [`NEEDS`]) and the change points of its series.
pub fn page(history: &History, changes: &[SeriesChanges]) -> String {
    let (verdicts, groups): (Vec<_>, Vec<_>) = history.groups().into_iter().partition(|(key, _)| key.verdict.is_some());
    let groups: Vec<&Group> = groups.into_iter().map(|(_, g)| g).collect();
    let verdicts: Vec<&Record> = verdicts.into_iter().map(|(_, g)| g.latest()).collect();
    // A series whose newest run failed is listed at the top instead of charted with an older number.
    // What a reviewer reads first: the verdicts, grouped by what they compare against.
    let verdict_groups = crate::report::verdicts::groups(&verdicts);
    let mut body = crate::report::verdicts::html(&verdict_groups)
        + &failures(&groups)
        + &crate::report::trend::html_newest(changes);
    let marks = crate::report::trend::marks(changes);
    let mut by_bench: BTreeMap<&str, Vec<&Group>> = BTreeMap::new();
    // Calibrations (`benchhost calibrate`) measure the machine's noise, not the code: not drawn.
    let calibration = |g: &Group| g.latest().variant.contains_key(crate::analysis::calibrate::MARK);
    let calibrations = groups.iter().filter(|g| calibration(g)).count();
    for group in groups.iter().filter(|g| g.latest().kind == Kind::Measurement && !calibration(g)) {
        by_bench.entry(&group.latest().bench).or_default().push(group);
    }
    if calibrations > 0 {
        let _ = writeln!(body, "<p>{calibrations} calibration series (benchhost calibrate) are not drawn.</p>");
    }
    let mut any_history = false;
    for (bench, mut series) in by_bench {
        series.sort_by_cached_key(|g| benchhost_record::series(g.latest()));
        let latest: Vec<&Record> = series.iter().map(|g| g.latest()).collect();
        let labels = arm_labels(&latest);
        let _ = writeln!(body, "<section><h2>{}</h2>", esc(bench));
        let metrics: std::collections::BTreeSet<&String> = latest.iter().flat_map(|r| r.metrics.keys()).collect();
        if series.len() <= MOST_BARS {
            body.push_str(&legend(&labels));
            // An uncorrected latency is drawn beside its corrected twin, never on a chart of its own.
            let twinned = |m: &str| m.strip_suffix(UNCORRECTED).is_some_and(|c| metrics.iter().any(|n| *n == c));
            for metric in metrics.iter().filter(|m| !twinned(m)) {
                body.push_str(&bars(&latest, metric));
            }
            body.push_str(&crate::report::html_percentiles::plots(&latest));
        } else {
            body.push_str(&crate::report::html_series::newest_table(&series, &labels, &metrics));
        }
        for (group, label) in series.iter().zip(&labels).filter(|(g, _)| g.count > 1) {
            if !any_history {
                body.push_str(HISTORY_LEGEND);
                any_history = true;
            }
            let marked = marks.get(&benchhost_record::series(group.latest())).map_or(&[][..], Vec::as_slice);
            body.push_str(&crate::report::html_series::history_chart(group, label, marked));
        }
        body.push_str("</section>\n");
    }
    let script = match any_history {
        true => format!("<script>\n{}</script>\n", include_str!("history.js")),
        false => String::new(),
    };
    // Sections off the screen are not laid out (a rig of many arms has a table of hundreds of rows).
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>benchhost report</title>\n<style>\
body{{font:14px system-ui,sans-serif;margin:2em;color:#222}} figure{{margin:1em 0 2em}} \
section{{content-visibility:auto;contain-intrinsic-size:auto 2000px}} \
figure.history{{content-visibility:auto;contain-intrinsic-size:640px 240px}} \
figcaption{{font-size:12px;color:#555}} svg text{{font:11px system-ui,sans-serif}} ol{{font-size:13px}} \
table{{border-collapse:collapse;font-size:12px}} td,th{{padding:2px 6px;border-bottom:1px solid #ddd;text-align:right}}\
</style></head><body><h1>benchhost report</h1>\n{body}{script}</body></html>\n"
    )
}

/// Said once, above the first history chart (each a series, one panel per metric).
const HISTORY_LEGEND: &str = "<p>In each history chart every metric is on its own scale: the newest value of each span \
of time as a line, over the band from its lowest to its highest.</p><noscript><p>The history charts are drawn by \
the page's own script; allow it to see them.</p></noscript>\n";

/// A list of the series whose newest record is a failure, first on the page: a chart of an older number
/// would hide it.
fn failures(groups: &[&Group]) -> String {
    let failed: Vec<&Record> = groups.iter().map(|g| g.latest()).filter(|r| r.kind == Kind::Failure).collect();
    if failed.is_empty() {
        return String::new();
    }
    let items: String = failed
        .iter()
        .map(|r| {
            let name = crate::report::export::series_name(r);
            format!("<li><b>{}</b>: {}</li>", esc(&name), esc(&crate::report::export::failure_text(r)))
        })
        .collect();
    format!(
        "<section class=\"failures\"><h2>Failed in their newest run ({})</h2><ul>{items}</ul></section>\n",
        failed.len()
    )
}

/// Variant keys that differ between a rig's series (all of them for a single series).
fn arm_labels(latest: &[&Record]) -> Vec<String> {
    let first = &latest[0].variant;
    let varies = |k: &String| latest.len() == 1 || latest.iter().any(|r| r.variant.get(k) != first.get(k));
    latest
        .iter()
        .map(|r| {
            r.variant
                .iter()
                .filter(|(k, _)| varies(k))
                .map(|(k, v)| format!("{k}={}", plain(v)))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn legend(labels: &[String]) -> String {
    let items: String = labels.iter().map(|l| format!("<li>{}</li>", esc(l))).collect();
    format!("<ol>{items}</ol>\n")
}

fn bars(latest: &[&Record], metric: &str) -> String {
    let values: Vec<Option<(f64, Option<[f64; 2]>)>> =
        latest.iter().map(|r| r.metrics.get(metric).map(|m| (m.value, m.ci95))).collect();
    let twin = format!("{metric}{UNCORRECTED}");
    let uncorrected: Vec<Option<f64>> = latest.iter().map(|r| r.metrics.get(&twin).map(|m| m.value)).collect();
    let beside = uncorrected.iter().any(Option::is_some);
    let Some(sample) = latest.iter().find_map(|r| r.metrics.get(metric)) else { return String::new() };
    let top = values
        .iter()
        .flatten()
        .map(|(v, ci)| ci.map_or(*v, |[_, hi]| hi.max(*v)))
        .chain(uncorrected.iter().flatten().copied())
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE)
        * 1.1;
    let y = |v: f64| TOP + (H - TOP - BOTTOM) * (1.0 - v / top);
    let slot = (W - LEFT - 10.0) / values.len() as f64;
    let mut svg = axis(top, &sample.unit);
    for (i, value) in values.iter().enumerate() {
        let Some((v, ci)) = value else { continue };
        let x = LEFT + slot * i as f64 + slot * 0.2;
        svg.push_str(&bar([x, y(*v), slot * 0.6], PALETTE[i % 8], "", &quantity(*v, &sample.unit)));
        if let Some([lo, hi]) = ci {
            let cx = x + slot * 0.3;
            let _ = write!(
                svg,
                "<path d=\"M{cx:.1},{:.1}V{:.1}M{:.1},{:.1}h8M{:.1},{:.1}h8\" stroke=\"#222\" fill=\"none\"/>",
                y(*lo),
                y(*hi),
                cx - 4.0,
                y(*lo),
                cx - 4.0,
                y(*hi)
            );
        }
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            x + slot * 0.3,
            H - BOTTOM + 14.0,
            i + 1
        );
    }
    for (i, u) in uncorrected.iter().enumerate() {
        let Some(u) = u else { continue };
        let x = LEFT + slot * i as f64 + slot * 0.8;
        let title = format!("uncorrected {}", quantity(*u, &sample.unit));
        svg.push_str(&bar([x, y(*u), slot * 0.15], PALETTE[i % 8], " fill-opacity=\"0.35\"", &title));
    }
    let title = match beside {
        true => format!(
            "{metric}: newest run per arm, CI95 whiskers; pale beside it: uncorrected (from each operation's actual start)"
        ),
        false => format!("{metric}: newest run per arm, CI95 whiskers"),
    };
    figure(&title, sample.higher_is_better, &sample.unit, svg, &provenance(latest))
}

/// One bar from the chart's floor up to `y`, at `x` and `width` wide, in `colour` (with `style`'s extra
/// attributes), its value as its tooltip.
fn bar([x, y, width]: [f64; 3], colour: &str, style: &str, title: &str) -> String {
    format!(
        "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"{:.1}\" fill=\"{colour}\"{style}><title>{}</title></rect>",
        (H - BOTTOM - y).max(0.0),
        esc(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_base_64_digits_of_a_fixed_width() {
        use crate::report::html_series::digits;
        assert_eq!(digits([0, 63, 64, 510].into_iter(), 2), "000_107-");
        assert_eq!(digits([0, 42, 99].into_iter(), 1), "0g_", "past the width: the largest number it holds");
    }

    #[test]
    fn one_bar_chart_per_metric_and_a_trend_where_a_series_has_history() {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/streams/seed003.jsonl"))
                .unwrap();
        let records: Vec<Record> = benchhost_record::reader::parse(std::path::Path::new("s"), text.as_bytes())
            .unwrap()
            .records
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        let page = |records: &[Record]| page(&History::of(records, NEEDS), &[]);
        let html = page(&records);
        assert_eq!(html.matches("<svg").count(), 1, "one metric, one run per series: bars only");
        assert!(!html.contains("latency by percentile"), "no open-loop latency, no percentile plot");
        assert!(
            html.contains("higher is better ↑") && html.contains("Apple M5 Max · commit 63084c56a811 · 2026-07-10")
        );
        assert_eq!(html.matches("<rect").count(), 2, "perthread and split");
        let mut later = records[0].clone();
        later.run.ts_ms += 86_400_000;
        let html = page(&[records[0].clone(), records[1].clone(), later]);
        assert_eq!(html.matches("<svg").count(), 2, "bars, and the history of the series with two runs");
        let data = html.split("data-chart='").nth(1).and_then(|d| d.split('\'').next()).unwrap().replace("&#39;", "'");
        let chart: serde_json::Value = serde_json::from_str(&data.replace("&amp;", "&")).unwrap();
        assert_eq!(chart["x"], "007-", "two runs: the first at 0 px, the last at 510 px, two digits each");
        assert_eq!(chart["panels"].as_array().unwrap().len(), 1, "one panel per metric");
        assert_eq!(chart["panels"][0][3], "", "a metric that never changed is a flat line: no digits");
        assert_eq!(html.matches("<script>").count(), 1, "one inline script draws the history");
        assert!(!html.contains("src="), "self-contained: nothing is fetched");
        assert!(!html.contains("Failed in their newest run"));

        // regression: a series whose newest run failed was charted with its older number, the failure unsaid.
        let mut failed = records[1].clone();
        failed.kind = Kind::Failure;
        failed.metrics.clear();
        failed.run.ts_ms += 1;
        failed.failure =
            serde_json::from_str(r#"{"cause":"invariant","message":"consumed == produced violated"}"#).ok();
        let html = page(&[records[0].clone(), records[1].clone(), failed]);
        assert!(html.contains("Failed in their newest run (1)") && html.contains("FAILED (invariant): consumed =="));
        assert_eq!(html.matches("<rect").count(), 1, "only the series that did not fail is charted");
        let mut calibration = records[0].clone();
        calibration.variant.insert(crate::analysis::calibrate::MARK.into(), "aa".into());
        let html = page(&[records[0].clone(), records[1].clone(), calibration]);
        assert_eq!(html.matches("<rect").count(), 2, "a calibration is not drawn");
        assert!(html.contains("1 calibration series (benchhost calibrate) are not drawn."));

        // An instruction count (`run --instructions`) is drawn as any other metric: its own chart, in its unit.
        let counted: Vec<Record> = records[..2]
            .iter()
            .map(|r| {
                let mut r = r.clone();
                let count = benchhost_record::MetricValue {
                    value: 1_207_620.0,
                    unit: "instructions".into(),
                    higher_is_better: false,
                    ci95: None,
                    n: Some(1),
                };
                r.metrics.insert(benchhost_record::INSTRUCTIONS.into(), count);
                r
            })
            .collect();
        let html = page(&counted);
        assert_eq!(html.matches("<svg").count(), 2, "the rig's metric and the count");
        assert!(html.contains("1,207,620 instructions"), "the bars are labelled in the count's unit");

        // Open loop: each percentile's uncorrected twin pale beside it, never a chart of its own, and one plot of
        // both by percentile, a solid and a dashed line per arm.
        let open_loop: Vec<Record> = records[..2]
            .iter()
            .map(|r| {
                let mut r = r.clone();
                for (i, p) in ["p50", "p90", "p99", "p999"].iter().enumerate() {
                    let us = |v: f64| benchhost_record::MetricValue {
                        value: v,
                        unit: "us".into(),
                        higher_is_better: false,
                        ci95: None,
                        n: Some(3),
                    };
                    r.metrics.insert(format!("{p}_append_us"), us(100.0 * 10f64.powi(i as i32)));
                    r.metrics.insert(format!("{p}_append_us_uncorrected"), us(90.0 + i as f64));
                }
                r
            })
            .collect();
        let html = page(&open_loop);
        assert_eq!(html.matches("<svg").count(), 6, "records_per_s, four percentiles and the percentile plot");
        assert!(!html.contains("<b>p99_append_us_uncorrected"), "no chart of an uncorrected twin alone");
        assert_eq!(html.matches("pale beside it: uncorrected").count(), 2 * 4, "in each chart's title and caption");
        assert_eq!(html.matches("<rect").count(), 2 + 4 * 4, "two arms' bars, and each percentile's twin");
        assert_eq!(html.matches("append latency by percentile").count(), 2, "title and caption");
        assert_eq!(html.matches("<polyline").count(), 4, "two arms, corrected and uncorrected");
        assert_eq!(html.matches("stroke-dasharray").count(), 2, "the uncorrected lines are dashed");
        assert!(html.contains(">99.9%</text>") && html.contains(">90%</text>"), "the percentile axis");
    }
}
