//! Plugin trust: a library others could have written is not loaded, and a parameter whose name marks it secret
//! is given to the rig and to nobody else (records, tables and the plan show `<redacted>`).

use std::os::unix::fs::PermissionsExt;

use crate::support::{Sandbox, fault_plugins};

#[test]
fn a_plugin_file_or_directory_others_can_write_is_refused_unless_allowed() {
    let sandbox = Sandbox::new();
    for (dir, dir_mode, file_mode, what) in
        [("open-file", 0o755, 0o666, "file"), ("open-dir", 0o777, 0o644, "directory")]
    {
        let dir = sandbox.path().join(dir);
        std::fs::create_dir(&dir).unwrap();
        let lib = dir.join("libfixture_faults.so");
        std::fs::copy(fault_plugins().join("libfixture_faults.so"), &lib).unwrap();
        std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(file_mode)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(dir_mode)).unwrap();

        let refused = sandbox.cmd().args(["list", "--plugin-dir"]).arg(&dir).assert().success();
        // `list` shows the libraries that did not load, with their one-line reason.
        let stdout = String::from_utf8_lossy(&refused.get_output().stdout).into_owned();
        assert!(!stdout.contains("healthy"), "{stdout}");
        let mode = format!("mode {:o}", if what == "file" { file_mode } else { dir_mode });
        assert!(stdout.contains(&format!("refused: its {what} ")) && stdout.contains(&mode), "{stdout}");

        let allowed = sandbox.cmd().args(["list", "--allow-writable-plugins", "--plugin-dir"]).arg(&dir).assert();
        assert!(String::from_utf8_lossy(&allowed.success().get_output().stdout).contains("healthy"));

        // regression: `--against` a directory whose one plugin was refused said "no plugin there".
        let against = sandbox
            .cmd()
            .args(["run", "--plugin", "healthy", "--out", "r.jsonl", "--plugin-dir"])
            .arg(fault_plugins())
            .arg("--against")
            .arg(&dir)
            .assert()
            .code(2);
        let stderr = String::from_utf8_lossy(&against.get_output().stderr).into_owned();
        assert!(stderr.contains("no plugin there could be loaded: ") && stderr.contains("refused: its "), "{stderr}");
    }
}

#[test]
fn group_write_under_the_owners_private_group_is_accepted_and_any_other_group_is_told_the_chmod() {
    // regression: with umask 002 the five-minute flow was refused (`writable by others (mode 775)`).
    let sandbox = Sandbox::new();
    let dir = sandbox.path().join("umask002");
    std::fs::create_dir(&dir).unwrap();
    let lib = dir.join("libfixture_faults.so");
    std::fs::copy(fault_plugins().join("libfixture_faults.so"), &lib).unwrap();
    for path in [&lib, &dir] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o775)).unwrap();
    }
    let list = || {
        let out = sandbox.cmd().args(["list", "--plugin-dir"]).arg(&dir).assert().success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    // The tests run as root, whose primary group (0) has no other member: mode 775 under it is accepted.
    assert!(list().contains("healthy"), "{}", list());
    // The same mode under a group the owner shares (gid 100, not its primary group) is refused, with the fix.
    std::os::unix::fs::chown(&lib, None, Some(100)).unwrap();
    let stdout = list();
    assert!(!stdout.contains("healthy"), "{stdout}");
    assert!(stdout.contains("writable by other members of its group (mode 775)"), "{stdout}");
    assert!(stdout.contains(&format!("fix it with `chmod go-w {}`", lib.display())), "{stdout}");
}

#[test]
fn a_secret_given_with_set_never_reaches_a_results_file_or_the_screen() {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", "[defaults]\nwarmup = \"20ms\"\nmeasurement = \"100ms\"\nsamples = 5\n");
    let secrets = ["--set", "password=hunter2", "--set", "sasl.password=s3cr3t-sasl"];
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--plugin", "login", "--out", "r.jsonl"]).args(secrets).arg("--plugin-dir").arg(fault_plugins());
    let run = cmd.assert().success();
    let mut plan = sandbox.cmd();
    plan.args(["plan", "--plugin", "login"]).args(secrets).arg("--plugin-dir").arg(fault_plugins());
    let plan = plan.assert().success();

    let file = std::fs::read_to_string(sandbox.path().join("r.jsonl")).unwrap();
    for (what, text) in [
        ("results file", file.clone()),
        ("run stdout", String::from_utf8_lossy(&run.get_output().stdout).into_owned()),
        ("run stderr", String::from_utf8_lossy(&run.get_output().stderr).into_owned()),
        ("plan stdout", String::from_utf8_lossy(&plan.get_output().stdout).into_owned()),
    ] {
        assert!(!text.contains("hunter2") && !text.contains("s3cr3t-sasl"), "{what} leaks a secret:\n{text}");
    }
    let (records, _) = sandbox.records("r.jsonl");
    let variant = &records[0].variant;
    assert_eq!(records[0].kind, benchhost_record::Kind::Measurement, "the rig got the real values");
    assert_eq!(
        (variant["password"].as_str(), variant["sasl.password"].as_str()),
        (Some("<redacted>"), Some("<redacted>"))
    );
    assert_eq!(variant["user"], "bench", "other parameters stay visible");
    assert!(String::from_utf8_lossy(&plan.get_output().stdout).contains("password=<redacted>"));
}

#[test]
fn records_carry_the_plugins_sha256_and_a_pinned_sha256_that_differs_refuses_the_plugin() {
    let sandbox = Sandbox::new();
    let lib = fault_plugins().join("libfixture_faults.so");
    let sum = std::process::Command::new("sha256sum").arg(&lib).output().unwrap();
    let actual = String::from_utf8_lossy(&sum.stdout).split_whitespace().next().unwrap().to_string();
    let settings = "[defaults]\nwarmup = \"20ms\"\nmeasurement = \"100ms\"\nsamples = 5\n";
    let run = |pin: &str| {
        let pins =
            if pin.is_empty() { String::new() } else { format!("[sha256]\n\"libfixture_faults.so\" = \"{pin}\"\n") };
        sandbox.write("rigs.toml", &format!("{settings}{pins}"));
        let mut cmd = sandbox.cmd();
        cmd.args(["run", "--plugin", "healthy", "--out", "r.jsonl", "--plugin-dir"]).arg(fault_plugins());
        cmd.assert()
    };

    run("").success();
    run(&actual.to_uppercase()).success();
    let (records, _) = sandbox.records("r.jsonl");
    assert_eq!(records.len(), 2);
    for record in &records {
        assert_eq!(record.plugin.as_ref().unwrap().sha256.as_deref(), Some(actual.as_str()));
    }

    let zeros = "0".repeat(64);
    let refused = run(&zeros).code(2);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(stderr.contains(&format!("refused: its sha256 is {actual}, rigs.toml pins {zeros}")), "{stderr}");
    // regression: a pin of another config file was said to be rigs.toml's.
    std::fs::rename(sandbox.path().join("rigs.toml"), sandbox.path().join("other.toml")).unwrap();
    let mut other = sandbox.cmd();
    other.args(["run", "--plugin", "healthy", "--config", "other.toml", "--out", "r.jsonl", "--plugin-dir"]);
    let stderr = String::from_utf8_lossy(&other.arg(fault_plugins()).assert().code(2).get_output().stderr).into_owned();
    assert!(stderr.contains(&format!("refused: its sha256 is {actual}, other.toml pins {zeros}")), "{stderr}");
    // regression: the refusal was followed by `unknown rig`, as if the rig did not exist.
    assert!(
        stderr.contains("--plugin: rig `healthy` was not found; refused libraries may provide it: ")
            && !stderr.contains("unknown rig"),
        "{stderr}"
    );
    assert_eq!(sandbox.records("r.jsonl").0.len(), 2, "nothing ran, nothing lost");

    let malformed = run("abc").code(2);
    let stderr = String::from_utf8_lossy(&malformed.get_output().stderr).into_owned();
    assert!(
        stderr.contains("rigs.toml:6:") && stderr.contains("sha256 of `libfixture_faults.so` is not 64 hex digits"),
        "{stderr}"
    );
}

#[test]
fn a_library_replaced_during_a_run_is_not_read_again_every_cell_runs_the_bytes_checked() {
    // regression: the parent checked the pin at discovery and the child reopened the path later, so a library
    // swapped in between ran unchecked; and an unpinned library was hashed after its cell, so the record's
    // sha256 could be of other bytes than the code that ran. Now the run seals the library's bytes in memory
    // when its first cell starts, and every child loads a copy of those.
    for pinned in [true, false] {
        let sandbox = Sandbox::new();
        let dir = sandbox.path().join("plugins");
        std::fs::create_dir(&dir).unwrap();
        let lib = dir.join("libfixture_faults.so");
        std::fs::copy(fault_plugins().join("libfixture_faults.so"), &lib).unwrap();
        let checked = sha256_hex(&std::fs::read(&lib).unwrap());
        // The same code, one byte longer: loads the same, hashes differently.
        let mut other = std::fs::read(&lib).unwrap();
        other.push(0);
        let swapped = dir.join("swap.tmp");
        std::fs::write(&swapped, &other).unwrap();
        let pins = if pinned { format!("[sha256]\n\"libfixture_faults.so\" = \"{checked}\"\n") } else { String::new() };
        // Two cells: the first sleeps long enough for the swap to land between the first and the second.
        let settings = "[defaults]\nwarmup = \"10ms\"\nmeasurement = \"600ms\"\nsamples = 3\n";
        sandbox.write(
            "rigs.toml",
            &format!("{settings}[rig.healthy]\nparams = {{ sleep_us = 1000 }}\nmatrix = {{ after = [1, 2] }}\n{pins}"),
        );
        let mut run = std::process::Command::new(crate::support::bin())
            .current_dir(sandbox.path())
            .args(["run", "--out", "r.jsonl", "--plugin-dir"])
            .arg(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Once a child of this run has its private copy mapped, the run has sealed the library: replace it.
        let started = std::time::Instant::now();
        let parent = run.id().to_string();
        let first_cell_runs = || {
            let ours = |e: &std::fs::DirEntry| {
                let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
                // pid (comm) state ppid ...: the parent's pid is the word after the state.
                stat.rsplit_once(") ").and_then(|(_, rest)| rest.split_whitespace().nth(1)) == Some(parent.as_str())
            };
            let mapped = |e: &std::fs::DirEntry| std::fs::read_to_string(e.path().join("maps")).unwrap_or_default();
            let copies = |e: &std::fs::DirEntry| mapped(e).contains("memfd:benchhost-plugin");
            std::fs::read_dir("/proc").unwrap().flatten().any(|e| ours(&e) && copies(&e))
        };
        while !first_cell_runs() {
            assert!(started.elapsed().as_secs() < 60, "no cell started");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::fs::rename(&swapped, &lib).unwrap();
        run.wait().unwrap();
        let (records, _) = sandbox.records("r.jsonl");
        assert_eq!(records.len(), 2);
        for record in &records {
            assert!(record.failure.is_none(), "pinned {pinned}: {:?}", record.failure);
            assert_eq!(record.plugin.as_ref().unwrap().sha256.as_deref(), Some(checked.as_str()), "the bytes that ran");
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, bytes).unwrap();
    let sum = std::process::Command::new("sha256sum").arg(&path).output().unwrap();
    String::from_utf8_lossy(&sum.stdout).split_whitespace().next().unwrap().to_string()
}
