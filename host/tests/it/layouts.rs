//! Code layouts (issue 63): `benchhost build` keeps each plugin library's link, a comparison with `--against`
//! and `--layouts` runs every two of its processes on a fresh pair of layouts of both builds (each side's own
//! seeds), and its verdicts say which layouts ran and how the log ratio spread between them; a build made by
//! a plain `cargo build` has one layout, and the run says so.

use std::path::{Path, PathBuf};
use std::process::Command;

use benchhost_record::{Kind, Record, reader};

use crate::support::{Sandbox, bin, fault_plugins};

/// The fault fixture built in release by `benchhost build --layouts 2` into a target directory of its own:
/// its library, its link and layouts 1 to 4 beside it.
fn built_with_layouts() -> PathBuf {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fixtures-layouts");
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/Cargo.toml");
    let out = Command::new(bin())
        .args([
            "build",
            "--layouts",
            "2",
            "--quiet",
            "--manifest-path",
            manifest,
            "-p",
            "fixture-faults",
            "--target-dir",
        ])
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "benchhost build: {stderr}");
    assert!(stderr.contains("libfixture_faults.so: its link kept"), "{stderr}");
    // regression (issue 81): a build kept up to 32 layouts of each library and said nothing of their size.
    assert!(stderr.contains("its layouts take ") && stderr.contains("`benchhost build --free-layouts`"), "{stderr}");
    target.join("release")
}

#[test]
fn free_layouts_deletes_the_layouts_and_keeps_the_links() {
    let built = built_with_layouts();
    let sandbox = Sandbox::new();
    let copy = sandbox.path().join("target/release/layouts");
    std::fs::create_dir_all(copy.join("libfixture_faults")).unwrap();
    for name in ["libfixture_faults.so.link", "libfixture_faults.so.sha256"] {
        std::fs::copy(built.join("layouts").join(name), copy.join(name)).unwrap();
    }
    for seed in 1..=4 {
        let name = format!("libfixture_faults/seed-{seed}.so");
        std::fs::copy(built.join("layouts").join(&name), copy.join(&name)).unwrap();
    }
    let out = sandbox.cmd().args(["build", "--free-layouts", "--target-dir", "target"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.contains("deleted 4 layouts"), "{stderr}");
    assert!(!copy.join("libfixture_faults/seed-1.so").exists(), "the layouts are gone");
    assert!(copy.join("libfixture_faults.so.link").is_file(), "the link stays, to link layouts again");
}

/// `run --plugin healthy --quick ARGS` of the build in `dir` against itself: its records and stderr.
fn healthy_against_itself(dir: &Path, args: &[&str]) -> (Vec<Record>, String) {
    healthy_against_itself_in(&Sandbox::new(), dir, args)
}

/// The same, appending to `r.jsonl` in `sandbox`: every record of the stream, and stderr.
fn healthy_against_itself_in(sandbox: &Sandbox, dir: &Path, args: &[&str]) -> (Vec<Record>, String) {
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--plugin", "healthy", "--quick", "--out", "r.jsonl"]).args(args);
    let out = cmd.arg("--plugin-dir").arg(dir).arg("--against").arg(dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let stream = reader::read(&sandbox.path().join("r.jsonl")).unwrap();
    (stream.records.into_iter().map(|(_, r)| r).collect(), stderr)
}

fn verdict_on(records: &[Record], metric: &str) -> Record {
    records
        .iter()
        .find(|r| r.kind == Kind::Verdict && r.verdict.as_ref().unwrap().metric.as_deref() == Some(metric))
        .cloned()
        .unwrap()
}

#[test]
fn a_comparison_runs_on_fresh_layouts_of_both_builds_and_its_verdict_says_which() {
    let built = built_with_layouts();
    let layouts = built.join("layouts");
    assert!(layouts.join("libfixture_faults.so.link").is_file(), "the link line, printed by rustc");
    for seed in 1..=4 {
        assert!(layouts.join(format!("libfixture_faults/seed-{seed}.so")).is_file(), "layout {seed}");
    }
    let (records, _) = healthy_against_itself(&built, &["--rounds", "4", "--layouts", "2"]);
    let verdict = verdict_on(&records, "iter_time");
    let method = verdict.verdict.as_ref().unwrap().method.clone().unwrap();
    let split = method.layouts.clone().expect("the layouts the processes ran on");
    // Processes 2k and 2k+1 ran pair k, drawn from pools of 2 a side: this build the even seeds, the other the
    // odd, each used once: never one layout on both sides.
    assert_eq!(split.pairs, 2);
    for (seeds, pool) in [(&split.new, [2, 4]), (&split.old, [1, 3])] {
        assert!(seeds.len() == 4 && seeds[0] == seeds[1] && seeds[2] == seeds[3], "{seeds:?}");
        let mut drawn = vec![seeds[0], seeds[2]];
        drawn.sort_unstable();
        assert_eq!(drawn, pool, "{seeds:?}");
    }
    assert!(split.between_processes.is_some(), "each pair ran twice: {method:?}");
    assert!(verdict.note.as_deref().unwrap().contains("on 2 layout pairs"), "{:?}", verdict.note);
    // The library each process loaded was the layout it was given, not the library as built.
    let plain = records[0].plugin.clone().and_then(|p| p.sha256);
    let built_sha = std::fs::read_to_string(layouts.join("libfixture_faults.so.sha256")).unwrap();
    assert_ne!(plain.as_deref(), Some(built_sha.trim()), "the record names a layout's bytes, not the plain library's");
}

#[test]
fn a_build_without_its_link_has_one_layout_and_the_run_says_so() {
    // Layouts are the default of a comparison: no `--layouts` is given.
    let (records, stderr) = healthy_against_itself(&fault_plugins(), &["--rounds", "2"]);
    assert!(stderr.contains("healthy: this build and the other build kept no link"), "{stderr}");
    let method = verdict_on(&records, "iter_time").verdict.unwrap().method.unwrap();
    assert!(method.layouts.is_none(), "{method:?}");
}

#[test]
fn a_comparison_of_one_layout_a_side_names_the_floor_its_stream_measured_over_layouts() {
    let built = built_with_layouts();
    let sandbox = Sandbox::new();
    let (first, _) = healthy_against_itself_in(&sandbox, &built, &["--rounds", "2", "--layouts", "1"]);
    let note = verdict_on(&first, "iter_time").note.unwrap();
    assert!(
        note.contains("; one layout a side (each library as built): a change within the cell's layout floor"),
        "{note}"
    );
    healthy_against_itself_in(&sandbox, &built, &["--rounds", "4", "--layouts", "2"]);
    let (all, _) = healthy_against_itself_in(&sandbox, &built, &["--rounds", "2", "--layouts", "1"]);
    let note = all
        .iter()
        .rev()
        .find(|r| r.kind == Kind::Verdict && r.verdict.as_ref().unwrap().metric.as_deref() == Some("iter_time"))
        .unwrap()
        .note
        .clone()
        .unwrap();
    assert!(note.contains("this cell's layout floor is "), "{note}");
    assert!(note.contains("% (over layouts, 1 comparison in this stream)"), "{note}");
}
