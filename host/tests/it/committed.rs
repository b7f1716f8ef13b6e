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

/// `benchhost list --json` of the workspace's plugins.
fn listed() -> serde_json::Value {
    let out = std::process::Command::new(bin())
        .args(["list", "--json", "--plugin-dir"])
        .arg(workspace_plugins())
        .env_remove("BENCHHOST_PLUGIN_PATH")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each rig's descriptor as the workspace's plugins describe it now.
fn descriptors() -> std::collections::BTreeMap<String, benchhost_plugin_api::Descriptor> {
    let listed = listed();
    let plugins = listed["plugins"].as_array().unwrap();
    let rigs = plugins.iter().flat_map(|p| p["plugin"]["rigs"].as_array().unwrap().clone());
    rigs.map(|rig| serde_json::from_value::<benchhost_plugin_api::Descriptor>(rig).unwrap())
        .map(|d| (d.name.clone(), d))
        .collect()
}

#[test]
fn every_committed_record_is_true_to_the_rig_and_the_commit_that_made_it() {
    // regression (issue 81): seven reference runs carried `dirty` provenance; records held a metric the rig no
    // longer takes (`thread_spread_pct`, past 100%), manifests counted in `files`, `trace_rows_missed = 0`
    // where no trace was looked up, and verdicts on what the cell's design fixes (a drain's `consumed`).
    let rigs = descriptors();
    let mut wrong = Vec::new();
    for (file, record) in committed() {
        let at = format!("{file}: {} {:?}", record.bench, record.variant);
        if record.run.dirty == Some(true) {
            wrong.push(format!("{at}: made from a work tree with uncommitted changes"));
        }
        let Some(rig) = rigs.get(&record.bench) else {
            wrong.push(format!("{at}: no rig of the workspace is `{}`", record.bench));
            continue;
        };
        let declared = |name: &str| rig.metrics.iter().find(|m| m.name == name);
        if record.kind == Kind::Measurement {
            for (name, metric) in &record.metrics {
                match declared(name) {
                    None if name != "instructions" => {
                        wrong.push(format!("{at}: `{name}`, which the rig does not take"))
                    }
                    Some(m) if m.unit.as_str() != metric.unit => wrong.push(format!(
                        "{at}: `{name}` in {}, which the rig takes in {}",
                        metric.unit,
                        m.unit.as_str()
                    )),
                    _ => {}
                }
            }
            let lookup =
                ["lookup_by_id", "lookup_by_id_windowed", "lookup_via_index", "find_trace", "find_trace_hinted"];
            let shape = record.variant.get("shape").or(record.variant.get("ticket")).and_then(|v| v.as_str());
            if record.metrics.contains_key("trace_rows_missed") && !shape.is_some_and(|s| lookup.contains(&s)) {
                wrong.push(format!("{at}: `trace_rows_missed` where no trace is looked up"));
            }
        }
        let judged = record.verdict.as_ref().and_then(|v| v.metric.as_deref()).and_then(declared);
        if judged.is_some_and(|m| m.is_fixed(&record.variant)) {
            wrong.push(format!("{at}: a verdict on `{}`, which the cell's design fixes", judged.unwrap().name));
        }
    }
    assert!(wrong.is_empty(), "{} wrong:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn no_rig_of_this_workspace_declares_a_ratio_from_a_counter() {
    let listed = listed();
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
