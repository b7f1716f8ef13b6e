use super::*;

#[test]
fn the_spread_of_two_runs_is_read_from_successive_differences_with_a_step_left_out() {
    assert!(of_runs(&[0.0; 5]).is_none(), "five runs are too few");
    // Runs alternating ±1% about a level: successive differences of 2%, the spread of two runs 2%.
    let alternating: Vec<f64> = (0..12).map(|i| if i % 2 == 0 { 0.01 } else { -0.01 }).collect();
    let spread = of_runs(&alternating).unwrap();
    let sd = spread.sd.unwrap();
    assert!((sd - 0.02 / KEPT_SQUARES.sqrt()).abs() < 1e-9, "{sd}");
    assert_eq!((spread.origin.as_str(), spread.runs), (HISTORY, 12));
    // A step of the code (10%) between two runs of a steady series is one difference, left out.
    let mut stepped = vec![0.0; 6];
    stepped.extend([0.1; 6]);
    assert_eq!(of_runs(&stepped).unwrap().sd, Some(0.0));
}

#[test]
fn the_spread_of_normal_runs_is_found_whatever_their_level() {
    // 2,000 runs of sd 1% about a level that rises: two successive runs differ by √2 %.
    let mut rng = crate::stats::bootstrap::Rng::new(83);
    let mut normal = || {
        let uniform = |rng: &mut crate::stats::bootstrap::Rng| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let (u, v) = (uniform(&mut rng).max(1e-300), uniform(&mut rng));
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let logs: Vec<f64> = (0..2000).map(|i| 1e-6 * i as f64 + 0.01 * normal()).collect();
    let sd = of_runs(&logs).unwrap().sd.unwrap();
    assert!((sd - 0.01 * std::f64::consts::SQRT_2).abs() < 0.0008, "{sd}");
}

#[test]
fn degrees_of_freedom_follow_what_the_spread_rests_on() {
    let spread = |origin: &str, runs| BetweenRuns { sd: Some(0.01), origin: origin.into(), runs };
    // 6 runs: 5 differences, 4 kept, 3 degrees of freedom; 30: 29, 24 kept, 23.
    assert_eq!(degrees_of_freedom(&spread(HISTORY, 6)), 3);
    assert_eq!(degrees_of_freedom(&spread(HISTORY, 30)), 23);
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
