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
}

#[test]
fn degrees_of_freedom_follow_what_the_spread_rests_on() {
    let spread = |origin: &str, runs| BetweenRuns { sd: Some(0.01), origin: origin.into(), runs };
    assert_eq!(degrees_of_freedom(&spread(HISTORY, 20)), 19, "one a difference");
    assert_eq!(degrees_of_freedom(&spread(CALIBRATION, 10)), 9);
    assert_eq!(degrees_of_freedom(&spread(CALIBRATION, 1)), 1);
}

#[test]
fn a_calibration_stands_in_for_a_short_history_on_its_own_machine() {
    use benchhost_record::MetricValue;
    let round = |ts_ms: u64, value: f64| {
        let m =
            MetricValue { value, unit: "ns".into(), higher_is_better: false, ci95: Some([value, value]), n: Some(9) };
        let run = benchhost_record::RunInfo::for_tests(ts_ms, Some("r"));
        Record::measurement_for_tests("wal", run, [("rows".into(), 1.into())].into(), [("t".into(), m)].into())
    };
    let rounds: Vec<Record> =
        [100.0, 102.0, 100.0, 102.0].iter().enumerate().map(|(i, &v)| round(i as u64, v)).collect();
    let calibrations = calibrate::calibrate(std::slice::from_ref(&rounds), 0.03, &rounds[0].run);
    let cv = calibrations[0].metrics["round_cv_pct"].value / 100.0;
    // Three runs of its own are too few: the calibration's rounds give the spread, √2 of one round's.
    let spread = Spreads::new(&rounds[..3], &calibrations).get(&rounds[0], "t");
    assert_eq!((spread.origin.as_str(), spread.runs), (CALIBRATION, 4));
    assert!((spread.sd.unwrap() - std::f64::consts::SQRT_2 * cv).abs() < 1e-12);
    // A record of another CPU is judged by nothing measured here.
    let mut elsewhere = rounds[0].clone();
    elsewhere.run.cpu = "another".into();
    assert_eq!(Spreads::new(&rounds, &calibrations).get(&elsewhere, "t").origin, NONE);
}
