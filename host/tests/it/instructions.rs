//! `run --instructions` (issue 18): instructions per iteration counted under Valgrind, exact from process to
//! process, judged exactly, and every way it cannot count said in the record or in one line.

use crate::support::{Sandbox, fault_plugins, workspace_plugins};
use benchhost_record::{Cause, Decision, INSTRUCTIONS, Kind, Record};

const SHORT: &str = "[defaults]\nwarmup = \"20ms\"\nmeasurement = \"60ms\"\nsamples = 5\n";

/// `run --instructions` over `rigs` (a rigs.toml body after [`SHORT`]) with plugins from `dir`: its records and
/// stderr, after checking the run's exit code.
fn counted(rigs: &str, dir: &std::path::Path, args: &[&str], code: i32) -> (Vec<Record>, String) {
    counted_under(rigs, dir, args, code, None)
}

/// [`counted`], with `TMPDIR` set to `tmp` (where a count keeps its scratch directory) when given.
fn counted_under(
    rigs: &str,
    dir: &std::path::Path,
    args: &[&str],
    code: i32,
    tmp: Option<&std::path::Path>,
) -> (Vec<Record>, String) {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", &format!("{SHORT}{rigs}"));
    let mut cmd = sandbox.cmd();
    if let Some(tmp) = tmp {
        cmd.env("TMPDIR", tmp);
    }
    cmd.args(["run", "--instructions", "--out", "r.jsonl", "--plugin-dir"]).arg(dir).args(args);
    let out = cmd.assert().code(code);
    (sandbox.records_if_any("r.jsonl"), String::from_utf8_lossy(&out.get_output().stderr).into_owned())
}

fn count_of(record: &Record) -> f64 {
    let metric = record.metrics.get(INSTRUCTIONS).unwrap_or_else(|| panic!("no count: {record:?}"));
    assert_eq!(
        (metric.unit.as_str(), metric.higher_is_better, metric.n, metric.ci95),
        ("instructions", false, Some(1), None)
    );
    metric.value
}

#[test]
fn two_processes_count_the_same_and_the_record_says_how() {
    // Two arms of identical code, each counted by a process of its own: the harness's sort of 10,000 u64 (its
    // inputs from a fixed seed) and the fixture that only counts its iterations.
    let rigs = "[rig.harness]\nparams = { workload = \"sort10k\" }\nmatrix = { replica = [0, 1] }\n";
    let (records, _) = counted(rigs, &workspace_plugins(), &["--plugin", "harness"], 0);
    assert_eq!(records.len(), 2);
    let (a, b) = (count_of(&records[0]), count_of(&records[1]));
    assert_eq!(a, b, "the same code and inputs count exactly the same in two processes");
    assert!(a > 10_000.0, "sorting 10,000 numbers takes more than one instruction each: {a}");
    for record in &records {
        let how = record.cell.as_ref().unwrap().instructions.clone().expect("the record says how it counted");
        assert!(how.tool.starts_with("valgrind-") && how.tool.contains("--tool=cachegrind"), "{}", how.tool);
        assert_eq!((how.totals.len(), how.threads, how.unclean), (2, Some(1), None));
        assert!(how.iterations >= 1 && how.totals[1] > how.totals[0]);
        assert_eq!((how.totals[1] - how.totals[0]) as f64 / how.iterations as f64, a, "the metric is the difference");
        assert!(record.metrics.contains_key("time"), "the wall time is measured as always");
    }
}

#[test]
fn counts_are_judged_exactly_between_interleaved_arms() {
    let rigs = "[[rig.healthy]]\nparams = { at = \"setup\" }\nmatrix = { after = [0, 1] }\n\
                [[rig.healthy]]\nparams = { at = \"setup\", sleep_us = 1 }\n";
    let (records, _) = counted(rigs, &fault_plugins(), &["--interleave", "--rounds", "2"], 0);
    let verdicts: Vec<&Record> = records
        .iter()
        .filter(|r| r.verdict.as_ref().is_some_and(|v| v.metric.as_deref() == Some(INSTRUCTIONS)))
        .collect();
    assert_eq!(verdicts.len(), 2, "one per arm after the first");
    let same = verdicts[0].verdict.as_ref().unwrap();
    assert_eq!((same.decision, same.ratio, same.ci95), (Decision::NoChange, Some(1.0), Some([1.0, 1.0])));
    // Sleeping a microsecond per iteration is a system call and more: many more instructions.
    let slower = verdicts[1].verdict.as_ref().unwrap();
    assert_eq!(slower.decision, Decision::Regressed, "{:?}", verdicts[1].note);
    let note = verdicts[1].note.as_deref().unwrap();
    assert!(note.starts_with("instructions regressed: ") && note.contains(" per iteration (+"), "{note}");
    assert!(same.test.starts_with("exact"), "{}", same.test);
}

#[test]
fn another_build_is_judged_by_its_count_too() {
    let rigs = "[rig.healthy]\nparams = { at = \"setup\" }\n";
    let dir = fault_plugins();
    let (records, _) = counted(rigs, &dir, &["--against", dir.to_str().unwrap(), "--rounds", "2"], 0);
    let verdict = records
        .iter()
        .find_map(|r| r.verdict.as_ref().filter(|v| v.metric.as_deref() == Some(INSTRUCTIONS)))
        .expect("a verdict on the count");
    assert_eq!(verdict.against.as_ref().unwrap()["build"], dir.display().to_string());
    assert_eq!((verdict.decision, verdict.ratio), (Decision::NoChange, Some(1.0)), "the same library counts the same");
}

#[test]
fn without_valgrind_the_run_stops_in_one_line_that_says_how_to_install_it() {
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.cmd();
    cmd.env("PATH", sandbox.path()).args(["run", "--instructions", "--out", "r.jsonl", "--plugin-dir"]);
    let stderr = sandbox.refused(cmd.arg(fault_plugins()), "r.jsonl");
    assert!(stderr.contains("not installed") && stderr.contains("apt-get install valgrind"), "{stderr}");
}

#[test]
fn a_run_style_rig_is_told_apart_and_the_run_goes_on() {
    let rigs = "[rig.conveyor]\nparams = { records = 100 }\n[rig.healthy]\nparams = { at = \"setup\" }\n";
    let (records, stderr) = counted(rigs, &fault_plugins(), &[], 0);
    assert!(stderr.contains("`conveyor` is a run-style rig") && stderr.contains("not for run-style rigs"), "{stderr}");
    let conveyor = records.iter().find(|r| r.bench == "conveyor").unwrap();
    assert_eq!(conveyor.kind, Kind::Measurement);
    assert!(!conveyor.metrics.contains_key(INSTRUCTIONS));
    assert!(count_of(records.iter().find(|r| r.bench == "healthy").unwrap()) > 0.0);
}

#[test]
fn a_rig_that_crashes_under_valgrind_is_a_failure_and_its_wall_time_is_kept() {
    let (records, _) = counted("[rig.valgrind_shy]\n", &fault_plugins(), &[], 1);
    assert_eq!(records.len(), 1);
    let failure = records[0].failure.as_ref().expect("a failure record");
    assert_eq!((failure.cause, failure.signal.as_deref()), (Cause::Signal, Some("SIGSEGV")));
    assert!(failure.message.starts_with("counting instructions under Valgrind: "), "{}", failure.message);
    assert!(failure.salvaged[0]["metrics"]["iter_time"]["value"].as_f64().is_some(), "{:?}", failure.salvaged);
    assert!(records[0].metrics.is_empty());
}

#[test]
fn a_rig_with_threads_of_its_own_has_no_count_and_says_why() {
    let (records, _) = counted("[rig.spins]\nparams = { at = \"setup\" }\n", &fault_plugins(), &[], 0);
    assert!(!records[0].metrics.contains_key(INSTRUCTIONS));
    let how = records[0].cell.as_ref().unwrap().instructions.clone().unwrap();
    assert_eq!(how.threads, Some(2));
    assert!(how.unclean.as_deref().unwrap().contains("2 threads"), "{:?}", how.unclean);
}

/// The count of the fixture rig `rig` in two runs (two count processes), checked to be one count. Their
/// counts' scratch directories are under a `TMPDIR` of this test's own: the tests of this binary count side
/// by side, and a count that finds the first slot taken by another keeps its files at another path (which is
/// what a count's one path per slot is for, and what a rig whose work depends on its path would count).
fn counted_twice_alike(rig: &str) -> f64 {
    let tmp = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("counted-twice-{rig}"));
    std::fs::create_dir_all(&tmp).unwrap();
    let count = || count_of(&counted_under(&format!("[rig.{rig}]\n"), &fault_plugins(), &[], 0, Some(&tmp)).0[0]);
    let (a, b) = (count(), count());
    assert_eq!(a, b, "two runs, two count processes, one count");
    a
}

#[test]
fn randomness_drawn_at_set_up_counts_the_same_in_every_run() {
    // `seeded` loops a number of rounds (1,000 to 1,999) drawn from std's hasher keys at set-up: a timed process
    // draws from the OS, a count process from the fixed stream every count process gets.
    let a = counted_twice_alike("seeded");
    assert!(a > 1_000.0, "a thousand rounds and more: {a}");
}

#[test]
fn work_bounded_by_the_clock_counts_the_same_in_every_run() {
    // `clocked` spins until 100 us have passed: on the wall's clock its rounds follow the machine's speed and
    // Valgrind's; on a count's every read moves time 1 us on, so they are the same in every count.
    let a = counted_twice_alike("clocked");
    assert!(a > 200_000.0, "200,000 rounds of arithmetic and 100 of the spin: {a}");
}

#[test]
fn work_that_depends_on_the_scratch_path_counts_the_same_in_every_run() {
    // `pathed` loops as many rounds as its scratch dir's path bytes add up to: under a run's randomly named
    // work dir that differed from run to run; a count's scratch dir is the same path every time.
    let a = counted_twice_alike("pathed");
    assert!(a > 1_000.0, "ten rounds per byte of a path: {a}");
}

#[test]
fn a_rig_told_it_is_counted_keeps_no_workers_and_is_counted() {
    let (records, _) = counted("[rig.workers]\n", &fault_plugins(), &[], 0);
    let how = records[0].cell.as_ref().unwrap().instructions.clone().unwrap();
    assert_eq!((how.threads, how.unclean), (Some(1), None), "the count's set-up was told, and kept no worker");
    assert!(count_of(&records[0]) > 0.0);
    assert_eq!(records[0].metrics["workers"].value, 1.0, "the timed process kept its worker");
}
