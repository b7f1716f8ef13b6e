use std::collections::BTreeMap;

use benchhost_plugin_api::{Descriptor, Metric, Unit};
use benchhost_record::MetricValue;
use serde_json::json;

use super::*;

fn run() -> RunInfo {
    RunInfo::for_tests(1, Some("r"))
}

fn arm(variant: i64) -> Record {
    let variant = BTreeMap::from([("spin".to_string(), json!(variant))]);
    let metric =
        |unit: &str, hib| MetricValue { value: 1.0, unit: unit.into(), higher_is_better: hib, ci95: None, n: None };
    let metrics =
        BTreeMap::from([("throughput".to_string(), metric("MB/s", true)), ("time".to_string(), metric("ns", false))]);
    Record::measurement_for_tests("harness", run(), variant, metrics)
}

/// The pairs of a process where side 1 takes `ratio` times side 0, with a slow phase (x1.5 on both) over a
/// third of it and one preempted sample (x1.4 on side 1 alone).
fn pairs(ratio: f64, n: usize) -> Vec<(u64, [u64; 2])> {
    (0..n)
        .map(|i| {
            let phase = if i % 3 == 0 { 1.5 } else { 1.0 };
            let preempted = if i == 7 { 1.4 } else { 1.0 };
            let a = (10_000_000.0 * phase) as u64;
            (1000, [a, (a as f64 * ratio * preempted) as u64])
        })
        .collect()
}

fn descriptor() -> Descriptor {
    Descriptor::iterations("harness", "t").metric(Metric::iter_time("time")).metric(Metric::rate(
        "throughput",
        Unit::MegabytesPerSec,
        "bytes",
    ))
}

fn process(ratio: f64, n: usize, bytes: [u64; 2]) -> Estimate {
    let counters = bytes.map(|c| BTreeMap::from([("bytes".to_string(), c)]));
    from_pairs(&descriptor(), &pairs(ratio, n), &counters)
}

fn threshold(_: &Record, _: &str) -> f64 {
    0.03
}

fn judged(estimates: &[Estimate], mode: &str) -> Vec<Verdict> {
    let (a, b) = (arm(0), arm(1));
    let paired = Paired { arm: &b, reference: &a, against: a.variant.clone(), estimates, mode };
    verdicts(&paired, &threshold, &run()).into_iter().map(|r| r.verdict.unwrap()).collect()
}

#[test]
fn the_trimmed_mean_drops_a_tenth_at_each_end() {
    let mut values = vec![1.0; 18];
    values.extend([100.0, -100.0]);
    assert_eq!(trimmed_mean(&values, TRIM), Some(1.0), "the two wild values are cut");
    assert_eq!(trimmed_mean(&[3.0], TRIM), Some(3.0));
    assert_eq!(trimmed_mean(&[], TRIM), None);
    assert_eq!(trimmed_mean(&[1.0, 2.0, 3.0, 10.0], 0.5), Some(2.5), "never cuts everything");
}

#[test]
fn a_shared_slow_phase_cancels_within_each_pair_and_a_preempted_pair_is_trimmed() {
    let e = process(1.05, 60, [64, 64]);
    assert!((e.log_ratios["time"] - 1.05f64.ln()).abs() < 1e-6, "{e:?}");
    assert!((e.log_ratios["throughput"] + 1.05f64.ln()).abs() < 1e-6, "the rate's ratio is the time's inverted");
    assert_eq!(e.pairs, 60);
    // Twice the bytes in the same time per iteration is twice the throughput.
    assert!((process(1.0, 20, [64, 128]).log_ratios["throughput"] - 2f64.ln()).abs() < 1e-9);
}

#[test]
fn a_run_style_process_estimates_each_metric_by_its_mean_log_ratio_over_pairs_of_runs() {
    let runs = |values: &[(f64, f64)]| -> Vec<BTreeMap<String, f64>> {
        values.iter().map(|&(rate, p99)| BTreeMap::from([("rate".into(), rate), ("p99".into(), p99)])).collect()
    };
    // Two pairs: rate x1.1 and x0.9 (a slow phase on the second pair's arms alike), p99 x2 and a zero.
    let a = runs(&[(100.0, 10.0), (50.0, 10.0)]);
    let b = runs(&[(110.0, 20.0), (45.0, 0.0)]);
    let estimate = from_runs(&[a, b.clone()], false);
    assert_eq!(estimate.pairs, 2);
    let expected = ((1.1f64).ln() + (0.9f64).ln()) / 2.0;
    assert!((estimate.log_ratios["rate"] - expected).abs() < 1e-12);
    assert!((estimate.log_ratios["p99"] - 2f64.ln()).abs() < 1e-12, "a pair with a zero gives no ratio");
    let extra = from_runs(&[runs(&[(100.0, 10.0)]), b], false);
    assert_eq!(extra.pairs, 1, "a run without a partner is left out");
}

#[test]
fn two_concurrent_records_give_the_log_ratio_of_each_metric() {
    let (a, mut b) = (arm(0), arm(1));
    b.metrics.get_mut("time").unwrap().value = 1.1;
    let e = from_records(&a, &b);
    assert!((e.log_ratios["time"] - 1.1f64.ln()).abs() < 1e-12 && e.log_ratios["throughput"] == 0.0);
    assert_eq!(e.pairs, 1);
}

#[test]
fn the_rule_wants_significance_and_an_estimate_beyond_the_threshold() {
    let d = |ratio, ci95, ci90| decide(ratio, ci95, ci90, false, 0.03);
    assert_eq!(d(1.05, [1.04, 1.06], [1.042, 1.058]), Decision::Regressed);
    // Significant, but the estimate is within the threshold, and the CI90 shows it: no change.
    assert_eq!(d(1.02, [1.01, 1.03], [1.012, 1.028]), Decision::NoChange);
    // Beyond the threshold but not significant: the CI95 reaches below 1.
    assert_eq!(d(1.05, [0.99, 1.11], [1.0, 1.10]), Decision::Inconclusive);
    assert_eq!(d(0.95, [0.94, 0.96], [0.942, 0.958]), Decision::Improved);
    // Higher is better: a ratio of 0.95 in throughput is a regression.
    assert_eq!(decide(0.95, [0.94, 0.96], [0.942, 0.958], true, 0.03), Decision::Regressed);
    // No change needs the CI90 inside both bounds.
    assert_eq!(d(1.0, [0.96, 1.04], [0.968, 1.032]), Decision::Inconclusive);
}

#[test]
fn a_slowdown_is_regressed_and_identical_arms_are_no_change() {
    let slower: Vec<Estimate> = [1.049, 1.052, 1.050, 1.051].iter().map(|r| process(*r, 60, [64, 64])).collect();
    let v = judged(&slower, "alternate");
    assert_eq!(v.len(), 2, "the rate and the time");
    assert_eq!((v[0].decision, v[1].decision), (Decision::Regressed, Decision::Regressed));
    assert!((v[1].ratio.unwrap() - 1.0505).abs() < 1e-3);
    let method = v[1].method.as_ref().unwrap();
    assert_eq!((method.mode.as_str(), method.processes, method.pairs_per_process), ("alternate", 4, 60));
    assert_eq!(method.rule, RULE);
    // Each process's estimate, in order, so that the interval can be recomputed from the record.
    let logs: Vec<f64> = slower.iter().map(|e| e.log_ratios["time"]).collect();
    assert_eq!(method.log_ratios, logs);
    let same: Vec<Estimate> = [1.003, 0.998, 1.001, 0.999].iter().map(|r| process(*r, 60, [64, 64])).collect();
    assert!(judged(&same, "concurrent").iter().all(|v| v.decision == Decision::NoChange));
}

#[test]
fn one_process_gives_no_interval_and_says_why() {
    let v = judged(&[process(1.05, 60, [64, 64])], "alternate");
    assert_eq!(v[0].decision, Decision::Inconclusive);
    assert!(v[0].ci95.is_none() && v[0].reason.as_deref().unwrap().contains("at least two"), "{v:?}");
}

#[test]
fn processes_combine_by_their_trimmed_mean_with_yuens_interval() {
    // 1..=10 (as log ratios in hundredths): two cut at each end, mean 5.5; the winsorized values 3,3,3,4,...,8,8,8
    // have variance 42.5 / 9, so the standard error is sqrt(9 * 42.5 / 9 / (6 * 5)) and t(0.975, 5) = 2.571.
    let logs: Vec<f64> = (1..=10).map(|v| v as f64 / 100.0).collect();
    let (ratio, ci95, ci90) = intervals(&logs).unwrap();
    assert!((ratio.ln() - 0.055).abs() < 1e-12);
    let half = 2.571 * (42.5f64 / 30.0).sqrt() / 100.0;
    assert!((ci95[1].ln() - 0.055 - half).abs() < 1e-9 && (0.055 - ci95[0].ln() - half).abs() < 1e-9, "{ci95:?}");
    assert!(ci90[1] < ci95[1] && ci90[0] > ci95[0]);
    // One process far off moves neither the estimate nor the interval beyond what the rest say.
    let mut wild = vec![0.05; 9];
    wild.extend([0.05 + 1e-4, 0.40]);
    let (ratio, ci95, _) = intervals(&wild).unwrap();
    assert!((ratio.ln() - 0.05).abs() < 1e-4 && ci95[1].ln() < 0.051, "{ratio} {ci95:?}");
    assert_eq!(intervals(&[0.1]), None);
}

/// Twenty processes whose time log ratios are `center` plus a spread of ±`spread` (in alternating signs).
fn spread_processes(center: f64, spread: f64) -> Vec<Estimate> {
    (0..20)
        .map(|i| {
            let log = center + if i % 2 == 0 { spread } else { -spread } * (1.0 + (i % 5) as f64) / 3.0;
            Estimate { log_ratios: BTreeMap::from([("time".to_string(), log)]), pairs: 15, ..Estimate::default() }
        })
        .collect()
}

#[test]
fn a_duel_gets_more_processes_only_while_its_headline_is_undecided() {
    let more = |estimates: &[Estimate]| needs_more(estimates, "time", 0.03);
    // Identical arms, tightly measured: `no_change`.
    assert!(!more(&spread_processes(0.0, 0.005)));
    // Processes 1-5% apart: a CI95 of ±2.2%, wider than ±1.5% (a rule on the width extended it), and a CI90 of
    // ±1.8%, within ±3% even 1.5 times as wide: `no_change`, decided.
    assert!(!more(&spread_processes(0.0, 0.03)));
    // Processes 1-7% apart: `no_change` by its CI90 (±2.4%), not by 1.5 times it: one more look.
    assert!(more(&spread_processes(0.0, 0.04)));
    // Processes 2-10% apart: the CI90 (±3.5%) reaches beyond the band: `inconclusive`.
    assert!(more(&spread_processes(0.0, 0.06)));
    // A +4.5% change whose CI95 [1.6%, 7.4%] reaches into the band and excludes 0 even 1.5 times as wide:
    // `regressed`, decided.
    assert!(!more(&spread_processes(0.045, 0.04)));
    // +2% and as wide: neither significant beyond the threshold nor within it.
    assert!(more(&spread_processes(0.02, 0.04)));
    // A looser threshold decides the same spread.
    assert!(!needs_more(&spread_processes(0.0, 0.06), "time", 0.2));
    // Fewer than two processes give no interval: nothing more to judge by.
    assert!(!more(&spread_processes(0.0, 0.06)[..1]));
    // Only the metric asked about counts: a wide tail beside a decided headline adds nothing.
    let mut two = spread_processes(0.0, 0.005);
    for (e, wide) in two.iter_mut().zip(spread_processes(0.0, 0.06)) {
        e.log_ratios.insert("p99".to_string(), wide.log_ratios["time"]);
    }
    assert!(!more(&two) && needs_more(&two, "p99", 0.03));
}

#[test]
fn a_duel_over_layouts_is_judged_for_more_processes_on_its_pairs_as_its_verdict_is() {
    // Five layout pairs whose two processes agree: over the 10 processes, each pair counted twice, the CI90 is
    // ±1.0% (±1.6% 1.5 times as wide, within ±2%); over the 5 pairs' means ±1.5% (±2.3%): undecided.
    let means = [-0.02, 0.0, 0.02, -0.01, 0.01];
    let estimate = |k: usize, pair: Option<usize>| Estimate {
        log_ratios: BTreeMap::from([("time".to_string(), means[k / 2])]),
        pairs: 15,
        pair,
        ..Estimate::default()
    };
    let as_built: Vec<Estimate> = (0..10).map(|k| estimate(k, None)).collect();
    let laid_out: Vec<Estimate> = (0..10).map(|k| estimate(k, Some(k / 2))).collect();
    assert!(!needs_more(&as_built, "time", 0.02));
    assert!(needs_more(&laid_out, "time", 0.02));
    // And the verdict of the same processes is taken on the same pairs.
    let verdict = &judged(&laid_out, "alternate_runs")[0];
    let [lo, hi] = verdict.ci95.unwrap();
    let plain = crate::analysis::duel::pair_intervals(&means).unwrap().1;
    assert!((lo - plain[0]).abs() < 1e-12 && (hi - plain[1]).abs() < 1e-12, "{lo} {hi} against {plain:?}");
}

#[test]
fn a_verdict_whose_processes_read_their_order_says_so() {
    // Twenty processes 3% apart by which arm each set up first, as the harness's copy was (issue 83).
    let ordered: Vec<Estimate> = spread_processes(0.0, 0.03)
        .into_iter()
        .enumerate()
        .map(|(k, e)| Estimate { first: Some(k % 2), ..e })
        .collect();
    let (a, b) = (arm(0), arm(1));
    let note = |estimates: &[Estimate]| {
        let paired = Paired { arm: &b, reference: &a, against: a.variant.clone(), estimates, mode: "alternate" };
        verdicts(&paired, &threshold, &run()).remove(0).note.unwrap()
    };
    assert!(note(&ordered).contains("the order the arms were set up in moved it"), "{}", note(&ordered));
    // The same processes with no order known (both at once): nothing said.
    let unordered: Vec<Estimate> = ordered.into_iter().map(|e| Estimate { first: None, ..e }).collect();
    assert!(!note(&unordered).contains("order"), "{}", note(&unordered));
}
