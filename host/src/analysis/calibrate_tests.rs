use serde_json::json;

use super::*;

fn run(host: &str, ts_ms: u64) -> RunInfo {
    RunInfo { host: host.into(), ..RunInfo::for_tests(ts_ms, None) }
}

fn round(value: f64, half_pct: f64) -> Record {
    let half = value * half_pct / 100.0;
    let metric = MetricValue {
        value,
        unit: "ns".into(),
        higher_is_better: false,
        ci95: Some([value - half, value + half]),
        n: Some(10),
    };
    let variant = BTreeMap::from([("rows".to_string(), json!(1000))]);
    Record::measurement_for_tests("wal", run("h", 1), variant, BTreeMap::from([("t".to_string(), metric)]))
}

#[test]
fn rounds_that_drift_more_than_their_in_process_ci_raise_false_alarms() {
    // Each round claims ±0.5%, but the rounds move 100, 104, 96, 102: the in-process CI understates the noise.
    let rounds: Vec<Record> = [100.0, 104.0, 96.0, 102.0].iter().map(|v| round(*v, 0.5)).collect();
    let records = calibrate(&[rounds], 0.01, &run("h", 5));
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(r.variant[MARK], "aa");
    assert_eq!(r.variant[METRIC], "t");
    // 6 pairs, ratios 1.04, 0.96, 1.02, 0.923, 0.981, 1.0625: every one is beyond ±1% with a tight CI.
    assert_eq!(r.metrics["false_alarm_pct"].value, 100.0, "{:?}", r.metrics);
    assert_eq!(r.metrics["false_alarm_pct"].n, Some(6));
    assert!((r.metrics["ci_half_width_pct"].value - 0.5).abs() < 1e-9);
    // Quiet at the suggested threshold: the largest pair moves 8.3% (96 -> 104).
    let suggested = r.metrics["suggested_threshold_pct"].value;
    assert!((7.0..9.0).contains(&suggested), "{suggested}");
    assert!(r.note.as_deref().unwrap().starts_with("A/A: 6 of 6 round pairs alarmed at ±1.0%"));
}

#[test]
fn later_comparisons_find_the_threshold_of_their_series_and_host() {
    let rounds: Vec<Record> = [100.0, 101.0, 100.5].iter().map(|v| round(*v, 0.2)).collect();
    let mut calibration = calibrate(&[rounds], 0.01, &run("h", 5));
    let measured = round(100.0, 0.5);
    let found = Thresholds::new(&calibration, "h").get(&measured, "t").unwrap();
    assert!(found > 0.0 && found < 0.02, "{found}");
    assert_eq!(Thresholds::new(&calibration, "other-host").get(&measured, "t"), None);
    assert_eq!(Thresholds::new(&calibration, "h").get(&measured, "rate"), None);
    calibration[0].variant.insert("rows".into(), json!(10));
    assert_eq!(Thresholds::new(&calibration, "h").get(&measured, "t"), None, "another series");
}

#[test]
fn a_cell_noisier_than_any_usual_threshold_still_gets_one() {
    // Rounds 100, 250, 90 (a loaded machine's sleeps): a pair moves 2.8x, beyond the 100% a fixed search stopped at.
    let rounds: Vec<Record> = [100.0, 250.0, 90.0].iter().map(|v| round(*v, 1.0)).collect();
    let r = &calibrate(&[rounds], 0.01, &run("h", 5))[0];
    let suggested = r.metrics["suggested_threshold_pct"].value / 100.0;
    // 90 after 250 is a ratio of 0.36; ±1% on each round combine (in logs) to ±1.414%, so the interval's
    // high end is 0.36513 and it reads as an improvement until the threshold reaches 1 / 0.36513 - 1 = 1.7388.
    assert!((1.7385..1.7395).contains(&suggested), "{suggested}");
    let quiet = rounds_judged_at(&[100.0, 250.0, 90.0], suggested);
    assert_eq!(quiet, 0, "no pair alarms at the suggested threshold");
    assert!(rounds_judged_at(&[100.0, 250.0, 90.0], suggested - 0.001) > 0, "the step below alarms");
}

fn rounds_judged_at(values: &[f64], threshold: f64) -> u64 {
    let rounds: Vec<Record> = values.iter().map(|v| round(*v, 1.0)).collect();
    let r = &calibrate(&[rounds], threshold, &run("h", 5))[0];
    (r.metrics["false_alarm_pct"].value * r.metrics["false_alarm_pct"].n.unwrap() as f64 / 100.0).round() as u64
}
