use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use benchhost_record::{CellInfo, Failure};

fn run() -> RunInfo {
    RunInfo::for_tests(1, Some("r"))
}

fn round(mode: &str, value: f64, hib: bool) -> Record {
    let unit = if hib { "records/s" } else { "ns" };
    let metric = MetricValue {
        value,
        unit: unit.into(),
        higher_is_better: hib,
        ci95: Some([value * 0.99, value * 1.01]),
        n: Some(10),
    };
    let variant = BTreeMap::from([("mode".to_string(), json!(mode))]);
    let mut record = Record::measurement_for_tests("k", run(), variant, BTreeMap::from([("m".to_string(), metric)]));
    record.cell = Some(CellInfo { samples: 10, wall_ms: 100, ..CellInfo::default() });
    record
}

#[test]
fn rounds_combine_into_the_mean_with_a_between_process_interval() {
    let combined = combine(vec![round("a", 10.0, false), round("a", 12.0, false), round("a", 14.0, false)]);
    let m = &combined.metrics["m"];
    assert_eq!((m.value, m.n), (12.0, Some(3)));
    let [lo, hi] = m.ci95.unwrap();
    assert!((hi - 12.0 - 4.303 * 2.0 / 3f64.sqrt()).abs() < 1e-9 && (12.0 - lo - (hi - 12.0)).abs() < 1e-9);
    let cell = combined.cell.unwrap();
    assert_eq!((cell.rounds, cell.samples, cell.wall_ms), (Some(3), 30, 300));
}

#[test]
fn one_failed_round_fails_the_cell_and_names_the_round() {
    let mut bad = round("a", 0.0, false);
    bad.kind = Kind::Failure;
    bad.failure = Some(Failure {
        cause: benchhost_record::Cause::Signal,
        phase: None,
        message: "killed by SIGSEGV".into(),
        signal: None,
        exit_code: None,
        stderr_tail: vec![],
        log: None,
        salvaged: vec![],
    });
    let combined = combine(vec![round("a", 1.0, false), bad, round("a", 1.0, false)]);
    assert_eq!(combined.kind, Kind::Failure);
    assert_eq!(combined.failure.unwrap().message, "round 2 of 3: killed by SIGSEGV");
}

#[test]
fn paired_ratios_per_round_cancel_the_drift_shared_by_both_arms() {
    // The machine drifts 20% between rounds, but B is 5% slower than A in every round.
    let a: Vec<Record> = [100.0, 120.0, 90.0].iter().map(|v| round("a", *v, false)).collect();
    let b: Vec<Record> = [105.0, 126.0, 94.5].iter().map(|v| round("b", *v, false)).collect();
    let verdicts = paired(&[(&b, &a)], &|_, _| 0.03, &run());
    assert_eq!(verdicts.len(), 1, "one verdict per non-reference arm and metric");
    let v = verdicts[0].verdict.as_ref().unwrap();
    assert!((v.ratio.unwrap() - 1.05).abs() < 1e-12);
    assert_eq!(v.decision, Decision::Regressed);
    assert_eq!(v.against.as_ref().unwrap()["mode"], json!("a"));
    assert_eq!(verdicts[0].variant["mode"], json!("b"));
    // The same drift without pairing: B's rounds alone span 94.5..126, far wider than 5%.
    let c: Vec<Record> = [105.0, 100.0, 110.0].iter().map(|v| round("c", *v, true)).collect();
    let a2: Vec<Record> = [100.0, 100.0, 100.0].iter().map(|v| round("a", *v, true)).collect();
    let v = paired(&[(&c, &a2)], &|_, _| 0.03, &run())[0].verdict.clone().unwrap();
    assert_eq!(v.decision, Decision::Inconclusive, "a ratio that moves 0.95..1.10 between rounds decides nothing");
}

#[test]
fn a_comparison_of_two_builds_names_both_libraries() {
    let with_sha = |sha: &str| {
        let mut r = round("a", 10.0, false);
        r.plugin = serde_json::from_value(json!({ "name": "p", "version": "1", "api": "0.1.0", "sha256": sha })).ok();
        r
    };
    let (new, old) = (with_sha("aa"), with_sha("bb"));
    assert_eq!(libraries(&new, &old), ["aa", "bb"]);
    assert!(libraries(&new, &with_sha("aa")).is_empty(), "one file on both sides: nothing to tell apart");
    let (new, old) = (vec![new.clone(), new], vec![old.clone(), old]);
    let verdicts = against(&[(&new, &old)], "../main", &|_, _| 0.03, &run());
    assert_eq!(verdicts[0].verdict.as_ref().unwrap().method.as_ref().unwrap().libraries, ["aa", "bb"]);
}
