use serde_json::json;

use super::*;

const RUN: &str =
    r#"{"ts_ms": 1783679451911, "host": "h", "cpu": "c", "cores": 2, "os": "linux", "profile": "release"}"#;

/// A `wal rows=N` verdict on `time` (lower is better): `decision` at `ratio`.
fn verdict(rows: i64, decision: &str, ratio: f64) -> Record {
    serde_json::from_value(json!({
        "schema": 1, "bench": "wal", "kind": "verdict", "variant": {"rows": rows}, "metrics": {}, "note": "n",
        "run": serde_json::from_str::<serde_json::Value>(RUN).unwrap(),
        "verdict": {"metric": "time", "test": "t", "ratio": ratio, "ci95": [ratio - 0.01, ratio + 0.01],
                    "threshold": 0.03, "decision": decision}
    }))
    .unwrap()
}

/// An acknowledgement of `wal rows=1000`'s `metric` going `decision` by `ratio` [lo, hi].
fn ack(id: &str, metric: &str, decision: &str, ratio: f64, ci95: [f64; 2]) -> Record {
    serde_json::from_value(json!({
        "schema": 1, "bench": "wal", "kind": "acknowledgement", "variant": {"rows": 1000},
        "run": serde_json::from_str::<serde_json::Value>(RUN).unwrap(),
        "acknowledgement": {"id": id, "metric": metric, "decision": decision, "ratio": ratio, "ci95": ci95,
            "higher_is_better": false, "from_ts_ms": 1, "source": "verdict", "reason": "a new check", "by": "ann"}
    }))
    .unwrap()
}

#[test]
fn an_acknowledgement_covers_its_series_metric_and_direction_up_to_the_far_end_of_its_interval() {
    let accepted = ack("a1", "time", "regressed", 1.05, [1.04, 1.06]);
    let acks = [&accepted];
    assert_eq!(coverage(&verdict(1000, "regressed", 1.05), &acks), Coverage::Covered(&accepted));
    assert_eq!(coverage(&verdict(1000, "regressed", 1.035), &acks), Coverage::Covered(&accepted), "a smaller one");
    assert_eq!(coverage(&verdict(1000, "regressed", 1.06), &acks), Coverage::Covered(&accepted), "the far end");
    let Coverage::Exceeds(by, beyond) = coverage(&verdict(1000, "regressed", 1.10), &acks) else { panic!() };
    assert_eq!(by, &accepted);
    assert!((beyond - (1.10 / 1.06 - 1.0)).abs() < 1e-12, "{beyond}");
    assert_eq!(coverage(&verdict(1000, "improved", 0.95), &acks), Coverage::None, "another direction");
    assert_eq!(coverage(&verdict(10, "regressed", 1.05), &acks), Coverage::None, "another series");
    let other_metric = ack("a2", "bytes", "regressed", 1.05, [1.04, 1.06]);
    assert_eq!(coverage(&verdict(1000, "regressed", 1.05), &[&other_metric]), Coverage::None, "another metric");
}

#[test]
fn an_accepted_improvement_is_bounded_below() {
    let accepted = ack("a1", "time", "improved", 0.90, [0.88, 0.92]);
    assert_eq!(coverage(&verdict(1000, "improved", 0.89), &[&accepted]), Coverage::Covered(&accepted));
    let Coverage::Exceeds(_, beyond) = coverage(&verdict(1000, "improved", 0.80), &[&accepted]) else { panic!() };
    assert!((beyond - (0.88 / 0.80 - 1.0)).abs() < 1e-12, "{beyond}");
}

#[test]
fn a_covered_verdict_keeps_its_decision_and_says_who_accepted_it_and_a_larger_one_by_how_much() {
    let accepted = ack("a1", "time", "regressed", 1.05, [1.04, 1.06]);
    let mut verdicts = [verdict(1000, "regressed", 1.05), verdict(1000, "regressed", 1.08)];
    annotate(&mut verdicts, &[&accepted]);
    let v = verdicts[0].verdict.as_ref().unwrap();
    assert_eq!(v.decision, benchhost_record::Decision::Regressed);
    assert_eq!(v.accepted.as_ref().unwrap().id, "a1");
    assert_eq!(verdicts[0].note.as_deref(), Some("n; accepted: a new check (ann, 2026-07-10)"));
    assert!(verdicts[1].verdict.as_ref().unwrap().accepted.is_none());
    let note = verdicts[1].note.as_deref().unwrap();
    assert_eq!(note, "n; exceeds the accepted x1.050 [1.040, 1.060] (a1: a new check) by 1.9%");
}

#[test]
fn of_two_acknowledgements_the_wider_covers() {
    let (narrow, wide) =
        (ack("a1", "time", "regressed", 1.05, [1.04, 1.06]), ack("a2", "time", "regressed", 1.10, [1.08, 1.12]));
    assert_eq!(coverage(&verdict(1000, "regressed", 1.09), &[&narrow, &wide]), Coverage::Covered(&wide));
    let Coverage::Exceeds(by, _) = coverage(&verdict(1000, "regressed", 1.2), &[&narrow, &wide]) else { panic!() };
    assert_eq!(by, &wide, "the one it exceeds least");
}

#[test]
fn an_acknowledgement_holds_from_its_change_on_and_not_against_a_baseline_that_has_it() {
    let mut accepted = ack("a1", "time", "regressed", 1.05, [1.04, 1.06]);
    accepted.acknowledgement.as_mut().unwrap().from_ts_ms = 1_000;
    let at = |ts_ms: u64, baseline_ts: Option<u64>| {
        let mut v = verdict(1000, "regressed", 1.05);
        v.run.ts_ms = ts_ms;
        v.verdict.as_mut().unwrap().baseline =
            baseline_ts.map(|ts_ms| benchhost_record::BaselineRef { run_id: None, commit: None, ts_ms });
        coverage(&v, &[&accepted])
    };
    assert_eq!(at(1_000, None), Coverage::Covered(&accepted));
    assert_eq!(at(999, None), Coverage::None, "a run before the change");
    assert_eq!(at(5_000, Some(900)), Coverage::Covered(&accepted), "a baseline from before the change");
    assert_eq!(at(5_000, Some(1_000)), Coverage::None, "a baseline that has the change: this one is another");
}
