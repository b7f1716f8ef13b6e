use super::*;

#[test]
fn the_spread_of_two_runs_is_their_successive_differences_and_never_short_of_the_largest() {
    assert!(of_runs(&[0.0; MIN_RUNS - 1]).is_none(), "19 runs are too few");
    // Runs alternating ±1% about a level: successive differences of 2%, the spread of two runs 2%.
    let alternating: Vec<f64> = (0..MIN_RUNS).map(|i| if i % 2 == 0 { 0.01 } else { -0.01 }).collect();
    let spread = of_runs(&alternating).unwrap();
    assert!((spread.sd.unwrap() - 0.02).abs() < 1e-12, "{spread:?}");
    assert_eq!((spread.origin.as_str(), spread.runs), (HISTORY, 20));
    // A step of 10% between two runs of a steady series: the interval reaches at least as far as that step.
    let mut stepped = vec![0.0; 10];
    stepped.extend([0.1; 10]);
    let sd = of_runs(&stepped).unwrap().sd.unwrap();
    assert!((sd * crate::stats::t_975(19) - 0.1).abs() < 1e-12, "{sd}");
    assert_eq!(degrees_of_freedom(20), 19, "one a difference");
    assert_eq!(degrees_of_freedom(1), 1);
}

/// A run of the series `wal rows=1` at `ts_ms` with `value` ±`half` of metric `t`.
fn run(ts_ms: u64, value: f64, half: f64) -> Record {
    let m = MetricValue {
        value,
        unit: "ns".into(),
        higher_is_better: false,
        ci95: Some([value - half, value + half]),
        n: Some(9),
    };
    let run = benchhost_record::RunInfo::for_tests(ts_ms, Some(&format!("r{ts_ms}")));
    Record::measurement_for_tests("wal", run, [("rows".into(), 1.into())].into(), [("t".into(), m)].into())
}

/// Twenty runs alternating 100 and 102, each ±1.
fn quiet() -> Vec<Record> {
    (0..20).map(|i| run(i, if i % 2 == 0 { 100.0 } else { 102.0 }, 1.0)).collect()
}

#[test]
fn a_history_is_read_on_its_own_machine_without_the_run_judged() {
    let history = quiet();
    let new = run(20, 104.0, 1.0);
    let spreads = Spreads::new(&history);
    let spread = spreads.get(&new, "t", &history[19].metrics["t"], &new.metrics["t"]);
    assert_eq!((spread.origin.as_str(), spread.runs, spread.unsettled.as_deref()), (HISTORY, 20, None));
    // The run judged among its history (a stream that holds it) is not part of it: 19 runs are too few.
    let with_new: Vec<Record> = history[1..].iter().chain([&new]).cloned().collect();
    let spread = Spreads::new(&with_new).get(&new, "t", &history[19].metrics["t"], &new.metrics["t"]);
    assert_eq!((spread.origin.as_str(), spread.runs, spread.sd), (NONE, 19, None));
    // A record of another CPU is judged by nothing measured here.
    let mut elsewhere = new.clone();
    elsewhere.run.cpu = "another".into();
    assert_eq!(spreads.get(&elsewhere, "t", &history[19].metrics["t"], &new.metrics["t"]).origin, NONE);
}

#[test]
fn a_disturbed_new_run_or_a_baseline_off_its_history_leaves_the_comparison_unsettled() {
    let history = quiet();
    let spreads = Spreads::new(&history);
    let settled = |old: &Record, new: &Record| spreads.get(new, "t", &old.metrics["t"], &new.metrics["t"]).unsettled;
    let baseline = &history[19];
    // As wide within itself as the widest before it: settled, whatever its value.
    assert_eq!(settled(baseline, &run(20, 130.0, 1.2)), None);
    // Wider within itself than every run before it: a disturbed run.
    let disturbed = settled(baseline, &run(20, 104.0, 5.0)).unwrap();
    assert!(disturbed.contains("±4.9%") && disturbed.contains("20 runs"), "{disturbed}");
    // A baseline further from the history's median (101) than two successive runs have moved (2%).
    let off = settled(&run(19, 110.0, 1.0), &run(20, 101.0, 1.0)).unwrap();
    assert!(off.contains("+8.9%") && off.contains("baseline"), "{off}");
    assert_eq!(settled(&run(19, 102.5, 1.0), &run(20, 101.0, 1.0)), None, "1.5% off is within 2%");
}
