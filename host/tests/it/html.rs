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
fn chromium_renders_every_chart_of_the_report() {
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
    for file in ["wal.jsonl", "kafka_topology.jsonl", "kafka_topology-tansu.jsonl"] {
        cmd.arg(results.join(file));
    }
    cmd.assert().success();
    let page = sandbox.path().join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    let charts = html.matches("<svg").count();
    // wal: 4 metrics and 6 series of two runs each, a history chart per series; kafka_topology: 6 metrics, and
    // for its open-loop arms 4 percentiles (their uncorrected twins beside them), 3 more metrics and the
    // percentile plot.
    assert_eq!(charts, 4 + 6 + (6 + 4 + 3 + 1));

    // #all: every history chart is drawn at once, not only those near the screen.
    let url = format!("file://{}", page.display());
    let all = format!("{url}#all");
    let dom = headless(&browser, &sandbox.path().join("profile")).args(["--dump-dom", &all]).output().unwrap();
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    let rendered = String::from_utf8_lossy(&dom.stdout);
    let (drawn, _script) = rendered.split_once("<script>").expect("the page's script");
    assert_eq!(drawn.matches("<svg").count(), charts, "the browser built every chart");
    assert_eq!(drawn.matches("<rect").count(), html.matches("<rect").count());
    let percentile_lines = 2 * 2;
    let (page_svg, _) = html.split_once("<script>").expect("the page's script");
    assert_eq!(page_svg.matches("<polyline").count(), percentile_lines, "two open-loop arms, solid and dashed");
    assert_eq!(drawn.matches("<polyline").count(), 6 * 4 + percentile_lines, "and a line per series and metric");
    assert_eq!(drawn.matches("<polygon").count(), 6 * 4, "a band per series and metric");
    assert!(!drawn.contains("data-chart="), "no chart is left undrawn");
    assert!(!String::from_utf8_lossy(&dom.stderr).contains("Uncaught"), "no script errors");

    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report.png");
    let _ = std::fs::remove_file(&shot);
    let out = headless(&browser, &sandbox.path().join("profile"))
        .args(["--window-size=1000,1400", &format!("--screenshot={}", shot.display()), &url])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(std::fs::metadata(&shot).unwrap().len() > 20_000, "a real picture, not a blank page");
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
