//! What a reviewer reads after a comparison (issue 50): the paired verdicts first, under a heading that names
//! both builds and how they were measured, the same verdicts in every report and export, and nothing
//! unpaired, or measured on another machine, dressed as a verdict.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::support::{Sandbox, bin, fault_plugins};
use benchhost_record::Kind;

const MATRIX: &str =
    "[defaults]\nwarmup = \"10ms\"\nmeasurement = \"50ms\"\nsamples = 5\n[rig.healthy]\nmatrix = { after = [1, 2] }\n";

/// `benchhost ARGS` in `sandbox` with the fault plugins; its exit code, stdout and stderr.
fn output(sandbox: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let mut cmd = sandbox.cmd();
    cmd.args(args).arg("--plugin-dir").arg(fault_plugins());
    let out = cmd.output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// `benchhost ARGS` in `sandbox`, for commands that read files only.
fn read(sandbox: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let out = sandbox.cmd().args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// The other build of a comparison: the fault plugins copied into `other/` of the sandbox (the same bytes).
fn other_build(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.path().join("other");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fault_plugins().join("libfixture_faults.so"), dir.join("libfixture_faults.so")).unwrap();
    dir
}

#[test]
fn a_paired_run_shows_its_verdicts_first_under_a_heading_that_names_both_builds_and_every_report_holds_them() {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", MATRIX);
    let (code, _, stderr) = output(&sandbox, &["run", "--out", "r.jsonl"]);
    assert_eq!(code, 0, "{stderr}");
    let other = other_build(&sandbox).display().to_string();
    let args = ["run", "--out", "r.jsonl", "--against", &other, "--rounds", "2", "--export-markdown", "bench.md"];
    let (code, stdout, stderr) = output(&sandbox, &args);
    assert_eq!(code, 0, "{stderr}");
    // regression: the unpaired change against the previous records came first, with verdict words, and the
    // paired table followed with no heading that named the other build.
    assert!(!stdout.contains("change against the previous record"), "{stdout}");
    assert!(stdout.contains("change against its previous record in r.jsonl is left out: unpaired"), "{stdout}");
    let heading = format!(
        "This build against {other}, paired: both in one process, samples alternating, 2 processes per comparison"
    );
    assert!(
        stdout.contains(&format!("{heading}\n  library healthy: the same library bytes on both sides\n")),
        "{stdout}"
    );
    let (records, _) = sandbox.records("r.jsonl");
    let paired: Vec<_> = records.iter().filter(|r| r.kind == Kind::Verdict).collect();
    assert!(paired.len() >= 2, "a verdict per series and metric: {}", paired.len());

    // regression: the exported Markdown held estimates only, each "first run", and no verdict at all.
    let md = std::fs::read_to_string(sandbox.path().join("bench.md")).unwrap();
    assert!(md.starts_with(&format!("## Verdicts\n\n### {heading}\n\n")), "{md}");
    assert!(!md.contains("first run") && !md.contains("vs previous run"), "{md}");
    let verdict_rows = md.lines().filter(|l| l.starts_with("| healthy after=")).count();
    assert_eq!(verdict_rows, paired.len(), "{md}");

    // regression: `report --format md|html` left every `--against` verdict out.
    let (code, report, _) = read(&sandbox, &["report", "r.jsonl", "--format", "md"]);
    assert_eq!(code, 0);
    assert!(report.starts_with(&format!("## Verdicts\n\n### {heading}\n\n")), "{report}");
    assert_eq!(report.lines().filter(|l| l.starts_with("| healthy after=")).count(), paired.len(), "{report}");
    let (_, html, _) = read(&sandbox, &["report", "r.jsonl", "--format", "html"]);
    assert!(html.contains(&format!("<h3>{heading}</h3>")), "the same heading in the page");
}

#[test]
fn interleave_and_against_together_are_refused_in_one_line() {
    // regression: `--interleave` was dropped silently when `--against` was given.
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", MATRIX);
    let other = other_build(&sandbox);
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--out", "r.jsonl", "--interleave=after", "--against"]).arg(&other);
    cmd.arg("--plugin-dir").arg(fault_plugins());
    let output = cmd.assert().code(2);
    let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    assert!(
        stderr.starts_with("error: the argument '--interleave[=<AXIS[=VALUE]>]' cannot be used with '--against <DIR>'"),
        "{stderr}"
    );
    assert!(sandbox.records_if_any("r.jsonl").is_empty(), "nothing ran");
}

#[test]
fn a_reader_that_goes_away_does_not_cost_the_run_its_verdicts_or_its_exports() {
    // regression: under `| head`, the first table's broken pipe ended the run: no verdict appended, no export.
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", MATRIX);
    // A pipe whose reader is gone before the run starts: every write to stdout is a broken pipe.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = Command::new(bin())
        .current_dir(sandbox.path())
        .args(["run", "--out", "r.jsonl", "--interleave=after", "--rounds", "2", "--export-markdown", "e.md"])
        .arg("--plugin-dir")
        .arg(fault_plugins())
        .stdout(writer)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let (records, _) = sandbox.records("r.jsonl");
    assert!(records.iter().any(|r| r.kind == Kind::Verdict), "the verdicts are appended");
    assert!(std::fs::read_to_string(sandbox.path().join("e.md")).unwrap().contains("## Verdicts"));
}

#[test]
fn the_markdown_export_shows_the_change_the_screen_showed() {
    // regression: the console printed the change against the previous record, the export "first run" in every row.
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", MATRIX);
    output(&sandbox, &["run", "--out", "r.jsonl"]);
    let (code, stdout, _) = output(&sandbox, &["run", "--out", "r.jsonl", "--export-markdown", "e.md"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("change against the previous record of each series in r.jsonl"), "{stdout}");
    let md = std::fs::read_to_string(sandbox.path().join("e.md")).unwrap();
    assert!(md.contains("| Benchmark | Estimate | vs previous run |") && !md.contains("first run"), "{md}");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| healthy/after=")).collect();
    assert!(!rows.is_empty() && rows.iter().all(|l| l.ends_with(") |")), "a change in every row: {md}");
}

#[test]
fn compare_refuses_records_of_two_machines_naming_both_cpus_and_prints_its_table_under_quiet() {
    let sandbox = Sandbox::new();
    let seed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/streams/seed003.jsonl")).unwrap();
    sandbox.write("old.jsonl", &seed.replace("Apple M5 Max", "Intel Xeon Platinum 8481C"));
    sandbox.write("new.jsonl", &seed.replace("Apple M5 Max", "AMD EPYC 7B13"));
    // regression: `+56.55% improved` between an Intel Xeon and an AMD EPYC.
    let (code, _, stderr) = read(&sandbox, &["compare", "old.jsonl", "new.jsonl"]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(
            "error: not comparing records of different machines: 2 series ran on Intel Xeon Platinum 8481C, now on \
             AMD EPYC 7B13; a change of machine is not the code's (--across-machines to compare them anyway)"
        ),
        "{stderr}"
    );
    // regression: `compare -q` printed nothing; its table is what it produces.
    let (code, stdout, _) = read(&sandbox, &["-q", "compare", "old.jsonl", "new.jsonl", "--across-machines"]);
    assert_eq!(code, 0);
    assert_eq!(stdout.matches("kafka_topology").count(), 2, "one row per series: {stdout}");
}
