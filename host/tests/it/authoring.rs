//! A third-party author's first five minutes: `benchhost new-rig`, then `cargo test` and `cargo build --release`
//! in the generated crate without touching it, then `benchhost run` and `benchhost check` on the library.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::Sandbox;
use benchhost_record::Kind;

fn cargo(dir: &Path, args: &[&str], target: &Path) {
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    // Its own target directory, kept between test runs so only the first pays for abi_stable's build.
    let out = Command::new(cargo).args(args).current_dir(dir).env("CARGO_TARGET_DIR", target).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "cargo {args:?} in the generated crate:\n{stdout}\n{stderr}");
}

#[test]
fn a_generated_rig_crate_tests_builds_runs_and_passes_check_unchanged() {
    let sandbox = Sandbox::new();
    let crate_dir = sandbox.path().join("demo");
    let mut new = sandbox.cmd();
    // No --api-path: a benchhost built from a checkout points the crate at that checkout's plugin-api.
    new.args(["new-rig", "demo_rig", "--path"]).arg(&crate_dir);
    new.assert().success();
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    let api = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugin-api").canonicalize().unwrap();
    assert!(manifest.contains(&format!("benchhost-plugin-api = {{ path = \"{}\" }}", api.display())), "{manifest}");
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("new-rig-target");
    cargo(&crate_dir, &["test", "--quiet"], &target);
    cargo(&crate_dir, &["build", "--release", "--quiet"], &target);
    let release = target.join("release");

    let mut run = sandbox.cmd();
    run.args(["run", "--quick", "--out", "r.jsonl", "--plugin", "demo_rig", "--plugin", "demo_rig_run"]);
    run.arg("--plugin-dir").arg(&release);
    run.assert().success();
    let (records, problems) = sandbox.records("r.jsonl");
    assert!(problems.is_empty(), "{problems:?}");
    let benches: Vec<(&str, Kind)> = records.iter().map(|r| (r.bench.as_str(), r.kind)).collect();
    assert_eq!(benches, [("demo_rig", Kind::Measurement), ("demo_rig_run", Kind::Measurement)]);
    assert!(records.iter().all(|r| !r.checks.is_empty() && r.checks.iter().all(|c| c.ok)));
    assert!(records[0].metrics["elements_per_s"].value > 0.0 && records[1].metrics["messages_per_s"].value > 0.0);

    let library = release.join("libdemo_rig.so");
    let out = sandbox.cmd().arg("check").arg(&library).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert_eq!(verdicts(&stdout), ["pass demo_rig", "pass demo_rig_run"]);
    // The line names the rig's headline metric, the first it declares, not the alphabetically first.
    assert!(stdout.contains("pass demo_rig: sum_time "), "{stdout}");

    // Layouts kept beside the library are loaded as plugins too, and one that is not the library's is named
    // (a copy of the build: the target directory is shared with the bisect tests, whose layouts live there).
    let copied = sandbox.path().join("copied");
    let layouts = copied.join("layouts/libdemo_rig");
    std::fs::create_dir_all(&layouts).unwrap();
    std::fs::copy(&library, copied.join("libdemo_rig.so")).unwrap();
    for seed in [1, 2] {
        std::fs::copy(&library, layouts.join(format!("seed-{seed}.so"))).unwrap();
    }
    let sha256 = Command::new("sha256sum").arg(&library).output().unwrap().stdout;
    std::fs::write(layouts.join("library.sha256"), &sha256[..64]).unwrap();
    let out = sandbox.cmd().arg("check").arg(copied.join("libdemo_rig.so")).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("pass layouts (seeds 1, 2): each loads with the library's rigs"), "{stdout}");
    std::fs::write(layouts.join("seed-2.so"), "not a library").unwrap();
    let out = sandbox.cmd().arg("check").arg(copied.join("libdemo_rig.so")).assert().code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert_eq!(verdicts(&stdout), ["FAIL layout seed 2", "pass demo_rig", "pass demo_rig_run"], "{stdout}");

    // regression: `benchhost check x.so | head -1` panicked (`println!` on a closed pipe, exit 101).
    let mut head = Command::new(crate::support::bin())
        .arg("check")
        .arg(&library)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(head.stdout.take().unwrap()), &mut first).unwrap();
    let out = head.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));

    // A rig whose invariant breaks is named, with the invariant.
    let lib_rs = crate_dir.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib_rs).unwrap();
    std::fs::write(&lib_rs, source.replace("n * n.saturating_sub(1) / 2", "n * n.saturating_sub(1) / 2 + 1")).unwrap();
    cargo(&crate_dir, &["build", "--release", "--quiet"], &target);
    let out = sandbox.cmd().arg("check").arg(&library).assert().code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert_eq!(verdicts(&stdout), ["FAIL demo_rig", "pass demo_rig_run"], "{stdout}");
    let broken = "FAIL demo_rig: invariant: sum == expected_sum violated: sum = 49995000, expected_sum = 49995001";
    assert!(stdout.contains(broken), "{stdout}");

    // regression: `check` had no --deadline, so a rig that hangs held it for the default 10 minutes.
    let hang = "self.iterations += 1;\n        loop { std::thread::sleep(std::time::Duration::from_secs(1)); }";
    std::fs::write(&lib_rs, source.replace("self.iterations += 1;", hang)).unwrap();
    cargo(&crate_dir, &["build", "--release", "--quiet"], &target);
    let started = std::time::Instant::now();
    let out = sandbox.cmd().arg("check").arg(&library).args(["--deadline", "2s"]).assert().code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("FAIL demo_rig: deadline: deadline of the cell exceeded"), "{stdout}");
    assert!(started.elapsed().as_secs() < 60, "check ended at its deadline, not 10 minutes later");
}

/// The `pass RIG` / `FAIL RIG` heads of check's lines.
fn verdicts(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| l.starts_with("pass ") || l.starts_with("FAIL "))
        .filter_map(|l| l.split(':').next().map(str::to_owned))
        .collect()
}

#[test]
fn check_refuses_a_library_that_is_not_a_plugin_in_one_line() {
    let sandbox = Sandbox::new();
    // regression: a text file not named lib*.so read "not loaded (another library in its directory provides the
    // same rigs)".
    for name in ["libjunk.so", "notalib.so"] {
        let junk = sandbox.write(name, "not a library");
        let out = sandbox.cmd().arg("check").arg(&junk).assert().code(1);
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        let path = junk.canonicalize().unwrap();
        let expected =
            format!("FAIL {}: not a shared library (no ELF header): give a plugin built as a cdylib", path.display());
        assert_eq!(stdout.trim(), expected);
    }
}

#[test]
fn plugin_api_can_be_used_from_a_copy_outside_this_workspace() {
    // regression: plugin-api inherited `edition` and friends from the workspace root, so a copy (or a path
    // dependency from another workspace) failed with "error inheriting `edition` from workspace root manifest".
    let sandbox = Sandbox::new();
    let copy = sandbox.path().join("plugin-api");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugin-api");
    let status = Command::new("cp").arg("-r").arg(&source).arg(&copy).status().unwrap();
    assert!(status.success());
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let out = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1", "--manifest-path"])
        .arg(copy.join("Cargo.toml"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(metadata["packages"][0]["edition"], "2024");
}
