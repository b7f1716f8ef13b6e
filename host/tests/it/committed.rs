//! What the committed reference runs (`results/*.jsonl`) and the rigs that made them claim: a `ratio` is a share
//! in [0, 1], declared as one (a counter is a whole number: a "ratio" taken from one is a count or a 0/1 vote),
//! and every check compared counts of work done, never 0 with 0 (a law over work a cell never did cannot fail).

use std::path::{Path, PathBuf};

use benchhost_record::{Kind, Record, reader};

use crate::support::{bin, workspace_plugins};

/// Every record of every committed results file, with its file's name.
fn committed() -> Vec<(String, Record)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && !p.ends_with("results.jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 9, "the reference runs under results/: {files:?}");
    let mut out = Vec::new();
    for file in files {
        let stream = reader::read(&file).unwrap();
        assert!(stream.problems.is_empty(), "{}: {:?}", file.display(), stream.problems);
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        out.extend(stream.records.into_iter().map(|(_, r)| (name.clone(), r)));
    }
    out
}

#[test]
fn every_ratio_of_the_committed_results_lies_in_0_1() {
    let mut ratios = 0;
    for (file, record) in committed() {
        for (name, metric) in record.metrics.iter().filter(|(_, m)| m.unit == "ratio") {
            ratios += 1;
            assert!((0.0..=1.0).contains(&metric.value), "{file}: {} {name} = {}", record.bench, metric.value);
        }
    }
    assert!(ratios > 0, "the querier's sort_kept is a ratio");
}

#[test]
fn no_rig_of_this_workspace_declares_a_ratio_from_a_counter() {
    let out = std::process::Command::new(bin())
        .args(["list", "--json", "--plugin-dir"])
        .arg(workspace_plugins())
        .env_remove("BENCHHOST_PLUGIN_PATH")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut rigs = 0;
    let mut counts = Vec::new();
    for plugin in listed["plugins"].as_array().unwrap() {
        for rig in plugin["plugin"]["rigs"].as_array().unwrap() {
            rigs += 1;
            for metric in rig["metrics"].as_array().unwrap() {
                if metric["unit"] == "ratio" && metric["from"] == "counter" {
                    counts.push(format!("{}.{}", rig["name"], metric["name"]));
                }
            }
        }
    }
    assert!(rigs >= 9, "the workspace's rigs: {rigs}");
    // regression: the querier's sort_kept (a 0/1 majority vote) and trace_index's row group counts.
    assert!(counts.is_empty(), "ratios taken from a counter (declare a share, or a unit that counts): {counts:?}");
}

#[test]
fn no_check_of_a_committed_record_compared_0_with_0() {
    let mut checks = 0;
    for (file, record) in committed().into_iter().filter(|(_, r)| r.kind == Kind::Measurement) {
        for check in &record.checks {
            checks += 1;
            let at = format!("{file}: {} {:?}: `{}`", record.bench, record.variant, check.invariant);
            let sides = check.values.unwrap_or_else(|| panic!("{at} does not say what it compared"));
            assert_ne!(sides, [0, 0], "{at} compared 0 with 0: the cell does no such work");
        }
    }
    assert!(checks > 100, "{checks} checks");
}
