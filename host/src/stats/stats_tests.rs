use proptest::prelude::*;

use super::*;

#[test]
fn summary_of_known_values() {
    let s = crate::stats::summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
    assert_eq!((s.n, s.median, s.mean, s.min, s.max), (8, 4.5, 5.0, 2.0, 9.0));
    assert!((s.stddev - 2.138_089_935).abs() < 1e-6, "{}", s.stddev);
    // |x - 4.5| = 2.5 .5 .5 .5 .5 .5 2.5 4.5 -> median 0.5 -> scaled 0.7413
    assert!((s.mad - 0.7413).abs() < 1e-9, "{}", s.mad);
    assert_eq!(crate::stats::summarize(&[3.0]).unwrap().stddev, 0.0);
    assert!(crate::stats::summarize(&[]).is_none());
    assert!(crate::stats::summarize(&[1.0, f64::NAN]).is_none());
}

#[test]
fn tukey_fences_classify_mild_and_severe() {
    // With the four extremes, q1 = 10 and q3 = 13 (type-7 quartiles of 12 values), IQR = 3: mild in
    // (17.5, 22] and [1, 5.5), severe beyond 22 and below 1.
    let mut values: Vec<f64> = vec![10.0, 10.0, 11.0, 11.0, 12.0, 12.0, 13.0, 13.0];
    values.extend([20.0, 30.0, 4.0, -5.0]);
    let o = crate::stats::summarize(&values).unwrap().outliers;
    assert_eq!(o, Outliers { low_severe: 1, low_mild: 1, high_mild: 1, high_severe: 1 }, "{o:?}");
}

#[test]
fn slope_through_the_origin() {
    assert_eq!(slope(&[(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)]), 10.0);
    // Σxy = 1*12 + 2*19 + 3*31 = 143, Σx² = 14
    assert!((slope(&[(1.0, 12.0), (2.0, 19.0), (3.0, 31.0)]) - 143.0 / 14.0).abs() < 1e-12);
}

#[test]
fn flat_and_linear_estimates_of_the_same_cost_agree() {
    let flat: Vec<(u64, u64)> = (0..30).map(|i| (1000, 100_000 + (i % 7) * 100)).collect();
    let linear: Vec<(u64, u64)> = (1..=30).map(|i| (i * 100, i * 100 * 100 + (i % 7) * 50)).collect();
    let f = time_per_iteration(&flat, Sampling::Flat, 2000).unwrap();
    let l = time_per_iteration(&linear, Sampling::Linear, 2000).unwrap();
    assert!((f.value - 100.3).abs() < 0.5 && (l.value - 100.0).abs() < 0.5, "{f:?} {l:?}");
    let [lo, hi] = l.ci95.unwrap();
    assert!(lo <= l.value && l.value <= hi && hi - lo < 1.0, "{lo} {hi}");
}

#[test]
fn t_interval_matches_the_textbook() {
    let values = [8.0, 9.0, 10.0, 11.0, 12.0];
    let sd = crate::stats::summarize(&values).unwrap().stddev;
    let [lo, hi] = mean_ci95(&values).unwrap();
    assert!((hi - lo - 2.0 * 2.776 * sd / 5f64.sqrt()).abs() < 1e-9);
    assert!(mean_ci95(&[1.0]).is_none());
    assert!((t_975(40) - 2.021).abs() < 0.002, "{}", t_975(40));
    assert!((t_975(1000) - 1.962).abs() < 0.002);
}

#[test]
fn fast_median_ci_uses_order_statistics() {
    let values: Vec<f64> = (1..=100).map(f64::from).collect();
    assert_eq!(median_ci95_fast(&values), Some([41.0, 61.0]));
    assert_eq!(median_ci95_fast(&[3.0, 1.0, 2.0]), Some([1.0, 3.0]));
}

fn samples() -> impl Strategy<Value = Vec<(u64, u64)>> {
    prop::collection::vec((1u64..10_000, 1u64..100_000_000), 2..60)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_ci_contains_the_estimate(samples in samples(), linear in any::<bool>()) {
        let sampling = if linear { Sampling::Linear } else { Sampling::Flat };
        let e = time_per_iteration(&samples, sampling, 200).unwrap();
        let [lo, hi] = e.ci95.unwrap();
        prop_assert!(lo <= e.value && e.value <= hi, "{} not in [{}, {}]", e.value, lo, hi);
    }

    #[test]
    fn scaling_the_times_scales_estimate_and_ci(samples in samples(), linear in any::<bool>(), k in 2u64..50) {
        let sampling = if linear { Sampling::Linear } else { Sampling::Flat };
        let scaled: Vec<(u64, u64)> = samples.iter().map(|&(n, ns)| (n, ns * k)).collect();
        let (a, b) = (time_per_iteration(&samples, sampling, 200).unwrap(), time_per_iteration(&scaled, sampling, 200).unwrap());
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0);
        prop_assert!(close(b.value, a.value * k as f64));
        let ([alo, ahi], [blo, bhi]) = (a.ci95.unwrap(), b.ci95.unwrap());
        prop_assert!(close(blo, alo * k as f64) && close(bhi, ahi * k as f64));
    }

    #[test]
    fn summary_orders_and_counts(values in prop::collection::vec(-1e9f64..1e9, 1..80)) {
        let s = crate::stats::summarize(&values).unwrap();
        prop_assert!(s.min <= s.median && s.median <= s.max && s.min <= s.mean && s.mean <= s.max);
        prop_assert!(s.mad >= 0.0 && s.stddev >= 0.0);
        let o = s.outliers;
        prop_assert!((o.low_severe + o.low_mild + o.high_mild + o.high_severe) as usize <= s.n);
    }
}

#[test]
fn a_metric_interval_never_reaches_below_zero() {
    // regression: `--quick` with 2 repetitions gave `records_per_s ci95 [-3676740, 8308155]`.
    let rates = [300_000.0, 4_300_000.0];
    assert!(mean_ci95(&rates).unwrap()[0] < 0.0, "the plain t interval does");
    let [lo, hi] = metric_mean_ci95(&rates).unwrap();
    assert_eq!(lo, 0.0);
    assert_eq!(hi, mean_ci95(&rates).unwrap()[1]);
    assert!(metric_mean_ci95(&[-1.0, 5.0]).unwrap()[0] < 0.0, "a quantity that can be negative keeps its bound");
}
