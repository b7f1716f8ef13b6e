//! Bad input, as a new user typed it (issue 15): each gets a one-line error before anything runs, exit 2 (or a
//! report that says what is wrong, exit 1), never a panic, a silent success, or a file that can no longer be read.

use crate::support::{Sandbox, fault_plugins};
use benchhost_record::Kind;

const SETTINGS: &str = "[defaults]\nwarmup = \"10ms\"\nmeasurement = \"50ms\"\nsamples = 5\nrepetitions = 2\n";

fn seed_lines() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/streams/seed003.jsonl")).unwrap()
}

/// `benchhost ARGS` in `sandbox` with the fault plugins; its exit code, stdout and stderr.
fn run(sandbox: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let mut cmd = sandbox.cmd();
    cmd.args(args).arg("--plugin-dir").arg(fault_plugins());
    let out = cmd.output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// `benchhost ARGS` without plugins (commands that read files).
fn read(sandbox: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let out = sandbox.cmd().args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn numbers_and_durations_out_of_reason_are_errors_not_panics_and_nothing_runs() {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", &format!("{SETTINGS}[rig.healthy]\n"));
    let cases: [(&[&str], &str); 8] = [
        // regression: each of the first three panicked (exit 101).
        (&["plan", "--deadline", "99999999999999999999h"], "is too long"),
        (&["plan", "--budget", "99999999999999999999h", "--target-ci", "1%"], "is too long"),
        (&["run", "--deadline", "0s", "--out", "r.jsonl"], "is zero"),
        (&["run", "--set", "sleep_us=nan", "--out", "r.jsonl"], "sleep_us"),
        (&["run", "--set", "after=99999999999999999999", "--out", "r.jsonl"], "out of range for an integer"),
        (&["plan", "--max-cells", "0"], "--max-cells: max_cells must be at least 1"),
        (&["run", "--baseline", "mian", "--out", "r.jsonl"], "no results file or baseline named `mian`"),
        (&["run", "--save-baseline", "../evil", "--out", "r.jsonl"], "is not a baseline name"),
    ];
    for (args, expected) in cases {
        let (code, _, stderr) = run(&sandbox, args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    assert!(!sandbox.path().join("r.jsonl").exists(), "nothing ran");
    sandbox.write("rigs.toml", &format!("{SETTINGS}[rig.healthy]\ndeadline = \"99999999999999999999h\"\n"));
    let (code, _, stderr) = run(&sandbox, &["plan"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.starts_with("error: rigs.toml:7:12: `99999999999999999999h` is too long"), "{stderr}");
}

#[test]
fn messages_name_the_real_problem() {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", &format!("{SETTINGS}[rig.healthy]\n"));
    sandbox.write("T", "a file");
    let (code, _, stderr) = run(&sandbox, &["run", "--out", "T/r.jsonl"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot write T/r.jsonl: T is a file, not a directory"), "{stderr}");

    let (code, _, stderr) = read(&sandbox, &["list", "--plugin-dir", "/nonexistent"]);
    assert_eq!((code, stderr.trim()), (2, "error: --plugin-dir /nonexistent: no such directory"));

    let (code, _, stderr) = read(&sandbox, &["check", "/tmp"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("/tmp is not a file: give the plugin library itself"), "{stderr}");

    // regression: `--against` said "round by round (5 rounds unless --rounds)" where it pairs in one process.
    let (_, help, _) = read(&sandbox, &["run", "--help"]);
    assert!(help.contains("paired with the same cell on that build's plugin") && !help.contains("5 rounds unless"));
    let (code, stdout, _) = read(&sandbox, &["report", "--help"]);
    assert_eq!((code, stdout.matches("[default: 3%]").count()), (0, 1), "{stdout}");
    for command in ["publish", "query"] {
        let (code, stdout, _) = read(&sandbox, &[command, "--help"]);
        assert_eq!(code, 0, "{command} --help answers whether or not the warehouse is built");
        assert!(stdout.contains("--warehouse"), "{stdout}");
    }
}

#[test]
fn garbage_and_empty_inputs_are_errors_and_an_empty_stream_is_not_sound() {
    let sandbox = Sandbox::new();
    sandbox.write("garbage.jsonl", "this is not a record\n{\"half\":\n");
    sandbox.write("empty.jsonl", "");
    sandbox.write("real.jsonl", &seed_lines());
    for args in
        [&["show", "garbage.jsonl"][..], &["show", "empty.jsonl"], &["report", "garbage.jsonl", "--format", "md"]]
    {
        let (code, _, stderr) = read(&sandbox, args);
        assert_eq!(code, 2, "{args:?}");
        assert!(stderr.contains("holds no readable record"), "{args:?}: {stderr}");
    }
    // regression: a corrupt baseline called everything `added`, exit 0, and passed `--fail-on regressed`.
    let (code, _, stderr) = read(&sandbox, &["compare", "garbage.jsonl", "real.jsonl", "--fail-on", "regressed"]);
    assert_eq!(code, 2, "{stderr}");
    let (code, stdout, _) = read(&sandbox, &["verify", "empty.jsonl"]);
    assert_eq!(code, 1);
    assert!(stdout.contains("empty.jsonl: no record"), "{stdout}");
    let (code, _, stderr) = read(&sandbox, &["compare", "nosuch.jsonl", "real.jsonl"]);
    assert_eq!((code, stderr.trim()), (2, "error: no such results file: nosuch.jsonl"));
}

#[test]
fn zero_valued_metrics_compare_as_undefined_and_the_stream_stays_readable() {
    // regression: `compare X X --out S` over metrics of value 0 wrote `"ratio":null` verdicts, and from then
    // on show, report, compare and verify all failed on S with `invalid type: null, expected f64`.
    let sandbox = Sandbox::new();
    let zero =
        seed_lines().replace(r#""value":390007.3"#, r#""value":0.0"#).replace("[385000.1,395000.2]", "[0.0,0.0]");
    sandbox.write("zero.jsonl", &zero);
    sandbox.write("s.jsonl", &zero);
    let (code, stdout, stderr) = read(&sandbox, &["compare", "zero.jsonl", "zero.jsonl", "--out", "s.jsonl"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("undefined") && !stdout.contains("NaN"), "{stdout}");
    let (records, problems) = sandbox.records("s.jsonl");
    assert!(problems.is_empty(), "{problems:?}");
    let verdicts: Vec<_> = records.iter().filter_map(|r| r.verdict.as_ref()).collect();
    let undefined = verdicts.iter().find(|v| v.decision.name() == "undefined").expect("an undefined verdict");
    assert_eq!(undefined.reason.as_deref(), Some("both values are 0: a ratio of zero values is undefined"));
    for args in [&["show", "s.jsonl"][..], &["verify", "s.jsonl"], &["report", "s.jsonl", "--format", "md"]] {
        let (code, _, stderr) = read(&sandbox, args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
    }
}

#[test]
fn a_newest_run_that_failed_fails_the_comparison_and_shows_in_every_report() {
    // regression: the report showed the older good value as "first run", BMF published it, and compare judged
    // the good run against itself (`+0.00% inconclusive`), so a gate passed a build whose answer was wrong.
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", &format!("{SETTINGS}[rig.conveyor]\n"));
    let (code, _, stderr) = run(&sandbox, &["run", "--out", "good.jsonl"]);
    assert_eq!(code, 0, "{stderr}");
    // The same series, newer, failed: what a broken build appends (a faulty run of the same cell).
    let (good, _) = sandbox.records("good.jsonl");
    let mut failed = good[0].clone();
    failed.kind = Kind::Failure;
    failed.metrics.clear();
    failed.run.ts_ms += 1000;
    failed.failure = serde_json::from_str(
        r#"{"cause":"invariant","message":"consumed == produced violated: consumed = 999, produced = 1000"}"#,
    )
    .unwrap();
    sandbox.write("stream.jsonl", &format!("{}\n{}\n", good[0].to_line(), failed.to_line()));
    let (code, stdout, _) = read(&sandbox, &["compare", "good.jsonl", "stream.jsonl"]);
    assert_eq!(code, 1, "a failed newest run fails the gate without --fail-on: {stdout}");
    assert!(stdout.contains("failed") && !stdout.contains("inconclusive"), "{stdout}");
    let (_, md, _) = read(&sandbox, &["report", "stream.jsonl", "--format", "md"]);
    assert!(md.contains("FAILED (invariant): consumed == produced violated") && !md.contains("first run"), "{md}");
    let (_, bmf, stderr) = read(&sandbox, &["report", "stream.jsonl", "--format", "bmf"]);
    assert_eq!(bmf.trim(), "{}", "no older number is published");
    assert!(stderr.contains("conveyor"), "the left-out series is named: {stderr}");
    let (_, csv, _) = read(&sandbox, &["report", "stream.jsonl", "--format", "csv"]);
    let last = csv.lines().last().unwrap();
    assert!(last.ends_with(r#","invariant: consumed == produced violated: consumed = 999, produced = 1000""#), "{csv}");
}

#[test]
fn a_target_that_was_not_reached_is_said_on_the_screen() {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", &format!("{SETTINGS}[rig.healthy]\nparams = {{ sleep_us = 200 }}\n"));
    let args = ["run", "--out", "r.jsonl", "--target-ci", "0.001%", "--budget", "100ms"];
    let (code, _, stderr) = run(&sandbox, &args);
    assert_eq!(code, 0);
    assert!(stderr.contains("CI95 target ±0.001% not reached within the budget"), "{stderr}");
    let (code, _, stderr) = run(&sandbox, &["run", "--out", "r.jsonl", "--measurement", "2ms"]);
    assert_eq!(code, 0);
    assert!(stderr.contains("warning: healthy: samples of 400.0 µs (measurement / samples) are too short"), "{stderr}");
}

#[test]
fn plans_that_cannot_be_met_and_outputs_that_cannot_be_written_are_refused_before_the_first_cell() {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", &format!("{SETTINGS}[rig.healthy]\nmatrix = {{ after = [1, 2] }}\n"));
    let cases: [(&[&str], &str); 7] = [
        // regression: every verdict `inconclusive` with `[NaN, NaN]`, "over 1 interleaved rounds".
        (&["run", "--pairing", "rounds", "--rounds", "0", "--interleave=after"], "0 is not in 1.."),
        (
            &["run", "--rounds", "1", "--interleave=after"],
            "--rounds 1: a paired comparison takes its interval over processes",
        ),
        // regression: warned that samples of 1 ns were too short, then ran into the 10-minute deadline.
        (
            &["run", "--samples", "1000000000", "--measurement", "1s"],
            "samples of 1.000 ns (measurement / samples) cannot be taken",
        ),
        // regression: measured, then failed "writing /tmp: Is a directory".
        (&["run", "--export-markdown", "/tmp"], "--export-markdown /tmp: is a directory: give a file name"),
        (&["run", "--export-csv", "nosuch/e.csv"], "--export-csv nosuch/e.csv: its directory does not exist"),
        // regression: "is not a precision".
        (
            &["run", "--threshold", "200%"],
            "`200%` is not a threshold: give a change between 0 and 100%, e.g. \"3%\", or auto",
        ),
        (&["calibrate", "--threshold", "0"], "`0` is not a threshold"),
    ];
    for (args, expected) in cases {
        let mut all = args.to_vec();
        all.extend(["--out", "r.jsonl"]);
        let (code, _, stderr) = run(&sandbox, &all);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!sandbox.path().join("r.jsonl").exists(), "{args:?}: nothing ran");
    }
    assert!(!sandbox.path().join("nosuch").exists());

    // regression: with no rigs.toml, "rigs.toml has no [rig.NAME] table".
    let empty = Sandbox::new();
    let (code, _, stderr) = run(&empty, &["run", "--out", "r.jsonl"]);
    assert_eq!(code, 2);
    assert!(stderr.starts_with("error: nothing to run: no rigs.toml in "), "{stderr}");
}
