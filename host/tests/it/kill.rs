//! A writer killed with SIGKILL at a random moment loses no complete record: the reader reports at most one
//! torn tail line, and the next run appends cleanly after it. 20 trials in CI; set BENCHHOST_KILL_TRIALS=1000
//! for the full count (`cargo test -p benchhost --test kill -- --nocapture`).

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{Sandbox, fault_plugins};

#[test]
fn sigkill_at_random_moments_never_loses_a_complete_record() {
    let trials: u32 = std::env::var("BENCHHOST_KILL_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let sandbox = Sandbox::new();
    let cells = "[rig.healthy]\nmatrix = { after = [0, 1, 2, 3, 4, 5, 6, 7] }\n";
    sandbox.write("rigs.toml", &format!("[defaults]\nwarmup = \"2ms\"\nmeasurement = \"10ms\"\nsamples = 3\n{cells}"));
    let run = || {
        let mut cmd = Command::new(crate::support::bin());
        cmd.current_dir(sandbox.path()).args(["run", "--plugin", "healthy", "--out", "s.jsonl", "--plugin-dir"]);
        cmd.arg(fault_plugins()).stdout(Stdio::null()).stderr(Stdio::null());
        cmd
    };
    // One full run first, to learn how long a run takes: kills land anywhere inside it.
    let start = std::time::Instant::now();
    assert!(run().status().unwrap().success());
    let span_ms = start.elapsed().as_millis().max(10) as u64;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    // A torn line stays in the file as a skipped line once a later run has appended after it, so each trial
    // may add at most one new problem.
    let (mut complete, mut known_problems) = (sandbox.records("s.jsonl").0.len(), 0);
    for trial in 0..trials {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut child = run().spawn().unwrap();
        std::thread::sleep(Duration::from_millis(seed % span_ms));
        let _ = child.kill();
        let _ = child.wait();
        let (records, problems) = sandbox.records("s.jsonl");
        assert!(records.len() >= complete, "trial {trial}: {} records, {complete} before", records.len());
        assert!(problems.len() <= known_problems + 1, "trial {trial}: {problems:?}");
        known_problems = problems.len();
        complete = records.len();
    }
    // The next run appends cleanly after whatever the last kill left.
    assert!(run().status().unwrap().success());
    let (records, problems) = sandbox.records("s.jsonl");
    assert_eq!(records.len(), complete + 8);
    assert!(problems.len() <= known_problems, "{problems:?}");
    println!("{trials} kills, {complete} complete records kept, {known_problems} torn lines skipped");
}
