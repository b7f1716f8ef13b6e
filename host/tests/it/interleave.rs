//! `--interleave` along an axis (issue 35): each arm against the arm with the reference value on the axis and
//! every other parameter equal, across `[[rig.NAME]]` blocks; a bare `--interleave` over unlike arms refused
//! before anything runs; `plan` lists the comparisons; tables name what each verdict held equal.

use crate::support::{Sandbox, fault_plugins};
use benchhost_record::{Kind, Record};

/// Two blocks of the healthy rig, each with both `sleep_us` values: the other parameters (after_ms,
/// jitter_pct) change together between the blocks, as seed 003's work_us and duration_s do.
const TWO_AXES: &str = "[defaults]\nwarmup = \"10ms\"\nmeasurement = \"30ms\"\nsamples = 5\n\
    [[rig.healthy]]\nparams = { after_ms = 0 }\nmatrix = { sleep_us = [0, 200] }\n\
    [[rig.healthy]]\nparams = { after_ms = 5, jitter_pct = 1 }\nmatrix = { sleep_us = [0, 200] }\n";

fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", TWO_AXES);
    sandbox
}

/// `benchhost ARGS --plugin-dir FAULTS` in `sandbox`: exit code, stdout, stderr.
fn bh(sandbox: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let out = sandbox.cmd().args(args).arg("--plugin-dir").arg(fault_plugins()).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// The time verdicts of a run: (the arm's after_ms and sleep_us, the reference's).
fn compared(records: &[Record]) -> Vec<[(i64, i64); 2]> {
    let side = |v: &std::collections::BTreeMap<String, serde_json::Value>| {
        (v["after_ms"].as_i64().unwrap(), v["sleep_us"].as_i64().unwrap())
    };
    let verdicts = records.iter().filter(|r| r.kind == Kind::Verdict);
    let time = verdicts.filter(|r| r.verdict.as_ref().unwrap().metric.as_deref() == Some("iter_time"));
    let mut pairs: Vec<_> =
        time.map(|r| [side(&r.variant), side(r.verdict.as_ref().unwrap().against.as_ref().unwrap())]).collect();
    pairs.sort();
    pairs
}

#[test]
fn along_an_axis_each_arm_meets_its_level_s_reference_across_blocks_in_rounds_and_duels() {
    for (form, pairing) in [(&["--interleave=sleep_us"][..], "rounds"), (&["--interleave", "sleep_us"], "alternate")] {
        let sandbox = sandbox();
        let mut args =
            vec!["run", "--out", "r.jsonl", "--rounds", "2", "--pairing", pairing, "--export-markdown", "run.md"];
        args.extend(form);
        let (code, stdout, stderr) = bh(&sandbox, &args);
        assert_eq!(code, 0, "{stderr}");
        let (records, _) = sandbox.records("r.jsonl");
        assert_eq!(records.iter().filter(|r| r.kind == Kind::Measurement).count(), 4);
        let methods = records.iter().filter_map(|r| r.verdict.as_ref()?.method.as_ref());
        let randomised: Vec<_> = methods.map(|m| m.randomised.clone().unwrap_or_default()).collect();
        assert!(!randomised.is_empty() && randomised.iter().all(|r| r.contains("private copy per process")));
        // Each verdict with an interval says the smallest change it would have caught: above its threshold.
        for v in records.iter().filter_map(|r| r.verdict.as_ref()).filter(|v| v.ci95.is_some()) {
            assert!(v.detectable.is_some_and(|d| d >= v.threshold), "{v:?}");
        }
        assert_eq!(
            compared(&records),
            [[(0, 200), (0, 0)], [(5, 200), (5, 0)]],
            "{pairing}: 200 µs against 0 µs at each level, never across levels"
        );
        assert!(stdout.contains("at after_ms=0 jitter_pct=0: sleep_us 200 vs 0"), "{stdout}");
        assert!(stdout.contains("at after_ms=5 jitter_pct=1: sleep_us 200 vs 0"), "{stdout}");
        // The reports group them the same way.
        let report = |format: &str| {
            let out = sandbox.cmd().args(["report", "r.jsonl", "--format", format]).output().unwrap();
            (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let (code, markdown) = report("md");
        assert_eq!(code, Some(0));
        assert!(markdown.starts_with("## Verdicts\n\n### Between arms of a rig, paired: "), "{markdown}");
        let rows: Vec<&str> = markdown.lines().filter(|l| l.contains(": sleep_us 200 vs 0 | iter_time |")).collect();
        assert_eq!(rows.len(), 2, "{markdown}");
        let row_of = |level: &str| {
            rows.iter().position(|r| r.starts_with(&format!("| healthy at {level}: sleep_us 200 vs 0 |")))
        };
        let (first, second) = (row_of("after_ms=0 jitter_pct=0"), row_of("after_ms=5 jitter_pct=1"));
        assert!(first.is_some() && second.is_some(), "{markdown}");
        // Rows that need a look come first (a loaded machine may leave one level `inconclusive`); at one decision,
        // in the levels' order.
        let decision = |row: &str| row.trim_end_matches(" |").rsplit(" | ").next().map(str::to_owned);
        if decision(rows[0]) == decision(rows[1]) {
            assert!(first < second, "{markdown}");
        }
        let (code, html) = report("html");
        assert_eq!(code, Some(0));
        assert!(
            html.contains(
                "<a href=\"#rig-healthy\">healthy</a> at after_ms=5 jitter_pct=1: sleep_us 200 vs 0</td><td>iter_time</td>"
            ),
            "{html}"
        );
        let exported = std::fs::read_to_string(sandbox.path().join("run.md")).unwrap();
        assert!(
            exported.contains("| healthy at after_ms=0 jitter_pct=0: sleep_us 200 vs 0 | iter_time |"),
            "{exported}"
        );
    }
}

#[test]
fn a_bare_interleave_over_unlike_arms_is_refused_before_anything_runs() {
    let sandbox = sandbox();
    let (code, _, stderr) = bh(&sandbox, &["run", "--out", "r.jsonl", "--interleave"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "the arms of healthy differ in sleep_us (and in after_ms, jitter_pct, which change together): say which \
             to compare, e.g. --interleave sleep_us"
        ),
        "{stderr}"
    );
    assert!(!sandbox.path().join("r.jsonl").exists(), "nothing ran");
}

#[test]
fn plan_lists_the_comparisons_and_names_what_the_matrix_has_when_the_axis_is_not_in_it() {
    let sandbox = sandbox();
    let (code, stdout, stderr) = bh(&sandbox, &["plan", "--interleave=sleep_us"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("4 cells\n2 comparisons:\n"), "{stdout}");
    assert!(
        stdout.contains("  healthy at after_ms=0 jitter_pct=0: sleep_us 200 vs 0 (cell 1 vs cell 0)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  healthy at after_ms=5 jitter_pct=1: sleep_us 200 vs 0 (cell 3 vs cell 2)\n"),
        "{stdout}"
    );
    let (code, _, stderr) = bh(&sandbox, &["plan", "--interleave=slep_us"]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim(),
        "error: --interleave slep_us: no arm of the matrix varies `slep_us` (did you mean `sleep_us`?); the axes are \
         after_ms (0, 5), jitter_pct (0, 1), sleep_us (0, 200)"
    );
    let (code, _, stderr) = bh(&sandbox, &["plan", "--interleave=sleep_us=300"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("`300` is not a value of sleep_us in the matrix; the axes are"), "{stderr}");
    // An arm with no partner: a note, no comparison.
    let (code, stdout, stderr) = bh(&sandbox, &["plan", "--interleave=after_ms=5"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("0 comparisons:"), "{stdout}");
    assert_eq!(stderr.matches("has no arm with after_ms=5 and every other parameter equal").count(), 2, "{stderr}");
}
