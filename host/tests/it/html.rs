//! The HTML report as a browser sees it: headless Chromium loads the page from the committed reference runs
//! and must build every chart; a screenshot is kept for the docs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::Sandbox;

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"].iter().map(PathBuf::from).find(|p| p.exists())
}

fn headless(browser: &Path, profile: &Path) -> Command {
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
    let mut cmd = sandbox.cmd();
    cmd.args(["report", "--format", "html", "--out", "report.html"]);
    for file in ["wal.jsonl", "kafka_topology.jsonl", "kafka_topology-tansu.jsonl"] {
        cmd.arg(results.join(file));
    }
    cmd.assert().success();
    let page = sandbox.path().join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    let charts = html.matches("<svg").count();
    // wal: 4 metrics; kafka_topology: 6 metrics; one run per series, so bars only.
    assert_eq!(charts, 10);

    let url = format!("file://{}", page.display());
    let dom = headless(&browser, &sandbox.path().join("profile")).args(["--dump-dom", &url]).output().unwrap();
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    let rendered = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(rendered.matches("<svg").count(), charts, "the browser built every chart");
    assert_eq!(rendered.matches("<rect").count(), html.matches("<rect").count());
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
