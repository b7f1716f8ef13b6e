//! Paired comparisons side by side (issue 17): `--pairing alternate` (two arms in one process, samples
//! alternating; the default for iterations-style rigs) and `--pairing concurrent` (two processes at once, one
//! per core), for arms of one rig and for two builds.

use crate::support::{Sandbox, fault_plugins};
use benchhost_record::{Decision, Kind, Record};

const SHORT: &str = "[defaults]\nwarmup = \"10ms\"\nmeasurement = \"30ms\"\nsamples = 5\n";

/// `run` with `args` over the healthy rig's arms `sleep_us` (200 and 600 µs per iteration): its records.
fn two_arms(args: &[&str]) -> Vec<Record> {
    arms_of("healthy", "matrix = { sleep_us = [200, 600] }", args)
}

/// `run` with `args` over the fault plugins' `rig` with `arms` (its `rigs.toml` table, on the short plan), which
/// must succeed: its records.
fn arms_of(rig: &str, arms: &str, args: &[&str]) -> Vec<Record> {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", &format!("{SHORT}[rig.{rig}]\n{arms}\n"));
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--out", "r.jsonl", "--plugin-dir"]).arg(fault_plugins()).args(args);
    cmd.assert().success();
    sandbox.records("r.jsonl").0
}

/// The records are each arm's, then the verdict on the second; the verdict, checked to be a regression of the
/// time per iteration against the first arm made in `mode` over `processes` processes.
fn checked_verdict(records: &[Record], mode: &str, processes: u64) -> benchhost_record::Verdict {
    let kinds: Vec<Kind> = records.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [Kind::Measurement, Kind::Measurement, Kind::Verdict]);
    for r in &records[..2] {
        assert_eq!(r.metrics["iter_time"].n, Some(processes), "n counts processes");
        assert_eq!(r.cell.as_ref().unwrap().rounds, Some(processes as u32));
    }
    let verdict = records[2].verdict.clone().unwrap();
    assert_eq!(
        (records[2].variant["sleep_us"].as_i64(), verdict.against.as_ref().unwrap()["sleep_us"].as_i64()),
        (records[1].variant["sleep_us"].as_i64(), records[0].variant["sleep_us"].as_i64())
    );
    assert_eq!(verdict.decision, Decision::Regressed, "{:?}", records[2].note);
    assert!(verdict.ratio.unwrap() > 1.5, "{:?}", verdict.ratio);
    let method = verdict.method.clone().expect("a paired verdict says how it was made");
    assert_eq!((method.mode.as_str(), method.processes), (mode, processes));
    assert!(method.rule.starts_with("regressed (improved): significant at 5%"), "{}", method.rule);
    verdict
}

#[test]
fn arms_alternate_in_one_process_by_default_and_are_judged_over_processes() {
    let records = two_arms(&["--rounds", "3"]);
    let verdict = checked_verdict(&records, "alternate", 3);
    // 30 ms of measurement over 3 processes is 10 ms per arm and process: the minimum of ten pairs.
    assert_eq!(verdict.method.unwrap().pairs_per_process, 10);
    assert!(verdict.test.contains("samples alternating"), "{}", verdict.test);
    // Each arm's record is made from its side of every pair: the samples of the three processes.
    assert_eq!(records[0].cell.as_ref().unwrap().samples, 30);
}

#[test]
fn run_style_arms_alternate_whole_runs_in_one_process_by_default() {
    // The conveyor's arms: 1,000 records and a pause of 2 ms or 6 ms inside every run, so the second is ~3x
    // slower in records/s (higher is better: a regression).
    let arms = "params = { records = 1000 }\nmatrix = { pause_us = [2000, 6000] }";
    let records = arms_of("conveyor", arms, &["--interleave", "--rounds", "3"]);
    let kinds: Vec<Kind> = records.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [Kind::Measurement, Kind::Measurement, Kind::Verdict], "one verdict: records_per_s");
    for r in &records[..2] {
        assert_eq!(r.metrics["records_per_s"].n, Some(3), "n counts processes");
    }
    let verdict = records[2].verdict.clone().unwrap();
    assert_eq!(verdict.metric.as_deref(), Some("records_per_s"));
    assert_eq!(verdict.decision, Decision::Regressed, "{:?}", records[2].note);
    assert!(verdict.ratio.unwrap() < 0.6, "{:?}", verdict.ratio);
    assert!(verdict.test.contains("whole runs alternating"), "{}", verdict.test);
    let method = verdict.method.unwrap();
    assert_eq!((method.mode.as_str(), method.processes), ("alternate_runs", 3));
    let pairs = method.pairs_per_process;
    assert!(pairs >= 2 && pairs.is_multiple_of(2), "whole A B B A blocks: {pairs} pairs");
}

#[test]
fn a_run_style_duel_whose_processes_disagree_gets_more_of_them() {
    // Arms 0.5% apart whose every run draws its pause anew, up to twice as long: ten processes leave the CI95
    // wider than ±1.5% and across the ±3% band, so the duel adds four processes at a time, up to 54 (they take
    // milliseconds, well within a run-style duel's 50 s). regression: with pauses up to 40% longer, two cold CI
    // runs (the rest of the suite beside it) read the arms x0.92 apart, decided at 14 and then at 10; a run's
    // spread of ±30% keeps even such a shift across the band.
    let arms = "params = { records = 1000, pause_us = 2000 }\nmatrix = { jitter_pct = [99, 100] }";
    let records = arms_of("conveyor", arms, &["--interleave"]);
    let verdict = records.last().and_then(|r| r.verdict.clone()).expect("a verdict");
    let method = verdict.method.unwrap();
    let note = records.last().unwrap().note.clone();
    assert_eq!(method.mode, "alternate_runs");
    let added = (14..=54).step_by(4).collect::<Vec<u64>>();
    assert!(added.contains(&method.processes), "10 planned, then 4 more at a time: {} ({note:?})", method.processes);
    for r in &records[..2] {
        let n = r.metrics["records_per_s"].n;
        assert_eq!(n, Some(method.processes), "each arm's record counts the added processes");
    }
}

#[test]
fn a_run_style_rig_that_measures_windows_duels_in_windows_unless_it_cannot_or_is_asked_for_whole_runs() {
    // `meter` declares windows; its arms report 1000 and 1100 records/s, each window the same small pattern, so
    // the ratio is 1.1 exactly when the k-th window of one arm is paired with the k-th of the other.
    let cases = [
        (0, "alternate", "alternate_windows"),
        (1, "alternate", "alternate_runs"),
        (0, "whole-runs", "alternate_runs"),
    ];
    for (whole, pairing, mode) in cases {
        let arms = format!("params = {{ whole = {whole} }}\nmatrix = {{ rate = [1000, 1100] }}");
        let records = arms_of("meter", &arms, &["--interleave", "--pairing", pairing]);
        let verdict =
            records.iter().find_map(|r| r.verdict.clone().filter(|v| v.metric.as_deref() == Some("records_per_s")));
        let verdict = verdict.expect("a verdict on records_per_s");
        assert_eq!(verdict.method.as_ref().unwrap().mode, mode, "whole = {whole}, --pairing {pairing}");
        assert_eq!(verdict.decision, Decision::Improved, "whole = {whole}, --pairing {pairing}");
        assert!((verdict.ratio.unwrap() - 1.1).abs() < 1e-9, "{:?}", verdict.ratio);
    }
}

#[test]
fn an_arm_whose_thread_runs_while_the_other_is_timed_is_measured_and_named() {
    // Each arm leaves a thread spinning from its set-up on (`after` changes nothing there): while one arm is
    // timed, the other's thread takes a core.
    let sandbox = Sandbox::new();
    let arms = "params = { at = \"setup\", sleep_us = 200 }\nmatrix = { after = [0, 1] }";
    sandbox.write("rigs.toml", &format!("{SHORT}[rig.spins]\n{arms}\n"));
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--interleave", "--rounds", "2", "--out", "r.jsonl", "--plugin-dir"]).arg(fault_plugins());
    let out = cmd.assert().success().get_output().clone();
    let (records, _) = sandbox.records("r.jsonl");
    for r in &records[..2] {
        let idle = r.cell.as_ref().unwrap().conditions.as_ref().unwrap().idle_arm_cpu_percent;
        assert!(idle.is_some_and(|p| p > 20.0), "the spinning thread ran while the other arm was timed: {idle:?}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("while the arm it duelled was timed"), "{stderr}");
    // The healthy rig has no threads of its own: nothing to say.
    let records = two_arms(&["--rounds", "2"]);
    assert!(
        records[..2].iter().all(|r| r
            .cell
            .as_ref()
            .unwrap()
            .conditions
            .as_ref()
            .unwrap()
            .idle_arm_cpu_percent
            .is_none())
    );
}

#[test]
fn concurrent_arms_run_at_once_one_per_core() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return; // Needs two cores; the refusal on one core is tested below.
    }
    // Five pairs of processes, not two: with two, one pair slowed by a busy CI machine (its 200 µs sleeps
    // stretched) made the interval [0.25, 16.7] and the verdict inconclusive. And arms 10 times apart, not 3:
    // a cold CI run, its VM's hypervisor taking 12-24% of the CPU, read 200 against 600 µs x1.79 [0.83, 3.84].
    let records =
        arms_of("healthy", "matrix = { sleep_us = [200, 2000] }", &["--rounds", "5", "--pairing", "concurrent"]);
    let verdict = checked_verdict(&records, "concurrent", 5);
    assert_eq!(verdict.method.unwrap().pairs_per_process, 1, "one pair of records per pair of processes");
    assert!(verdict.test.contains("both arms at once"), "{}", verdict.test);
}

#[test]
fn concurrent_pairing_on_one_core_is_refused_before_anything_runs() {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", &format!("{SHORT}[rig.healthy]\nmatrix = {{ sleep_us = [200, 600] }}\n"));
    let mut cmd = assert_cmd::Command::new("taskset");
    cmd.current_dir(sandbox.path()).args(["-c", "0"]).arg(crate::support::bin());
    cmd.args(["run", "--interleave", "--pairing", "concurrent", "--out", "r.jsonl", "--plugin-dir"])
        .arg(fault_plugins());
    let stderr = sandbox.refused(&mut cmd, "r.jsonl");
    assert!(stderr.contains("one per core") && stderr.contains("use --pairing alternate or rounds"), "{stderr}");
}

#[test]
fn another_build_duels_each_cell_in_one_process_and_the_verdict_is_on_this_build() {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", &format!("{SHORT}[rig.healthy]\nparams = {{ sleep_us = 200 }}\n"));
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--rounds", "2", "--out", "r.jsonl", "--plugin-dir"]).arg(fault_plugins());
    cmd.arg("--against").arg(fault_plugins());
    cmd.assert().success();
    let (records, _) = sandbox.records("r.jsonl");
    let kinds: Vec<Kind> = records.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [Kind::Measurement, Kind::Verdict], "the other build's numbers stay out of the stream");
    let verdict = records[1].verdict.as_ref().unwrap();
    assert_eq!(verdict.against.as_ref().unwrap()["build"], fault_plugins().display().to_string());
    let method = verdict.method.as_ref().unwrap();
    assert_eq!((method.mode.as_str(), method.processes), ("alternate", 2));
    assert!(method.libraries.is_empty(), "the same library file on both sides");
    assert_ne!(verdict.decision, Decision::Undefined);
}

#[test]
fn a_duel_whose_processes_are_costly_runs_fewer_of_them() {
    // Each arm sleeps 300 ms in setup: a process costs ~0.6 s beyond its measuring, so 20 would spend 12 s.
    let arms = "params = { setup_ms = 300 }\nmatrix = { sleep_us = [200, 600] }";
    checked_verdict(&arms_of("healthy", arms, &["--interleave"]), "alternate", 10); // duel_plan::LEAST_PROCESSES
}

#[test]
fn a_duel_whose_processes_disagree_gets_more_of_them_and_a_clear_one_does_not() {
    // A clear change is decided in the planned 20 processes.
    checked_verdict(&two_arms(&["--interleave"]), "alternate", 20);
    // Identical arms (`after` changes nothing in a healthy rig), the one set up first in each process 20%
    // slower: the processes read ±18% by turns, the estimate ~1 and the CI90 beyond ±3% at 20 to 64 processes
    // (`inconclusive` whatever the timing), so the duel adds four processes at a time, up to 64.
    let arms = "params = { sleep_us = 1000, first_slower_pct = 20 }\nmatrix = { after = [0, 1] }";
    let records = arms_of("healthy", arms, &["--interleave"]);
    let verdict = records.last().and_then(|r| r.verdict.clone()).expect("a verdict");
    assert_eq!(verdict.method.unwrap().processes, 64, "{:?}", records.last().unwrap().note);
    assert_eq!(verdict.decision, Decision::Inconclusive);
    for r in &records[..2] {
        assert_eq!(r.metrics["iter_time"].n, Some(64), "each arm's record counts the added processes");
    }
}

#[test]
fn a_rig_that_cannot_be_set_up_twice_in_one_process_is_compared_in_rounds_and_says_why() {
    // The loner binds an address named after its process: the second instance of a duel's process fails.
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", &format!("{SHORT}[rig.loner]\nmatrix = {{ sleep_us = [200, 600] }}\n"));
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--interleave", "--rounds", "3", "--out", "r.jsonl", "--plugin-dir"]).arg(fault_plugins());
    let out = cmd.assert().success().get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let note = "a second instance of `loner` failed to set up in the process where the first had (binding @";
    assert!(stderr.contains(note) && stderr.contains("made in rounds instead"), "{stderr}");
    let (records, _) = sandbox.records("r.jsonl");
    let kinds: Vec<Kind> = records.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [Kind::Measurement, Kind::Measurement, Kind::Verdict], "no failure record: {records:?}");
    for r in &records[..2] {
        assert_eq!(r.cell.as_ref().unwrap().rounds, Some(3), "each arm in 3 processes of its own");
    }
    let verdict = records[2].verdict.clone().unwrap();
    // Three rounds of 3x the sleep: `regressed`, or on a loaded CI host (x1.99 [0.67, 5.85] once) `inconclusive`;
    // what this test is about is the fallback, below.
    let slower = matches!(verdict.decision, Decision::Regressed | Decision::Inconclusive);
    assert!(slower && verdict.ratio.unwrap() > 1.0, "{:?}", records[2].note);
    let method = verdict.method.unwrap();
    assert_eq!((method.mode.as_str(), method.processes), ("rounds", 3));
    let why = method.fallback.expect("the verdict says why it was not made in one process");
    assert!(why.starts_with("not in one process: its second instance failed to set up: binding @"), "{why}");
}
