//! Baselines and verdicts as a user meets them: `compare OLD NEW`, `run --save-baseline`, `run --baseline`,
//! and `--fail-on` as a CI gate.

use crate::support::{Sandbox, fault_plugins};
use benchhost_record::Decision;
use benchhost_record::Kind;

fn line(ts: u64, id: &str, mode: &str, rate: f64, half: f64) -> String {
    format!(
        r#"{{"schema":1,"bench":"kafka_topology","kind":"measurement","run":{{"ts_ms":{ts},"id":"{id}","commit":"{id:0>12}","host":"h","cpu":"c","cores":2,"os":"linux/x86_64","profile":"release"}},"variant":{{"mode":"{mode}"}},"metrics":{{"records_per_s":{{"value":{rate},"unit":"records/s","higher_is_better":true,"ci95":[{},{}],"n":5}}}}}}"#,
        rate - half,
        rate + half
    ) + "\n"
}

/// Nineteen earlier runs of `mode` at `rate`, each ±1% (no run compared spreads wider within itself): with
/// the old side's run, the 20 a series needs for how far its runs differ.
fn steady_history(mode: &str, rate: f64) -> String {
    (1..=19).map(|ts| line(ts, &format!("h{ts}"), mode, rate, rate * 0.01)).collect()
}

#[test]
fn compare_decides_with_the_direction_of_goodness_and_gates_the_exit_code() {
    let sandbox = Sandbox::new();
    let old = line(100, "a", "perthread", 390_000.0, 2_000.0)
        + &line(100, "a", "split", 380_000.0, 2_000.0)
        + &line(100, "a", "gone", 1.0, 0.0);
    sandbox.write("alone.jsonl", &old);
    sandbox.write("old.jsonl", &(steady_history("perthread", 390_000.0) + &steady_history("split", 380_000.0) + &old));
    // perthread lost 10% of its throughput; split gained 0.5%; a new series appeared.
    sandbox.write(
        "new.jsonl",
        &(line(200, "b", "perthread", 351_000.0, 2_000.0)
            + &line(200, "b", "split", 382_000.0, 2_000.0)
            + &line(200, "b", "fresh", 1.0, 0.0)),
    );
    // One run a side: how far two runs differ is not known, so -10% is no verdict, and the table says why.
    let alone =
        sandbox.cmd().args(["compare", "alone.jsonl", "new.jsonl", "--fail-on", "regressed"]).assert().success();
    let stdout = String::from_utf8_lossy(&alone.get_output().stdout).into_owned();
    assert!(stdout.contains("-10.00% [?]") && stdout.contains("inconclusive"), "{stdout}");
    assert!(
        stdout.contains("[?]: how far two runs of 2 series differ") && stdout.contains("run --against"),
        "{stdout}"
    );
    let out = sandbox
        .cmd()
        .args(["compare", "old.jsonl", "new.jsonl", "--out", "v.jsonl", "--fail-on", "regressed"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("gate: 1 verdicts are regressed"), "{stderr}");
    let (verdicts, _) = sandbox.records("v.jsonl");
    let decisions: Vec<(String, Decision)> = verdicts
        .iter()
        .map(|r| (r.variant["mode"].as_str().unwrap().to_string(), r.verdict.as_ref().unwrap().decision))
        .collect();
    assert_eq!(
        decisions,
        [
            ("fresh".to_string(), Decision::Added),
            ("perthread".to_string(), Decision::Regressed),
            ("split".to_string(), Decision::NoChange),
            ("gone".to_string(), Decision::Removed)
        ]
    );
    let regressed = verdicts[1].verdict.as_ref().unwrap();
    assert_eq!(regressed.baseline.as_ref().unwrap().commit.as_deref(), Some("00000000000a"));
    assert!((regressed.ratio.unwrap() - 0.9).abs() < 1e-9);
    assert!(verdicts.iter().all(|r| r.kind == Kind::Verdict && r.metrics.is_empty()));

    // Without a gate the same comparison succeeds; gating on `improved` finds none.
    sandbox.cmd().args(["compare", "old.jsonl", "new.jsonl"]).assert().success();
    sandbox.cmd().args(["compare", "old.jsonl", "new.jsonl", "--fail-on", "improved"]).assert().success();
}

#[test]
fn a_run_saves_a_baseline_and_a_later_run_is_judged_against_it() {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", "[defaults]\nwarmup = \"10ms\"\nmeasurement = \"50ms\"\nsamples = 5\n[rig.healthy]\n");
    let run = |extra: &[&str]| {
        let mut cmd = sandbox.cmd();
        cmd.args(["run", "--out", "res/r.jsonl", "--plugin-dir"]).arg(fault_plugins()).args(extra);
        cmd.assert().success()
    };
    run(&["--save-baseline", "main"]);
    let baseline = sandbox.path().join("res/baselines/main.jsonl");
    let (saved, _) = benchhost_record::reader::read(&baseline).map(|s| (s.records, s.problems)).unwrap();
    assert_eq!(saved.len(), 1);
    let base_run = saved[0].1.run.id.clone();

    run(&["--baseline", "main"]);
    let (records, _) = sandbox.records("res/r.jsonl");
    let kinds: Vec<Kind> = records.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [Kind::Measurement, Kind::Measurement, Kind::Verdict]);
    let verdict = records[2].verdict.as_ref().unwrap();
    assert_eq!(verdict.metric.as_deref(), Some("iter_time"));
    assert_eq!(verdict.baseline.as_ref().unwrap().run_id, base_run);
    assert_eq!(records[2].run.id, records[1].run.id, "the verdict belongs to the judging run");

    let missing = sandbox.cmd().args(["compare", "nope", "res/r.jsonl"]).assert().code(2);
    assert!(String::from_utf8_lossy(&missing.get_output().stderr).contains("no results file or baseline named `nope`"));
}

/// The records of `run --rounds ROUNDS --pairing PAIRING` over two arms of the healthy rig (200 and 2,000 µs per
/// iteration: 10x, so that a round the VM stalls (wake-ups hundreds of µs late) cannot hide the difference in 3
/// rounds; with 600 µs one such round read x1.53 [0.83, 2.80], `inconclusive`).
fn two_arms_interleaved(rounds: &str, pairing: &str) -> Vec<benchhost_record::Record> {
    let sandbox = Sandbox::new();
    let config = "[defaults]\nwarmup = \"10ms\"\nmeasurement = \"30ms\"\nsamples = 5\n[rig.healthy]\nmatrix = { sleep_us = [200, 2000] }\n";
    sandbox.write("rigs.toml", config);
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--rounds", rounds, "--pairing", pairing, "--out", "r.jsonl", "--plugin-dir"])
        .arg(fault_plugins());
    cmd.assert().success();
    sandbox.records("r.jsonl").0
}

#[test]
fn interleaved_rounds_give_between_process_intervals_and_paired_verdicts() {
    let records = two_arms_interleaved("3", "rounds");
    let kinds: Vec<Kind> = records.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [Kind::Measurement, Kind::Measurement, Kind::Verdict]);
    for r in &records[..2] {
        assert_eq!(r.metrics["iter_time"].n, Some(3), "n counts rounds");
        assert_eq!(r.cell.as_ref().unwrap().rounds, Some(3));
    }
    let verdict = records[2].verdict.as_ref().unwrap();
    assert_eq!(records[2].variant["sleep_us"], 2000);
    assert_eq!(verdict.against.as_ref().unwrap()["sleep_us"], 200);
    // Sleeping 2,000 µs instead of 200 µs per iteration is a regression of the time per iteration.
    assert_eq!(verdict.decision, Decision::Regressed, "{:?}", records[2].note);
    assert!(verdict.ratio.unwrap() > 1.5);
}

#[test]
fn every_other_round_runs_the_arms_in_reverse_order() {
    let records = two_arms_interleaved("2", "rounds");
    // Round 2 runs 2,000 then 200, and a cell's record is written when its last round ends.
    let order: Vec<_> = records.iter().map(|r| (r.kind, r.variant["sleep_us"].as_i64())).collect();
    let expected = [(Kind::Measurement, Some(2000)), (Kind::Measurement, Some(200)), (Kind::Verdict, Some(2000))];
    assert_eq!(order, expected);
    assert_eq!(
        records[2].verdict.as_ref().unwrap().against.as_ref().unwrap()["sleep_us"],
        200,
        "still against the first arm"
    );
}

#[test]
fn calibration_records_set_the_threshold_of_later_comparisons() {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", "[defaults]\nwarmup = \"10ms\"\nmeasurement = \"30ms\"\nsamples = 5\n[rig.healthy]\nparams = { sleep_us = 100 }\n");
    let with_plugins = |cmd: &mut assert_cmd::Command| {
        cmd.arg("--plugin-dir").arg(fault_plugins());
    };
    let mut cmd = sandbox.cmd();
    cmd.args(["calibrate", "--rounds", "4", "--out", "r.jsonl"]);
    with_plugins(&mut cmd);
    cmd.assert().success();
    let (calibration, _) = sandbox.records("r.jsonl");
    assert_eq!(calibration.len(), 1, "one record per cell and metric, and no measurement records");
    let c = &calibration[0];
    assert_eq!(
        (c.variant["calibration"].as_str(), c.variant["calibrated_metric"].as_str()),
        (Some("aa"), Some("iter_time"))
    );
    assert_eq!(c.metrics["false_alarm_pct"].n, Some(6), "4 rounds give 6 A/A pairs");
    let suggested = c.metrics["suggested_threshold_pct"].value / 100.0;

    for _ in 0..2 {
        let mut cmd = sandbox.cmd();
        cmd.args(["run", "--out", "runs.jsonl"]);
        with_plugins(&mut cmd);
        cmd.assert().success();
    }
    let (runs, _) = sandbox.records("runs.jsonl");
    let (first, second) = (serde_json::to_string(&runs[0]).unwrap(), serde_json::to_string(&runs[1]).unwrap());
    sandbox.write("old.jsonl", &(first + "\n"));
    sandbox.write("new.jsonl", &(second + "\n"));
    sandbox
        .cmd()
        .args(["compare", "old.jsonl", "new.jsonl", "--threshold", "auto", "--results", "r.jsonl", "--out", "v.jsonl"])
        .assert()
        .success();
    let (verdicts, _) = sandbox.records("v.jsonl");
    assert_eq!(verdicts.len(), 1);
    let used = verdicts[0].verdict.as_ref().unwrap().threshold;
    assert!((used - suggested).abs() < 1e-12, "{used} vs {suggested}");
}

#[test]
fn another_build_runs_as_a_twin_of_every_cell_and_is_judged_round_by_round() {
    let sandbox = Sandbox::new();
    let config = "[defaults]\nwarmup = \"10ms\"\nmeasurement = \"30ms\"\nsamples = 5\n[rig.healthy]\nparams = { sleep_us = 200 }\n";
    sandbox.write("rigs.toml", config);
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--rounds", "3", "--pairing", "rounds", "--out", "r.jsonl", "--plugin-dir"])
        .arg(fault_plugins())
        .arg("--against")
        .arg(fault_plugins());
    cmd.assert().success();
    let (records, _) = sandbox.records("r.jsonl");
    let kinds: Vec<Kind> = records.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [Kind::Measurement, Kind::Verdict], "the other build's numbers stay out of the stream");
    assert_eq!(records[0].metrics["iter_time"].n, Some(3));
    let verdict = records[1].verdict.as_ref().unwrap();
    assert_eq!(verdict.against.as_ref().unwrap()["build"], fault_plugins().display().to_string());
    assert!(verdict.test.contains("other build"), "{}", verdict.test);
    assert_eq!(records[1].variant, records[0].variant);
    // How it was made: three rounds, one pair per process; the same library file on both sides, so no pair of
    // hashes to tell two builds apart.
    let method = verdict.method.as_ref().expect("a paired verdict says how it was made");
    assert_eq!((method.mode.as_str(), method.processes, method.pairs_per_process), ("rounds", 3, 1));
    assert!(method.rule.starts_with("the whole CI95 of the ratio beyond +threshold") && method.libraries.is_empty());

    let empty = sandbox.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--out", "r.jsonl", "--plugin-dir"]).arg(fault_plugins()).arg("--against").arg(&empty);
    let out = cmd.assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("no plugin there (libNAME.so); build the other tree's plugins into it"), "{stderr}");
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--out", "r.jsonl", "--plugin-dir"]).arg(fault_plugins()).args(["--against", "nosuch"]);
    let out = cmd.assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.starts_with("error: --against nosuch: no such directory"), "{stderr}");
}
