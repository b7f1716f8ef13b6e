//! What a new user meets first (issue 30): every in-tree rig passes on its own defaults in a directory without
//! `rigs.toml` (a third party's project), and the workspace has no two targets cargo would write to one file.

use std::collections::BTreeMap;
use std::process::Command;

use crate::support::{Sandbox, workspace_plugins};

/// The in-tree rig libraries `cargo test --workspace` built: `librig_*.so`.
fn in_tree_rigs() -> Vec<std::path::PathBuf> {
    let mut libraries: Vec<_> = std::fs::read_dir(workspace_plugins())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("librig_")))
        .filter(|p| p.extension().is_some_and(|e| e == "so"))
        .collect();
    libraries.sort();
    libraries
}

#[test]
fn every_in_tree_rig_passes_on_its_defaults_outside_the_repository() {
    // regression: `benchhost run --plugin kafka_topology` without a rigs.toml ran work_us = 0 in a 2 s live
    // window, and both cells failed their own check ("thread 0 was caught up with the feed for 89% of its
    // window").
    let libraries = in_tree_rigs();
    let names: Vec<String> = libraries.iter().map(|p| p.file_name().unwrap().to_string_lossy().into()).collect();
    for expected in ["librig_cache_tier.so", "librig_ingest.so", "librig_kafka_topology.so", "librig_wal.so"] {
        assert!(names.iter().any(|n| n == expected), "{expected} not built: {names:?}");
    }
    let sandbox = Sandbox::new();
    assert!(!sandbox.path().join("rigs.toml").exists());
    let mut failed = Vec::new();
    for library in &libraries {
        let out = sandbox.cmd().arg("check").arg(library).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !stdout.contains("\npass ") {
            failed.push(format!("{}:\n{stdout}{}", library.display(), String::from_utf8_lossy(&out.stderr)));
        }
    }
    assert!(failed.is_empty(), "rigs whose defaults do not pass:\n{}", failed.join("\n"));
}

#[test]
fn no_two_example_targets_of_the_workspace_share_a_name() {
    // regression: `cargo test --workspace` warned "output filename collision ... the example target bare_loop in
    // package rig-ingest has the same output filename as ... rig-cache-tier" (a future hard error).
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline", "--manifest-path", manifest])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut owners: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for package in metadata["packages"].as_array().unwrap() {
        for target in package["targets"].as_array().unwrap() {
            if target["kind"].as_array().unwrap().iter().any(|k| k == "example") {
                let name = target["name"].as_str().unwrap().to_string();
                owners.entry(name).or_default().push(package["name"].as_str().unwrap().to_string());
            }
        }
    }
    assert!(owners.len() >= 4, "the rigs' examples are listed: {owners:?}");
    let shared: Vec<_> = owners.iter().filter(|(_, packages)| packages.len() > 1).collect();
    assert!(shared.is_empty(), "example names used by more than one package: {shared:?}");
}
