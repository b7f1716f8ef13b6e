//! The HTML report as a browser sees it: headless Chromium loads the page from the committed reference runs
//! and must build every chart; a screenshot is kept for the docs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::Sandbox;

pub(crate) fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"].iter().map(PathBuf::from).find(|p| p.exists())
}

pub(crate) fn headless(browser: &Path, profile: &Path) -> Command {
    let mut cmd = Command::new(browser);
    // The flags a closed network needs (no background fetches), as the environment documents.
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
    ])
    .args(["--disable-sync", "--no-first-run", "--disable-quic"])
    .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

#[test]
fn chromium_renders_the_report_of_the_committed_runs_verdicts_first() {
    let Some(browser) = chromium() else {
        assert!(std::env::var_os("CI").is_none(), "CI must provide chromium (.ci/run installs it)");
        eprintln!("skipped: no chromium (apt-get install chromium)");
        return;
    };
    let sandbox = Sandbox::new();
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results");
    let wal = results.join("wal.jsonl");
    sandbox.write("wal-later.jsonl", &a_day_later(&std::fs::read_to_string(&wal).unwrap()));
    let mut cmd = sandbox.cmd();
    cmd.args(["report", "--format", "html", "--out", "report.html", "wal-later.jsonl"]);
    let streams = committed_streams(&results);
    cmd.args(&streams);
    cmd.assert().success();
    let page = sandbox.path().join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();

    // The verdicts first, as a forest plot: a row per comparison and metric, regressions at the top, each row
    // linked to its rig's section.
    let first = html.find("<section").unwrap();
    assert!(html[first..].starts_with("<section class=\"verdicts\">"), "the page opens with the verdicts");
    let rows: Vec<&str> = html.split("<tr class=\"forest-row\" data-decision=\"").skip(1).collect();
    assert_eq!(rows.len(), newest_verdicts(&streams), "a row per comparison and metric");
    assert!(rows[0].starts_with("regressed\""), "a regression first: {}", &rows[0][..80]);
    for row in &rows {
        let target = row.split("href=\"#").nth(1).and_then(|t| t.split('"').next()).expect("a link");
        assert!(html.contains(&format!("<section id=\"{target}\">")), "{target} is a section of the page");
    }

    // cache_tier's three tiers, three lines over rows on a log axis, named by their values.
    let warm = html.split("<h3>cache=warm upstream=canned</h3>").nth(1).expect("the warm, canned block");
    let warm = warm.split("<h3>").next().unwrap();
    let chart = figure_of(warm, "request_time");
    assert!(chart.contains("data-x=\"rows\" data-x-scale=\"log\""), "{chart}");
    for tier in ["tier=delta_hit", "tier=object_hit", "tier=passthrough"] {
        assert!(chart.contains(&format!("</i>{tier}</span>")), "{tier} in the legend: {chart}");
    }
    assert_eq!(chart.matches("<polyline").count(), 3, "a line per tier");
    assert_eq!(chart.matches("<circle").count(), 9, "a point per arm");

    // Nothing charted that does not vary: compaction's file counts are lines of a table.
    let compaction = html.split("<section id=\"rig-compaction\">").nth(1).unwrap().split("</section>").next().unwrap();
    for constant in ["input_files", "output_files"] {
        assert!(!compaction.contains(&format!("data-metric=\"{constant}\"")), "{constant} is not charted");
        assert_eq!(compaction.matches(&format!("<th style=\"text-align:left\">{constant}</th>")).count(), 2);
    }
    assert!(compaction.contains("data-metric=\"rewrite_time\" data-x=\"storage\" data-x-scale=\"category\""));
    // The querier's mechanism as the table it declares.
    let querier = html.split("<section id=\"rig-querier\">").nth(1).unwrap().split("</section>").next().unwrap();
    // One per block: the lookups and the ordered shapes report what the other does not take, so are drawn apart.
    assert_eq!(querier.matches("data-table=\"mechanism\"").count(), 6, "one per block");
    assert!(!querier.contains("data-metric=\"files_reached\""));

    // #all: every history chart is drawn at once, not only those near the screen.
    let url = format!("file://{}", page.display());
    let all = format!("{url}#all");
    let dom = headless(&browser, &sandbox.path().join("profile")).args(["--dump-dom", &all]).output().unwrap();
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    let rendered = String::from_utf8_lossy(&dom.stdout);
    let (drawn, _script) = rendered.split_once("<script>").expect("the page's script");
    let (page_svg, _) = html.split_once("<script>").expect("the page's script");
    assert_eq!(drawn.matches("<svg").count(), page_svg.matches("<svg").count(), "the browser built every chart");
    // Every series of several runs (wal's 6 of two, 4 metrics each, and the older runs in results.jsonl): per
    // metric a band and a line, and per run a dot and a CI95 whisker.
    let panels: usize = page_svg
        .split("data-chart='")
        .skip(1)
        .map(|d| {
            let data = d.split('\'').next().unwrap().replace("&#39;", "'").replace("&amp;", "&");
            serde_json::from_str::<serde_json::Value>(&data).unwrap()["panels"].as_array().unwrap().len()
        })
        .sum();
    assert!(panels >= 6 * 4, "{panels}");
    assert_eq!(drawn.matches("<polygon").count(), panels, "a band per series and metric");
    let lines = drawn.matches("<polyline").count() - page_svg.matches("<polyline").count();
    assert_eq!(lines, panels, "and a line");
    assert!(drawn.matches("<line class=\"ci\"").count() >= 6 * 4 * 2, "a whisker per run of wal's four metrics");
    assert!(!drawn.contains("data-chart="), "no chart is left undrawn");
    assert!(!String::from_utf8_lossy(&dom.stderr).contains("Uncaught"), "no script errors");

    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report.png");
    let _ = std::fs::remove_file(&shot);
    let out = headless(&browser, &sandbox.path().join("profile"))
        .args(["--window-size=1200,1400", &format!("--screenshot={}", shot.display()), &url])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(std::fs::metadata(&shot).unwrap().len() > 20_000, "a real picture, not a blank page");
}

/// Every committed results stream (`results/*.jsonl`), in name order.
fn committed_streams(results: &Path) -> Vec<PathBuf> {
    let mut streams: Vec<PathBuf> = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    streams.sort();
    streams
}

/// How many comparisons (bench, variant, metric, other side) the verdicts of `streams` make.
fn newest_verdicts(streams: &[PathBuf]) -> usize {
    let mut seen = std::collections::BTreeSet::new();
    for stream in streams {
        for line in std::fs::read_to_string(stream).unwrap().lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            if record["kind"] == "verdict" {
                let v = &record["verdict"];
                seen.insert((
                    record["bench"].to_string(),
                    record["variant"].to_string(),
                    v["metric"].to_string(),
                    v["against"].to_string(),
                ));
            }
        }
    }
    seen.len()
}

/// The figure of `metric` in `html`.
fn figure_of<'a>(html: &'a str, metric: &str) -> &'a str {
    let at = html.find(&format!("data-metric=\"{metric}\"")).unwrap_or_else(|| panic!("no chart of {metric}"));
    let start = html[..at].rfind("<figure>").unwrap();
    &html[start..start + html[start..].find("</figure>").unwrap()]
}

/// `stream` as the next day's run: new run ids, each value 10% higher, so each series has a history.
fn a_day_later(stream: &str) -> String {
    let mut out = String::new();
    for line in stream.lines() {
        let mut record: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(run) = record.get_mut("run") {
            run["ts_ms"] = (run["ts_ms"].as_u64().unwrap() + 86_400_000).into();
            run["id"] = format!("{}-later", run["id"].as_str().unwrap()).into();
        }
        for metric in record["metrics"].as_object_mut().into_iter().flat_map(|m| m.values_mut()) {
            metric["value"] = (metric["value"].as_f64().unwrap() * 1.1).into();
        }
        out.push_str(&record.to_string());
        out.push('\n');
    }
    out
}

#[test]
fn the_charts_of_the_committed_runs_are_labelled_at_round_numbers() {
    let sandbox = Sandbox::new();
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results");
    let mut cmd = sandbox.cmd();
    cmd.args(["report", "--format", "html", "--out", "report.html"]).args(committed_streams(&results));
    cmd.assert().success();
    let html = std::fs::read_to_string(sandbox.path().join("report.html")).unwrap();
    // Every y-axis label (right-aligned left of the plot): 1, 2 or 5 times a power of ten, or a multiple of one,
    // so at most two significant digits ("1.5 ms", "2,000,000 rows/s"; regression: "581,487 rows/s").
    let labels: Vec<&str> = html
        .split("text-anchor=\"end\">")
        .skip(1)
        .filter_map(|rest| rest.split("</text>").next())
        .filter(|label| label.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert!(labels.len() > 50, "the committed runs draw many axes: {}", labels.len());
    for label in &labels {
        let number: String = label.split(' ').next().unwrap().chars().filter(|c| c.is_ascii_digit()).collect();
        let significant = number.trim_start_matches('0').trim_end_matches('0');
        assert!(significant.len() <= 2, "`{label}` is not a round number");
    }
}
