use std::collections::BTreeMap;

use serde_json::json;

use super::*;

fn run(ts_ms: u64, id: &str) -> RunInfo {
    RunInfo { dirty: Some(false), ..RunInfo::for_tests(ts_ms, Some(id)) }
}

fn measurement(ts_ms: u64, id: &str, rows: i64, metrics: &[(&str, f64, f64, bool)]) -> Record {
    let metrics = metrics
        .iter()
        .map(|&(name, value, half, hib)| {
            let unit = if hib { "rows/s" } else { "ns" }.to_string();
            (
                name.to_string(),
                MetricValue {
                    value,
                    unit,
                    higher_is_better: hib,
                    ci95: Some([value - half, value + half]),
                    n: Some(10),
                },
            )
        })
        .collect();
    Record::measurement_for_tests("wal", run(ts_ms, id), BTreeMap::from([("rows".to_string(), json!(rows))]), metrics)
}

/// Earlier runs of the series `rows` (`wal`), one at each of `values` in turn, each ±0.1%.
fn history(rows: i64, metric: (&str, bool), values: &[f64]) -> Vec<Record> {
    let (name, hib) = metric;
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| measurement(i as u64 + 100, &format!("h{i}"), rows, &[(name, v, v * 0.001, hib)]))
        .collect()
}

/// Two runs of every series and metric of these tests differ by nothing beyond their own intervals, each
/// run's ±2%: as wide as those the tests compare.
fn steady() -> Spreads {
    let runs: Vec<Record> = [1, 1000, 5, 7]
        .into_iter()
        .flat_map(|rows| {
            (0..20)
                .map(move |i| measurement(100 + i, "h", rows, &[("t", 100.0, 2.0, false), ("rate", 50.0, 1.0, true)]))
        })
        .collect();
    Spreads::new(&runs)
}

fn decisions(verdicts: &[Record]) -> Vec<(String, Option<String>, Decision)> {
    verdicts
        .iter()
        .map(|r| {
            let v = r.verdict.as_ref().unwrap();
            (serde_json::to_string(&r.variant).unwrap(), v.metric.clone(), v.decision)
        })
        .collect()
}

#[test]
fn the_direction_of_goodness_decides_which_way_is_worse() {
    // A time that grows 10% with tight CIs regressed; a throughput that grows 10% improved.
    assert_eq!(decide([1.09, 1.11], false, 0.03), Decision::Regressed);
    assert_eq!(decide([1.09, 1.11], true, 0.03), Decision::Improved);
    assert_eq!(decide([0.89, 0.91], false, 0.03), Decision::Improved);
    assert_eq!(decide([0.89, 0.91], true, 0.03), Decision::Regressed);
    assert_eq!(decide([0.99, 1.02], false, 0.03), Decision::NoChange);
    assert_eq!(decide([1.01, 1.06], false, 0.03), Decision::Inconclusive, "straddles the threshold");
    assert_eq!(decide([0.90, 1.10], true, 0.03), Decision::Inconclusive, "too noisy to tell");
}

#[test]
fn series_are_matched_on_bench_and_variant_with_the_newest_record_per_side() {
    let old = vec![
        measurement(1, "old1", 1000, &[("t", 200.0, 1.0, false)]), // superseded by the next line
        measurement(2, "old2", 1000, &[("t", 100.0, 1.0, false), ("rate", 50.0, 0.5, true)]),
        measurement(2, "old2", 5, &[("t", 1.0, 0.0, false)]),
    ];
    let new = vec![
        measurement(3, "new", 1000, &[("t", 120.0, 1.0, false), ("rate", 50.2, 0.5, true)]),
        measurement(3, "new", 7, &[("t", 1.0, 0.0, false)]),
    ];
    let verdicts = compare(&old, &new, &|_, _| 0.03, &steady(), &run(4, "judge"));
    let got = decisions(&verdicts);
    let expected = vec![
        (r#"{"rows":1000}"#.to_string(), Some("rate".to_string()), Decision::NoChange),
        (r#"{"rows":1000}"#.to_string(), Some("t".to_string()), Decision::Regressed),
        (r#"{"rows":7}"#.to_string(), None, Decision::Added),
        (r#"{"rows":5}"#.to_string(), None, Decision::Removed),
    ];
    assert_eq!(got, expected);
    let t = verdicts[1].verdict.as_ref().unwrap();
    assert_eq!(t.baseline.as_ref().unwrap().run_id.as_deref(), Some("old2"), "against the newest old record");
    assert!((t.ratio.unwrap() - 1.2).abs() < 1e-12);
    assert_eq!(verdicts[1].kind, Kind::Verdict);
    assert!(verdicts[1].metrics.is_empty(), "verdicts carry no metrics, as seed 003's");
    assert_eq!(verdicts[1].run.id.as_deref(), Some("judge"));
    assert!(verdicts[1].note.as_deref().unwrap().starts_with("t regressed: x1.2000 ["), "{:?}", verdicts[1].note);
}

#[test]
fn the_ratio_ci_combines_both_sides_noise() {
    // Each side ±1.96% (one relative SE of 1%): the ratio's relative SE is √2 %, so its CI95 is about ±2.77%.
    let old = vec![measurement(1, "a", 1, &[("t", 100.0, 1.96, false)])];
    let new = vec![measurement(2, "b", 1, &[("t", 100.0, 1.96, false)])];
    let v = compare(&old, &new, &|_, _| 0.05, &steady(), &run(3, "c"))[0].verdict.clone().unwrap();
    let [lo, hi] = v.ci95.unwrap();
    assert!((hi.ln() - 0.0277).abs() < 0.0005 && (lo.ln() + 0.0277).abs() < 0.0005, "{lo} {hi}");
    assert_eq!(v.decision, Decision::NoChange);
}

#[test]
fn counts_are_compared_exactly_at_their_own_threshold_with_both_figures() {
    let counted = |ts_ms, id, value: f64| {
        let mut record = measurement(ts_ms, id, 10, &[]);
        let count = MetricValue { value, unit: "instructions".into(), higher_is_better: false, ci95: None, n: Some(1) };
        record.metrics.insert(benchhost_record::INSTRUCTIONS.into(), count);
        record
    };
    // The judging threshold of counts (0.5%), not the time's (3%): 1% more instructions is a regression.
    let threshold = |_: &Record, metric: &str| if metric == benchhost_record::INSTRUCTIONS { 0.005 } else { 0.03 };
    let verdicts = compare(
        &[counted(1, "old", 1200.0)],
        &[counted(2, "new", 1212.0)],
        &threshold,
        &Spreads::none(),
        &run(3, "judge"),
    );
    let v = verdicts[0].verdict.as_ref().unwrap();
    assert_eq!(
        (v.decision, v.ratio, v.ci95, v.threshold),
        (Decision::Regressed, Some(1.01), Some([1.01, 1.01]), 0.005)
    );
    assert!(v.test.starts_with("exact"), "{}", v.test);
    let note = verdicts[0].note.as_deref().unwrap();
    assert!(
        note.starts_with("instructions regressed: 1200.0 -> 1212.0 per iteration (+1.00%) against run old"),
        "{note}"
    );
}

#[test]
fn a_count_of_zero_on_both_sides_is_no_change_and_zero_to_some_is_undefined() {
    // regression: the querier's `files_pruned`, `sort_kept` and `trace_rows_missed`, 0 before and after, were
    // `undefined`, as if nothing could be said of a counter that did not move.
    let count = |value: f64| MetricValue { value, unit: "files".into(), higher_is_better: true, ci95: None, n: None };
    let with = |ts: u64, id: &str, value: f64| {
        let mut record = measurement(ts, id, 1, &[]);
        record.metrics.insert("files_pruned".into(), count(value));
        record
    };
    let verdict = |old: f64, new: f64| {
        let verdicts =
            compare(&[with(1, "a", old)], &[with(2, "b", new)], &|_, _| 0.03, &Spreads::none(), &run(3, "c"));
        verdicts[0].verdict.clone().unwrap()
    };
    let same = verdict(0.0, 0.0);
    assert_eq!((same.decision, same.ratio, same.ci95), (Decision::NoChange, Some(1.0), Some([1.0, 1.0])));
    let from_zero = verdict(0.0, 3.0);
    assert_eq!(from_zero.decision, Decision::Undefined, "0 -> 3 has no ratio");
    assert!(from_zero.reason.unwrap().contains("baseline's value is 0"));
    // A measured zero (a mean of samples, with its interval) stays undefined: its ratio truly cannot be formed.
    let measured = MetricValue { ci95: Some([0.0, 0.0]), n: Some(5), ..count(0.0) };
    let (ratio, ci) = ratio_ci(&measured, &measured);
    assert!(undefined_ratio(&measured, &measured, ratio, ci).unwrap().starts_with("both values are 0"));
}

#[test]
fn two_runs_are_judged_with_how_far_the_series_runs_differ_or_not_at_all() {
    // Each record ±0.1%, the runs 4% apart: within their own intervals a change, but the series' runs spread.
    let old = vec![measurement(1, "a", 1, &[("t", 100.0, 0.1, false)])];
    let new = vec![measurement(2, "b", 1, &[("t", 104.0, 0.1, false)])];
    let judged = |spreads: &Spreads| compare(&old, &new, &|_, _| 0.03, spreads, &run(3, "c")).remove(0);
    // No history, no calibration: inconclusive, no interval, and the note says what decides instead.
    let unknown = judged(&Spreads::none());
    let v = unknown.verdict.as_ref().unwrap();
    assert_eq!((v.decision, v.ci95, v.ratio), (Decision::Inconclusive, None, Some(1.04)));
    assert_eq!(v.between_runs.as_ref().map(|b| (b.origin.as_str(), b.sd, b.runs)), Some(("none", None, 0)));
    assert!(unknown.note.as_deref().unwrap().contains("run --against"), "{:?}", unknown.note);
    // Runs that move by ~2% from one to the next: the 4% is within what two runs differ by.
    let by_turns: Vec<f64> = (0..20).map(|i| if i % 2 == 0 { 100.0 } else { 102.0 }).collect();
    let moving = history(1, ("t", false), &by_turns);
    let v = judged(&Spreads::new(&moving)).verdict.unwrap();
    let between = v.between_runs.unwrap();
    assert_eq!((between.origin.as_str(), between.runs), ("history", 20));
    assert_eq!(v.decision, Decision::Inconclusive);
    let [lo, hi] = v.ci95.unwrap();
    assert!(lo < 1.0 && hi > 1.08, "{lo} {hi}");
    // Runs that never move: the records' own intervals, and a clear change.
    let v = judged(&Spreads::new(&history(1, ("t", false), &[100.0; 20]))).verdict.unwrap();
    assert_eq!(v.decision, Decision::Regressed);
    assert!(v.ci95.unwrap()[0] > 1.035, "{:?}", v.ci95);
    // The same new value from a run spread wider within itself than any before it: not judged.
    let disturbed = vec![measurement(2, "b", 1, &[("t", 104.0, 5.0, false)])];
    let steady_runs = Spreads::new(&history(1, ("t", false), &[100.0; 20]));
    let judged = compare(&old, &disturbed, &|_, _| 0.03, &steady_runs, &run(3, "c")).remove(0);
    let v = judged.verdict.as_ref().unwrap();
    assert_eq!((v.decision, v.ci95), (Decision::Inconclusive, None));
    assert!(v.between_runs.as_ref().unwrap().unsettled.as_deref().unwrap().contains("disturbed"));
    let note = judged.note.as_deref().unwrap();
    assert!(note.contains("disturbed run") && note.contains("run --against"), "{note}");
}

#[test]
fn a_series_history_counts_only_its_own_machine_and_each_record_once() {
    let new = measurement(2, "b", 1, &[("t", 104.0, 0.1, false)]);
    // Runs of another CPU say nothing of this one's.
    let mut elsewhere = history(1, ("t", false), &[100.0; 20]);
    elsewhere.iter_mut().for_each(|r| r.run.cpu = "another".into());
    assert_eq!(Spreads::new(&elsewhere).get(&new, "t", &new.metrics["t"], &new.metrics["t"]).origin, "none");
    // Ten runs, each given twice (a baseline file beside the stream it was saved from), are ten: too few.
    let ten = history(1, ("t", false), &[100.0, 101.0, 100.0, 101.0, 100.0, 101.0, 100.0, 101.0, 100.0, 101.0]);
    let twice: Vec<Record> = ten.iter().chain(&ten).cloned().collect();
    let spread = Spreads::new(&twice).get(&new, "t", &new.metrics["t"], &new.metrics["t"]);
    assert_eq!((spread.origin.as_str(), spread.runs), ("none", 10));
}
