//! What users of Criterion and hyperfine expect to find (issue 15): measurement knobs and a cell filter on the
//! command line, the change against the last run, exports in the same run, JSON output, completions, a man
//! page, `-q`/`-v`, and an example in every `--help`.

use crate::support::{Sandbox, fault_plugins};

const SETTINGS: &str = "[defaults]\nwarmup = \"10ms\"\nmeasurement = \"50ms\"\nsamples = 5\n";

fn output(sandbox: &Sandbox, args: &[&str], plugins: bool) -> (i32, String, String) {
    let mut cmd = sandbox.cmd();
    cmd.args(args);
    if plugins {
        cmd.arg("--plugin-dir").arg(fault_plugins());
    }
    let out = cmd.output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn matrix(sandbox: &Sandbox) {
    sandbox.write("rigs.toml", &format!("{SETTINGS}[rig.healthy]\nmatrix = {{ after = [1, 2, 3] }}\n"));
}

#[test]
fn a_filter_and_the_measurement_knobs_shape_the_run_like_cargo_bench() {
    let sandbox = Sandbox::new();
    matrix(&sandbox);
    let args = ["run", "--out", "r.jsonl", "after=[13]", "--samples", "7", "--measurement", "70ms", "--warmup", "0s"];
    let (code, _, stderr) = output(&sandbox, &args, true);
    assert_eq!(code, 0, "{stderr}");
    let (records, _) = sandbox.records("r.jsonl");
    let afters: Vec<i64> = records.iter().map(|r| r.variant["after"].as_i64().unwrap()).collect();
    assert_eq!(afters, [1, 3], "only the cells whose label matches");
    assert_eq!(records[0].cell.as_ref().unwrap().samples, 7);
    let (code, _, stderr) = output(&sandbox, &["plan", "nothing-matches-this"], true);
    assert_eq!(code, 2);
    assert!(stderr.contains("no cell matches `nothing-matches-this` (the matrix has 3"), "{stderr}");
}

#[test]
fn a_second_run_shows_the_change_against_the_first_and_exports_in_every_format() {
    let sandbox = Sandbox::new();
    matrix(&sandbox);
    let (code, first, _) = output(&sandbox, &["run", "--out", "r.jsonl"], true);
    assert_eq!(code, 0);
    assert!(!first.contains("change against the previous record"), "nothing to compare with yet: {first}");
    let exports =
        ["--export-json", "e.json", "--export-csv", "e.csv", "--export-markdown", "e.md", "--export-html", "e.html"];
    let mut args = vec!["run", "--out", "r.jsonl"];
    args.extend(exports);
    let (code, second, stderr) = output(&sandbox, &args, true);
    assert_eq!(code, 0, "{stderr}");
    assert!(second.contains("change against the previous record of each series in r.jsonl"), "{second}");
    assert_eq!(second.matches("iter_time").count(), 6, "three cells: a result and a change each: {second}");
    let read = |name: &str| std::fs::read_to_string(sandbox.path().join(name)).unwrap();
    let json: Vec<benchhost_record::Record> = serde_json::from_str(&read("e.json")).unwrap();
    assert_eq!(json.len(), 3, "this run's records only");
    assert_eq!(read("e.csv").lines().count(), 1 + 3);
    assert!(read("e.md").contains("## healthy"));
    // The page of this run's three arms: a chart of iter_time where it differs between them, else a line of the
    // table of what every arm shares.
    let html = read("e.html");
    let section = html.split("<section id=\"rig-healthy\">").nth(1).expect("the rig's section");
    assert!(section.contains("data-metric=\"iter_time\"") || section.contains(">iter_time</th>"), "{html}");
    let (_, quiet, _) = output(&sandbox, &["run", "--out", "r.jsonl", "--no-previous"], true);
    assert!(!quiet.contains("change against"), "{quiet}");
}

#[test]
fn a_paired_run_is_never_the_previous_record_of_a_plain_series() {
    // regression (issue 81): a duel's records were the previous record of the plain series, and the next plain
    // run of identical code read `elapsed_s +341.4% (regressed)`.
    let sandbox = Sandbox::new();
    matrix(&sandbox);
    let paired = ["run", "--out", "r.jsonl", "--interleave", "after", "--rounds", "2"];
    let (code, _, stderr) = output(&sandbox, &paired, true);
    assert_eq!(code, 0, "{stderr}");
    let (code, plain, stderr) = output(&sandbox, &["run", "--out", "r.jsonl"], true);
    assert_eq!(code, 0, "{stderr}");
    assert!(!plain.contains("change against the previous record"), "no plain record before it: {plain}");
    let (_, again, _) = output(&sandbox, &["run", "--out", "r.jsonl"], true);
    assert!(again.contains("change against the previous record"), "the plain run before it: {again}");
    // `show` lists the series of each method apart, naming the paired one's.
    let (_, shown, _) = output(&sandbox, &["show", "r.jsonl"], false);
    assert!(shown.contains("[alternate]"), "{shown}");
    let (_, trend, stderr) = output(&sandbox, &["trend", "r.jsonl", "--json"], false);
    let compact = trend.replace([' ', '\n'], "");
    assert!(compact.contains(r#""method":"alternate""#), "trend keeps the paired nights apart: {trend}{stderr}");
}

#[test]
fn quiet_prints_nothing_and_verbose_names_each_cell_as_it_ends() {
    let sandbox = Sandbox::new();
    matrix(&sandbox);
    let (code, stdout, stderr) = output(&sandbox, &["-q", "run", "--out", "r.jsonl"], true);
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    let (code, _, stderr) = output(&sandbox, &["run", "-v", "--out", "r.jsonl"], true);
    assert_eq!(code, 0);
    assert_eq!(stderr.matches(": measured in ").count(), 3, "{stderr}");
}

#[test]
fn list_plan_and_compare_speak_json() {
    let sandbox = Sandbox::new();
    matrix(&sandbox);
    let (_, list, _) = output(&sandbox, &["list", "--json"], true);
    let list: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(list["benchhost"]["plugin_api"], "0.1.0");
    let rigs = &list["plugins"][0]["plugin"]["rigs"];
    assert!(rigs.as_array().unwrap().iter().any(|r| r["name"] == "healthy"), "{rigs}");
    let (_, plan, _) = output(&sandbox, &["plan", "--json"], true);
    let plan: serde_json::Value = serde_json::from_str(&plan).unwrap();
    assert_eq!(plan.as_array().unwrap().len(), 3);
    assert_eq!((plan[2]["index"].as_u64(), plan[2]["variant"]["after"].as_i64()), (Some(2), Some(3)));
    assert_eq!(output(&sandbox, &["run", "--out", "r.jsonl"], true).0, 0);
    let (code, compare, _) = output(&sandbox, &["compare", "r.jsonl", "r.jsonl", "--json"], false);
    assert_eq!(code, 0);
    let verdicts: Vec<benchhost_record::Record> = serde_json::from_str(&compare).unwrap();
    assert_eq!(verdicts.len(), 3, "one verdict per series and metric");
}

#[test]
fn completions_man_page_version_and_an_example_in_every_help() {
    let sandbox = Sandbox::new();
    let (code, bash, _) = output(&sandbox, &["completions", "bash"], false);
    assert!(code == 0 && bash.contains("_benchhost()") && bash.contains("--export-markdown"), "{code}");
    let (code, man, _) = output(&sandbox, &["man"], false);
    assert!(code == 0 && man.contains(".TH benchhost"), "{man}");
    let (_, version, _) = output(&sandbox, &["--version"], false);
    assert_eq!(version.trim(), "benchhost 0.1.0 (plugin-api 0.1.0)");
    let (_, list, _) = output(&sandbox, &["list"], true);
    assert!(list.starts_with("benchhost 0.1.0 (plugin-api 0.1.0)\n"), "{list}");
    assert!(list.contains("(built against plugin-api 0.1.0, "), "{list}");
    let commands = [
        "list",
        "run",
        "plan",
        "compare",
        "calibrate",
        "import",
        "report",
        "show",
        "verify",
        "check",
        "merge",
        "new-rig",
        "completions",
        "man",
        "schema",
    ];
    for command in commands {
        let (code, help, _) = output(&sandbox, &[command, "--help"], false);
        assert!(code == 0 && help.contains("Examples:\n  benchhost "), "{command} --help has no example:\n{help}");
    }
}
