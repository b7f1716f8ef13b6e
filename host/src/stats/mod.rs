//! Pure statistics over samples: no I/O, no clocks. `&[f64]` (or `(iterations, ns)` samples) in, numbers
//! out: estimates, confidence intervals, summaries.
//!
//! - Iterations style: the time per iteration is the **median** of the samples' per-iteration times (flat
//!   sampling) or the **slope** of ns over iterations through the origin (linear sampling, as Criterion), with
//!   a seeded percentile-bootstrap CI95.
//! - Run style: the **mean** over repetitions with a Student-t CI95.
//! - Every metric also gets median, mean, stddev, MAD and Tukey outlier counts, reported and never dropped.

pub(crate) mod bootstrap;

pub use benchhost_record::{Outliers, Sampling, Summary};

use bootstrap::quantile_of_sorted;

/// The standard normal's 97.5% quantile: a 95% two-sided interval is ±`Z_95` standard errors.
pub const Z_95: f64 = 1.96;

/// Summarizes `values`; `None` when there are none or one is not finite.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let sorted = sorted(values);
    let n = sorted.len();
    let mean = sorted.iter().sum::<f64>() / n as f64;
    let var = if n > 1 { sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
    let median = median_of_sorted(&sorted);
    let deviations = sorted_by_value(sorted.iter().map(|v| (v - median).abs()).collect());
    Some(Summary {
        n,
        median,
        mean,
        stddev: var.sqrt(),
        mad: 1.4826 * median_of_sorted(&deviations),
        min: sorted[0],
        max: sorted[n - 1],
        outliers: tukey(&sorted),
    })
}

fn sorted(values: &[f64]) -> Vec<f64> {
    sorted_by_value(values.to_vec())
}

fn sorted_by_value(mut values: Vec<f64>) -> Vec<f64> {
    values.sort_by(f64::total_cmp);
    values
}

fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 }
}

/// The median of `values` (any order); NaN when empty.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() { f64::NAN } else { median_of_sorted(&sorted(values)) }
}

fn tukey(sorted: &[f64]) -> Outliers {
    let (q1, q3) = (quantile_of_sorted(sorted, 0.25), quantile_of_sorted(sorted, 0.75));
    let iqr = q3 - q1;
    let mut o = Outliers::default();
    for &v in sorted {
        match v {
            v if v < q1 - 3.0 * iqr => o.low_severe += 1,
            v if v < q1 - 1.5 * iqr => o.low_mild += 1,
            v if v > q3 + 3.0 * iqr => o.high_severe += 1,
            v if v > q3 + 1.5 * iqr => o.high_mild += 1,
            _ => {}
        }
    }
    o
}

/// The least-squares slope of `y` over `x` through the origin: Σxy / Σx².
pub fn slope(points: &[(f64, f64)]) -> f64 {
    let (xy, xx) = points.iter().fold((0.0, 0.0), |(xy, xx), (x, y)| (xy + x * y, xx + x * x));
    xy / xx
}

/// An estimate with its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The point estimate.
    pub value: f64,
    /// CI95, always containing `value`; `None` below two samples.
    pub ci95: Option<[f64; 2]>,
}

/// Nanoseconds per iteration from `(iterations, ns)` samples: median (flat) or slope (linear), with a
/// bootstrap CI95 from `resamples` seeded resamples.
pub fn time_per_iteration(samples: &[(u64, u64)], sampling: Sampling, resamples: usize) -> Option<Estimate> {
    if samples.is_empty() {
        return None;
    }
    let (value, ci95) = match sampling {
        Sampling::Flat => {
            let times: Vec<f64> = samples.iter().map(|&(n, ns)| ns as f64 / n.max(1) as f64).collect();
            (median(&times), bootstrap::ci95(&times, resamples, bootstrap::SEED, median))
        }
        Sampling::Linear => {
            let points: Vec<(f64, f64)> = samples.iter().map(|&(n, ns)| (n as f64, ns as f64)).collect();
            (slope(&points), bootstrap::ci95(&points, resamples, bootstrap::SEED, slope))
        }
    };
    // A percentile interval can miss its own estimate for tiny or lumpy samples; a record's CI never does.
    let ci95 = ci95.map(|[lo, hi]| [lo.min(value), hi.max(value)]);
    value.is_finite().then_some(Estimate { value, ci95 })
}

/// Student-t 95% confidence interval of the mean; `None` below two values.
pub fn mean_ci95(values: &[f64]) -> Option<[f64; 2]> {
    let s = crate::stats::summarize(values)?;
    if s.n < 2 {
        return None;
    }
    let half = t_975(s.n - 1) * s.stddev / (s.n as f64).sqrt();
    Some([s.mean - half, s.mean + half])
}

/// [`mean_ci95`] of a quantity that cannot be negative (every metric unit: times, rates, sizes, counts):
/// a Student-t interval over two noisy repetitions can reach below zero, which no rate can; it is cut at 0.
pub fn metric_mean_ci95(values: &[f64]) -> Option<[f64; 2]> {
    let [lo, hi] = mean_ci95(values)?;
    let nonnegative = values.iter().all(|v| *v >= 0.0);
    Some([if nonnegative { lo.max(0.0) } else { lo }, hi])
}

/// A distribution-free 95% CI of the median from order statistics (ranks n/2 ∓ 1.96·√n/2); cheap enough to
/// evaluate after every sample when sampling to a target precision. The full range below six values.
pub fn median_ci95_fast(values: &[f64]) -> Option<[f64; 2]> {
    if values.is_empty() {
        return None;
    }
    let sorted = sorted(values);
    let n = sorted.len();
    if n < 6 {
        return Some([sorted[0], sorted[n - 1]]);
    }
    let half_width = Z_95 * (n as f64).sqrt() / 2.0;
    let lo = ((n as f64 / 2.0 - half_width).floor() as usize).min(n - 1);
    let hi = ((n as f64 / 2.0 + half_width).ceil() as usize).min(n - 1);
    Some([sorted[lo], sorted[hi]])
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom (two-sided 95%).
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    t_quantile(df, &TABLE, 1.959964)
}

/// The 95% quantile of Student's t with `df` degrees of freedom (two-sided 90%, or one-sided 95%: the
/// interval of two one-sided tests at 5%).
pub fn t_95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753, 1.746,
        1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697,
    ];
    t_quantile(df, &TABLE, 1.644854)
}

/// A quantile of Student's t: from `table` up to 30 degrees of freedom, above by the Cornish-Fisher expansion
/// around the normal quantile `z` (within 0.001 of the exact value there).
fn t_quantile(df: usize, table: &[f64; 30], z: f64) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => table[df - 1],
        _ => {
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d) + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
