//! `benchhost trend` as a nightly job meets it: where each series' history changed, in JSON and as a gate.

use crate::support::Sandbox;
use serde_json::Value;

/// Night `i` of a series: `level` with ~2% of deterministic noise (uniform, from a multiplicative hash).
fn noisy(level: f64, i: u64) -> f64 {
    let u = (i.wrapping_mul(2_654_435_761) % 1000) as f64 / 1000.0 - 0.5;
    level * (1.0 + 0.07 * u)
}

fn line(bench: &str, host: &str, night: u64, metric: &str, higher: bool, value: f64) -> String {
    format!(
        r#"{{"schema":1,"bench":"{bench}","kind":"measurement","run":{{"ts_ms":{},"id":"n{night}","commit":"{night:0>12}","host":"{host}","cpu":"c","cores":2,"os":"linux/x86_64","profile":"release"}},"variant":{{"rows":1000}},"metrics":{{"{metric}":{{"value":{value},"unit":"ns","higher_is_better":{higher}}}}}}}"#,
        1_000_000 + night * 86_400_000
    ) + "\n"
}

/// wal: 200 nights, 8% slower from night 120. querier: 200 nights, 8% fewer records/s from night 195. A
/// 7-night series, and wal's last 20 nights again on another machine.
fn history(sandbox: &Sandbox) {
    let mut text = String::new();
    for night in 0..200 {
        text +=
            &line("wal", "h", night, "roundtrip_time", false, noisy(if night < 120 { 100.0 } else { 108.0 }, night));
        text += &line(
            "querier",
            "h",
            night,
            "records_per_s",
            true,
            noisy(if night < 195 { 1e6 } else { 0.92e6 }, night + 7),
        );
    }
    for night in 0..7 {
        text += &line("ingest", "h", night, "request_time", false, noisy(50.0, night));
    }
    for night in 180..200 {
        text += &line("wal", "other", night, "roundtrip_time", false, noisy(90.0, night));
    }
    sandbox.write("nightly.jsonl", &text);
}

#[test]
fn trend_finds_each_change_with_its_run_and_direction_and_gates_on_a_recent_regression() {
    let sandbox = Sandbox::new();
    history(&sandbox);
    let out = sandbox.cmd().args(["trend", "nightly.jsonl", "--json"]).assert().success();
    let json: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let points = json["change_points"].as_array().unwrap();
    let found: Vec<(&str, &str)> =
        points.iter().map(|p| (p["bench"].as_str().unwrap(), p["direction"].as_str().unwrap())).collect();
    assert_eq!(found, [("querier", "bad"), ("wal", "bad")], "{points:?}");
    let (querier, wal) = (&points[0], &points[1]);
    let index = wal["index"].as_u64().unwrap();
    assert!((119..=121).contains(&index), "{wal}");
    assert_eq!(wal["run"], format!("n{index}"));
    assert_eq!(wal["commit"], format!("{index:0>12}"));
    assert!((wal["ratio"].as_f64().unwrap() - 1.08).abs() < 0.02, "{wal}");
    assert_eq!((wal["provisional"].as_bool(), querier["provisional"].as_bool()), (Some(false), Some(true)));
    assert!(querier["ratio"].as_f64().unwrap() < 0.95 && querier["p"].as_f64().unwrap() < 1e-3, "{querier}");
    assert_eq!(wal["variant"]["rows"], 1000);

    // Every series is listed; the short one says why it has none; the other machine is a series of its own.
    let series = json["series"].as_array().unwrap();
    let listed: Vec<(&str, &str)> =
        series.iter().map(|s| (s["bench"].as_str().unwrap(), s["machine"].as_str().unwrap())).collect();
    assert_eq!(listed, [("ingest", "h / c"), ("querier", "h / c"), ("wal", "h / c"), ("wal", "other / c")]);
    assert_eq!(series[0]["reason"], "7 usable nights, fewer than the 10 the method needs");
    assert_eq!((series[2]["nights"].as_u64(), series[3]["nights"].as_u64()), (Some(200), Some(20)));

    // The gate: querier's regression started within the last 8 runs, wal's did not.
    let gate =
        sandbox.cmd().args(["trend", "nightly.jsonl", "--fail-on", "regression", "--within", "8"]).assert().code(1);
    let stderr = String::from_utf8_lossy(&gate.get_output().stderr).into_owned();
    assert!(stderr.contains("regression within the last 8 runs: querier rows=1000"), "{stderr}");
    let text = String::from_utf8_lossy(&gate.get_output().stdout).into_owned();
    assert!(text.contains(&format!("night {index} (run n{index}, commit {index:0>12}): x1.0")), "{text}");
    let args = ["trend", "nightly.jsonl", "wal", "--fail-on", "regression", "--within", "8"];
    sandbox.cmd().args(args).assert().success();

    // A gate that could never fail is refused: the scan needs 5 nights after a step to see it.
    let never =
        sandbox.cmd().args(["trend", "nightly.jsonl", "--fail-on", "regression", "--within", "3"]).assert().code(2);
    let stderr = String::from_utf8_lossy(&never.get_output().stderr).into_owned();
    assert!(
        stderr.contains("--within <K>") && stderr.contains("the gate would never fail; give 5 or more"),
        "{stderr}"
    );

    let missing = sandbox.cmd().args(["trend", "nightly.jsonl", "--metric", "nosuch"]).assert().failure();
    let stderr = String::from_utf8_lossy(&missing.get_output().stderr).into_owned();
    assert_eq!(stderr.trim(), "error: no series with metric `nosuch` matched", "the metric is named");
}

#[test]
fn the_markdown_report_lists_the_change_points_after_the_newest_runs() {
    let sandbox = Sandbox::new();
    history(&sandbox);
    let args = ["report", "nightly.jsonl", "--format", "md", "--no-change-points"];
    let plain = sandbox.cmd().args(args).assert().success();
    assert!(!String::from_utf8_lossy(&plain.get_output().stdout).contains("Change points"), "left out when asked");
    let out = sandbox.cmd().args(["report", "nightly.jsonl", "--format", "md"]).assert().success();
    let md = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let section = md.split("## Change points\n\n").nth(1).unwrap_or_else(|| panic!("{md}"));
    let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| querier") || l.starts_with("| wal")).collect();
    assert_eq!(rows.len(), 2, "{section}");
    assert!(
        rows[0].starts_with("| querier rows=1000 | records_per_s | ")
            && rows[0].ends_with("| regression (provisional) |"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].starts_with("| wal rows=1000 | roundtrip_time | 1") && rows[1].contains("of 200 | n1"),
        "{}",
        rows[1]
    );
    assert!(rows[1].contains("| +8.") || rows[1].contains("| +7."), "{}", rows[1]);
    // The change and its CI95 in one unit: percent (regression: the CI read as a ratio, `[1.0846, 1.1150]`).
    assert!(rows[1].contains("% | [+"), "{}", rows[1]);

    // A report of one run has no history to scan: no section.
    sandbox.write("one.jsonl", &line("wal", "h", 0, "roundtrip_time", false, 100.0));
    let out = sandbox.cmd().args(["report", "one.jsonl", "--format", "md"]).assert().success();
    assert!(!String::from_utf8_lossy(&out.get_output().stdout).contains("Change points"));
}

/// The HTML report of `inputs` in `sandbox`, rendered by `browser`: the page as written, and the part of the DOM
/// its script drew (before the script itself); the render must succeed without a script error.
fn rendered(sandbox: &Sandbox, browser: &std::path::Path, inputs: &[&str]) -> (String, String) {
    sandbox.cmd().arg("report").args(inputs).args(["--format", "html", "--out", "r.html"]).assert().success();
    let page = sandbox.path().join("r.html");
    let url = format!("file://{}#all", page.display());
    let dom =
        crate::html::headless(browser, &sandbox.path().join("profile")).args(["--dump-dom", &url]).output().unwrap();
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    assert!(!String::from_utf8_lossy(&dom.stderr).contains("Uncaught"), "no script errors");
    let rendered = String::from_utf8_lossy(&dom.stdout);
    let (drawn, _script) = rendered.split_once("<script>").expect("the page's script");
    (std::fs::read_to_string(&page).unwrap(), drawn.to_string())
}

/// Chromium, which CI provides; `None` (the test skipped, and saying so) elsewhere without it.
fn browser() -> Option<std::path::PathBuf> {
    let found = crate::html::chromium();
    if found.is_none() {
        assert!(std::env::var_os("CI").is_none(), "CI must provide chromium (.ci/run installs it)");
        eprintln!("skipped: no chromium (apt-get install chromium)");
    }
    found
}

#[test]
fn the_html_report_marks_each_change_point_and_lists_the_newest_first() {
    let Some(browser) = browser() else { return };
    let sandbox = Sandbox::new();
    history(&sandbox);
    let (html, drawn) = rendered(&sandbox, &browser, &["nightly.jsonl"]);
    let list = html.split("Newest change points (2 of 2)").nth(1).unwrap_or_else(|| panic!("{html}"));
    let (querier, wal) = (list.find("querier rows=1000").unwrap(), list.find("wal rows=1000").unwrap());
    assert!(querier < wal, "the newer change first: {list}");
    assert_eq!(drawn.matches("class=\"change\"").count(), 2, "a line per change point");
    assert_eq!(drawn.matches("stroke=\"#d62728\"").count(), 2, "both are regressions, drawn red");
}

/// Accepts wal's newest change point in `nightly.jsonl` (night 120, +8%) into `acks.jsonl`.
fn accept_wal_step(sandbox: &Sandbox) {
    let args = ["accept", "^wal rows=1000$", "--results", "nightly.jsonl", "--out", "acks.jsonl"];
    sandbox.cmd().args(args).args(["--reason", "fsync on every batch (#400)", "--by", "ann"]).assert().success();
}

#[test]
fn an_accepted_step_is_reported_as_accepted_and_a_later_regression_still_gates() {
    let sandbox = Sandbox::new();
    history(&sandbox);
    let gate = ["--fail-on", "regression", "--within", "100"];
    sandbox.cmd().args(["trend", "nightly.jsonl", "wal"]).args(gate).assert().code(1);
    accept_wal_step(&sandbox);
    let (acks, _) = sandbox.records("acks.jsonl");
    let a = acks[0].acknowledgement.as_ref().unwrap();
    assert_eq!((acks.len(), a.source.as_str(), a.metric.as_str()), (1, "change_point", "roundtrip_time"));
    let night = a.from_commit.as_deref().unwrap().parse::<u64>().unwrap();
    assert!((119..=121).contains(&night), "the step's first night: {a:?}");

    // The step is a boundary, reported as accepted on every later run, and the gate passes.
    let out = sandbox.cmd().args(["trend", "nightly.jsonl", "acks.jsonl", "--json"]).assert().success();
    let json: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let benches: Vec<&str> =
        json["change_points"].as_array().unwrap().iter().map(|p| p["bench"].as_str().unwrap()).collect();
    assert_eq!(benches, ["querier"], "wal's step is no change point any more");
    let accepted = json["accepted"].as_array().unwrap();
    assert_eq!(accepted.len(), 1, "{accepted:?}");
    assert_eq!((accepted[0]["bench"].as_str(), accepted[0]["index"].as_u64()), (Some("wal"), Some(night)));
    assert_eq!(
        (accepted[0]["reason"].as_str(), accepted[0]["by"].as_str()),
        (Some("fsync on every batch (#400)"), Some("ann"))
    );
    let passed = sandbox.cmd().args(["trend", "nightly.jsonl", "acks.jsonl", "wal"]).args(gate).assert().success();
    let text = String::from_utf8_lossy(&passed.get_output().stdout).into_owned();
    assert!(text.contains(&format!("night {night} (run n{night}, commit {night:0>12}): x1.0")), "{text}");
    assert!(text.contains("accepted: fsync on every batch (#400) (ann, "), "{text}");

    // Forty nights later wal is 10% slower again: a change point of its own, and the gate fails on it.
    let mut more = std::fs::read_to_string(sandbox.path().join("nightly.jsonl")).unwrap();
    for night in 200..260 {
        more +=
            &line("wal", "h", night, "roundtrip_time", false, noisy(if night < 220 { 108.0 } else { 119.0 }, night));
    }
    sandbox.write("nightly.jsonl", &more);
    let failed =
        sandbox.cmd().args(["trend", "nightly.jsonl", "acks.jsonl", "wal", "--json"]).args(gate).assert().code(1);
    let json: Value = serde_json::from_slice(&failed.get_output().stdout).unwrap();
    let points: Vec<u64> =
        json["change_points"].as_array().unwrap().iter().map(|p| p["index"].as_u64().unwrap()).collect();
    assert!(points.len() == 1 && (218..=222).contains(&points[0]), "{points:?}");
    assert_eq!(json["accepted"].as_array().unwrap().len(), 1, "the accepted step stays accepted");

    // The Markdown report lists it with its reason.
    let out = sandbox.cmd().args(["report", "nightly.jsonl", "acks.jsonl", "--format", "md"]).assert().success();
    let md = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let row = md.lines().find(|l| l.starts_with("| wal rows=1000 | roundtrip_time |") && l.contains("accepted"));
    assert!(row.is_some_and(|r| r.contains("| accepted: fsync on every batch (#400) (ann, 20")), "{md}");
}

#[test]
fn the_html_report_marks_an_accepted_step_in_its_own_colour() {
    let Some(browser) = browser() else { return };
    let sandbox = Sandbox::new();
    history(&sandbox);
    accept_wal_step(&sandbox);
    let (_, drawn) = rendered(&sandbox, &browser, &["nightly.jsonl", "acks.jsonl"]);
    assert_eq!(drawn.matches("class=\"change accepted\"").count(), 1, "wal's accepted step");
    assert_eq!(drawn.matches("class=\"change\"").count(), 1, "querier's change point");
    assert_eq!(drawn.matches("stroke=\"#1f77b4\"").count(), 1, "drawn blue");
    assert!(drawn.contains("accepted +"), "its label and hover say accepted");
}
