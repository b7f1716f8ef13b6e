//! Pure statistics over samples: no I/O, no clocks. `&[f64]` in, [`Summary`] out.
//!
//! First cut (the measurement-engine issue adds bootstrap CIs and outliers):
//! - iterations style: the estimate is the **median** time per iteration, with a distribution-free CI95 from
//!   order statistics (binomial ranks), so it always contains the median and assumes no normality;
//! - run style: the estimate is the **mean** across repetitions, with a Student-t CI95.

use serde::{Deserialize, Serialize};

/// Descriptive statistics of one metric over its samples or repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for one value.
    pub stddev: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Summary {
    /// Summarizes `values`; `None` when there are none or one is not finite.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let sorted = sorted(values);
        let n = sorted.len();
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let var = if n > 1 { sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
        Some(Summary {
            n,
            median: median_of_sorted(&sorted),
            mean,
            stddev: var.sqrt(),
            min: sorted[0],
            max: sorted[n - 1],
        })
    }
}

fn sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 }
}

/// A distribution-free 95% confidence interval for the median: the order statistics at ranks
/// `n/2 ∓ 1.96·√n/2`. Below six values no such interval reaches 95%, so the full range is returned.
pub fn median_ci95(values: &[f64]) -> Option<[f64; 2]> {
    if values.is_empty() {
        return None;
    }
    let sorted = sorted(values);
    let n = sorted.len();
    if n < 6 {
        return Some([sorted[0], sorted[n - 1]]);
    }
    let half_width = 1.96 * (n as f64).sqrt() / 2.0;
    let lo = ((n as f64 / 2.0 - half_width).floor() as usize).min(n - 1);
    let hi = ((n as f64 / 2.0 + half_width).ceil() as usize).min(n - 1);
    Some([sorted[lo], sorted[hi]])
}

/// Student-t 95% confidence interval of the mean; `None` below two values.
pub fn mean_ci95(values: &[f64]) -> Option<[f64; 2]> {
    let s = Summary::of(values)?;
    if s.n < 2 {
        return None;
    }
    let half = t_975(s.n - 1) * s.stddev / (s.n as f64).sqrt();
    Some([s.mean - half, s.mean + half])
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom (two-sided 95%).
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        // Cornish-Fisher expansion around the normal quantile; within 0.001 of the exact value above 30.
        _ => {
            let z: f64 = 1.959964;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d) + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_values() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!((s.n, s.median, s.mean, s.min, s.max), (8, 4.5, 5.0, 2.0, 9.0));
        assert!((s.stddev - 2.138_089_935).abs() < 1e-6, "{}", s.stddev);
        assert_eq!(Summary::of(&[3.0]).unwrap().stddev, 0.0);
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn median_ci_uses_order_statistics_and_contains_the_median() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        // n = 100: ranks 50 ∓ 9.8 → indices 40 and 60 (values 41 and 61).
        assert_eq!(median_ci95(&values), Some([41.0, 61.0]));
        assert_eq!(median_ci95(&[3.0, 1.0, 2.0]), Some([1.0, 3.0]));
        for n in 1..60 {
            let values: Vec<f64> = (0..n).map(|i| ((i * 7919) % 101) as f64).collect();
            let [lo, hi] = median_ci95(&values).unwrap();
            let m = Summary::of(&values).unwrap().median;
            assert!(lo <= m && m <= hi, "n={n}: {lo} <= {m} <= {hi}");
        }
    }

    #[test]
    fn t_interval_matches_the_textbook() {
        // mean 10, sd 2, n 5: half-width = 2.776 * 2 / sqrt(5) = 2.4830
        let values = [8.0, 9.0, 10.0, 11.0, 12.0];
        let sd = Summary::of(&values).unwrap().stddev;
        let [lo, hi] = mean_ci95(&values).unwrap();
        assert!((hi - lo - 2.0 * 2.776 * sd / 5f64.sqrt()).abs() < 1e-9);
        assert!(mean_ci95(&[1.0]).is_none());
        assert!((t_975(40) - 2.021).abs() < 0.002, "{}", t_975(40));
        assert!((t_975(1000) - 1.962).abs() < 0.002);
    }

    #[test]
    fn scaling_the_samples_scales_the_estimates() {
        let values = [5.0, 3.0, 8.0, 1.0, 9.0, 4.0, 7.0];
        let scaled: Vec<f64> = values.iter().map(|v| v * 3.0).collect();
        let (a, b) = (Summary::of(&values).unwrap(), Summary::of(&scaled).unwrap());
        assert!((b.median - 3.0 * a.median).abs() < 1e-9 && (b.stddev - 3.0 * a.stddev).abs() < 1e-9);
        let (ca, cb) = (median_ci95(&values).unwrap(), median_ci95(&scaled).unwrap());
        assert_eq!([ca[0] * 3.0, ca[1] * 3.0], cb);
    }
}
