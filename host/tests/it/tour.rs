//! The README's tour with only the host and `rig-wal` built (issue 81): commands that name no rig take the
//! rigs of `rigs.toml` that are built, leave out the rest with one note that says how to build them, and fail
//! only when nothing built matches, as `cargo bench FILTER` needs only the benches it runs.

use std::path::{Path, PathBuf};

use crate::support::{Sandbox, bin, workspace_plugins};

/// A sandbox holding a copy of the host and of `librig_wal.so` in `bin/` (so discovery, which also looks beside
/// the executable, sees no other plugin) and the repository's `rigs.toml`; with `tree`, the plugins' manifests
/// too, as in a checkout where only the wal plugin was built.
fn one_plugin(tree: bool) -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::new();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let bin_dir = sandbox.path().join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    std::fs::copy(bin(), bin_dir.join("benchhost")).unwrap();
    std::fs::copy(workspace_plugins().join("librig_wal.so"), bin_dir.join("librig_wal.so")).unwrap();
    std::fs::copy(repo.join("rigs.toml"), sandbox.path().join("rigs.toml")).unwrap();
    if tree {
        for plugin in std::fs::read_dir(repo.join("plugins")).unwrap().flatten() {
            let dir = sandbox.path().join("plugins").join(plugin.file_name());
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::copy(plugin.path().join("Cargo.toml"), dir.join("Cargo.toml")).unwrap();
        }
    }
    (sandbox, bin_dir.join("benchhost"))
}

/// Runs the host copy with `args` in the sandbox: exit code, stdout, stderr.
fn run(sandbox: &Sandbox, host: &Path, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(host)
        .args(args)
        .current_dir(sandbox.path())
        .env_remove("BENCHHOST_PLUGIN_PATH")
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn the_tour_runs_with_only_the_wal_plugin_built() {
    for tree in [false, true] {
        let (sandbox, host) = one_plugin(tree);
        let (code, stdout, stderr) = run(&sandbox, &host, &["plan"]);
        assert_eq!(code, 0, "plan (tree {tree}): {stderr}");
        assert!(stdout.lines().all(|l| !l.contains("kafka_topology")), "{stdout}");
        assert!(stdout.contains("wal compression=zstd rows=1000") && stdout.contains("wal_log "), "{stdout}");
        let notes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("note: left out")).collect();
        assert_eq!(notes.len(), 1, "one line names what was left out: {stderr}");
        assert!(notes[0].contains("`kafka_topology`") && notes[0].contains("`querier`"), "{}", notes[0]);
        match tree {
            // In a checkout the note names one command that builds them all.
            true => assert!(
                notes[0].contains("-p rig-kafka-topology") && notes[0].contains("-p rig-lakehouse"),
                "{}",
                notes[0]
            ),
            false => assert!(!notes[0].contains("cargo build"), "no tree, no command: {}", notes[0]),
        }

        let (code, stdout, stderr) = run(&sandbox, &host, &["plan", "--shard", "1/2"]);
        assert_eq!(code, 0, "plan --shard: {stderr}");
        assert!(stdout.contains("wal "), "{stdout}");

        let filter = "^wal .*compression=zstd";
        let (code, _, stderr) = run(&sandbox, &host, &["run", filter, "--quick", "--save-baseline", "main"]);
        assert_eq!(code, 0, "run FILTER --save-baseline: {stderr}");
        let records = sandbox.records_if_any("results/results.jsonl");
        assert_eq!(records.len(), 1, "one cell under --quick");
        assert_eq!(records[0].variant["compression"], "zstd");
        assert!(sandbox.path().join("results/baselines/main.jsonl").is_file());

        // A filter that no built cell matches names the rigs that might have, and how to build them.
        let (code, _, stderr) = run(&sandbox, &host, &["run", "^kafka_topology mode=split"]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("no cell matches `^kafka_topology mode=split`"), "{stderr}");
        assert!(stderr.contains("might have matched") && stderr.contains("`kafka_topology`"), "{stderr}");

        // A rig the command line names must be built.
        let (code, _, stderr) = run(&sandbox, &host, &["run", "--plugin", "kafka_topology"]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("kafka_topology"), "{stderr}");
    }
}
