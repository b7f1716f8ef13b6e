//! `benchhost report --format html`: one self-contained page (inline SVG, CSS and a script, no fetch). It
//! opens with the verdicts as a forest plot (`html_forest`), regressions first, each row linked to its rig;
//! then the series that failed in their newest run; then per rig its newest run block by block (`blocks`,
//! `html_block`: charts along what each block varies, the metrics equal in every arm as table lines, the
//! tables the rig declares), and for every series with several runs one chart of its whole history
//! (`html_series`), its change points marked as `trend` finds them. Values are always drawn as themselves; the
//! direction of goodness is written on each chart, never implied by flipping.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::analysis::series_changes::SeriesChanges;
use crate::report::html_text::{anchor, esc};
use benchhost_record::history::{Group, History, Needs};
use benchhost_record::{Decision, Kind, Record, SeriesKey};

/// What a page needs of each series: the newest two records (the newest run's charts, and a large block's
/// table with the change from the run before), and the whole history in 64 time buckets per metric.
pub const NEEDS: Needs = Needs { newest: 2, trend: 0, buckets: 64 };

/// The page for `history` (see [`NEEDS`]) and the change points of its series.
pub fn page(history: &History, changes: &[SeriesChanges]) -> String {
    let (verdicts, groups): (Vec<_>, Vec<_>) = history.groups().into_iter().partition(|(key, _)| key.verdict.is_some());
    let groups: Vec<&Group> = groups.into_iter().map(|(_, g)| g).collect();
    let verdicts: Vec<&Record> = verdicts.into_iter().map(|(_, g)| g.latest()).collect();
    // What a reviewer reads first: the verdicts, grouped by what they compare against.
    let verdict_groups = crate::report::verdicts::groups(&verdicts);
    // A series whose newest run failed is listed at the top instead of charted with an older number.
    let mut body = crate::report::html_forest::html(&verdict_groups)
        + &failures(&groups)
        + &crate::report::trend::html_newest(changes);
    let marks = crate::report::trend::marks(changes);
    let changed = changed_between_arms(&verdicts);
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
        let _ = writeln!(body, "<section id=\"{}\"><h2>{}</h2>", anchor(bench), esc(bench));
        for block in crate::report::chart_groups::groups(&latest) {
            body.push_str(&crate::report::html_block::html(&block, &series, &changed));
        }
        let (_, names) = crate::report::export::short_names(&latest.iter().map(|r| &r.variant).collect::<Vec<_>>());
        for (group, name) in series.iter().zip(&names).filter(|(g, _)| g.count > 1) {
            if !any_history {
                body.push_str(HISTORY_LEGEND);
                any_history = true;
            }
            let marked = marks.get(&benchhost_record::series(group.latest())).map_or(&[][..], Vec::as_slice);
            body.push_str(&crate::report::html_series::history_chart(group, &name.replace('/', " "), marked));
        }
        body.push_str("</section>\n");
    }
    let script = match any_history {
        true => format!("<script>\n{}</script>\n", include_str!("history.js")),
        false => String::new(),
    };
    // Sections off the screen are not laid out (a rig of many arms has a table of hundreds of rows).
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>benchhost report</title>\n<style>{STYLE}</style></head><body><h1>benchhost report</h1>\n{body}{script}</body></html>\n"
    )
}

/// The page's style sheet.
const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:2em;color:#222;max-width:1400px} \
figure{margin:1em 0 2em} .charts{display:flex;flex-wrap:wrap;column-gap:2em} section{content-visibility:auto;contain-intrinsic-size:auto 2000px} \
section.verdicts{content-visibility:visible} \
figure.history{content-visibility:auto;contain-intrinsic-size:640px 240px} \
figcaption,p.provenance{font-size:12px;color:#555} svg text{font:11px system-ui,sans-serif} ol{font-size:13px} \
table{border-collapse:collapse;font-size:12px;margin:0.5em 0} td,th{padding:2px 6px;border-bottom:1px solid #ddd;text-align:right} \
caption{text-align:left;font-weight:bold} .legend{font-size:12px} .legend i{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px} \
table.forest td{vertical-align:middle} table.forest td.series{text-align:left;min-width:280px;font-size:12px} table.forest td.change{white-space:nowrap} table.forest svg{display:block}";

/// Each arm and metric that a comparison between arms (`run --interleave`) found changed: however close their
/// intervals, such a metric is charted, never a line of the table of what is equal in every arm.
fn changed_between_arms(verdicts: &[&Record]) -> BTreeSet<(SeriesKey, String)> {
    let changed = |r: &&&Record| {
        let v = r.verdict.as_ref();
        crate::report::comparison::reference_of(r).is_some()
            && v.is_some_and(|v| matches!(v.decision, Decision::Regressed | Decision::Improved))
    };
    let metric = |r: &Record| r.verdict.as_ref().and_then(|v| v.metric.clone()).unwrap_or_default();
    verdicts.iter().filter(changed).map(|r| (benchhost_record::series(r), metric(r))).collect()
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
        let html = page(&[records[0].clone(), records[1].clone(), later.clone()]);
        assert_eq!(html.matches("<svg").count(), 2, "bars, and the history of the series with two runs");
        let data = html.split("data-chart='").nth(1).and_then(|d| d.split('\'').next()).unwrap().replace("&#39;", "'");
        let chart: serde_json::Value = serde_json::from_str(&data.replace("&amp;", "&")).unwrap();
        assert_eq!(chart["x"], "007-", "two runs: the first at 0 px, the last at 510 px, two digits each");
        assert_eq!(chart["panels"].as_array().unwrap().len(), 1, "one panel per metric");
        // Per run: its value, the lowest and highest of its span (one run each) and its CI95, in px from the top.
        assert_eq!(chart["panels"][0][3], "KKKg0KKKg0", "a value that never changed, within its CI95");
        let without_ci: Vec<Record> = [&records[0], &records[1], &later]
            .iter()
            .map(|r| {
                let mut r = (*r).clone();
                r.metrics.values_mut().for_each(|m| m.ci95 = None);
                r
            })
            .collect();
        let html_flat = page(&without_ci);
        let data = html_flat.split("data-chart='").nth(1).and_then(|d| d.split('\'').next()).unwrap();
        let chart_flat: serde_json::Value =
            serde_json::from_str(&data.replace("&#39;", "'").replace("&amp;", "&")).unwrap();
        assert_eq!(
            chart_flat["panels"][0][3], "",
            "a metric that never changed, without a CI95: a flat line, no digits"
        );
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
        assert_eq!(html.matches("<rect").count(), 0, "the series that did not fail is one arm: nothing to chart");
        assert!(html.contains("<td style=\"text-align:left\">in its one arm</td>"), "its values in a table: {html}");
        let mut calibration = records[0].clone();
        calibration.variant.insert(crate::analysis::calibrate::MARK.into(), "aa".into());
        let html = page(&[records[0].clone(), records[1].clone(), calibration]);
        assert_eq!(html.matches("<rect").count(), 2, "a calibration is not drawn");
        assert!(html.contains("1 calibration series (benchhost calibrate) are not drawn."));

        // An instruction count (`run --instructions`) is drawn as any other metric: its own chart, in its unit;
        // equal in both arms, a line of the table beneath them instead.
        let counted = |second: f64| -> Vec<Record> {
            records[..2]
                .iter()
                .zip([1_207_620.0, second])
                .map(|(r, value)| {
                    let mut r = r.clone();
                    let count = benchhost_record::MetricValue {
                        value,
                        unit: "instructions".into(),
                        higher_is_better: false,
                        ci95: None,
                        n: Some(1),
                    };
                    r.metrics.insert(benchhost_record::INSTRUCTIONS.into(), count);
                    r
                })
                .collect()
        };
        let html = page(&counted(1_300_000.0));
        assert_eq!(html.matches("<svg").count(), 2, "the rig's metric and the count");
        assert!(html.contains("1,207,620 instructions"), "the bars are labelled in the count's unit");
        let html = page(&counted(1_207_620.0));
        assert_eq!(html.matches("<svg").count(), 1, "no chart of a count equal in every arm");
        assert!(html.contains("<td>1,207,620 instructions</td><td style=\"text-align:left\">in every arm (2)</td>"));

        // Open loop: each percentile's uncorrected twin pale beside it, never a chart of its own, and one plot of
        // both by percentile, a solid and a dashed line per arm.
        let open_loop: Vec<Record> = records[..2]
            .iter()
            .zip([1.0, 1.5])
            .map(|(r, slower)| {
                let mut r = r.clone();
                for (i, p) in ["p50", "p90", "p99", "p999"].iter().enumerate() {
                    let us = |v: f64| benchhost_record::MetricValue {
                        value: v,
                        unit: "us".into(),
                        higher_is_better: false,
                        ci95: None,
                        n: Some(3),
                    };
                    r.metrics.insert(format!("{p}_append_us"), us(slower * 100.0 * 10f64.powi(i as i32)));
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
        assert!(html.contains(">mode=split</text>"), "the percentile plot's lines are named by their arm");
        assert_eq!(html.matches("append latency by percentile").count(), 2, "title and caption");
        assert_eq!(html.matches("<polyline").count(), 4, "two arms, corrected and uncorrected");
        assert_eq!(html.matches("stroke-dasharray").count(), 2, "the uncorrected lines are dashed");
        assert!(html.contains(">99.9%</text>") && html.contains(">90%</text>"), "the percentile axis");
    }
}
