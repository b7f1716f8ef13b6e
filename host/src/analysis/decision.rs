//! The decision rule of every verdict: where the interval of a ratio new / old lies against the noise threshold,
//! in the metric's direction of goodness; and the threshold itself, per series and metric. Pure.

use benchhost_record::{Decision, Record, Verdict};

/// The noise threshold of a series' metric: a fixed one, or one calibrated for it on this host.
pub type Threshold<'a> = &'a dyn Fn(&Record, &str) -> f64;

/// The decision for a ratio CI; "worse" is up for lower-is-better metrics and down for higher-is-better.
pub fn decide([lo, hi]: [f64; 2], higher_is_better: bool, threshold: f64) -> Decision {
    let (worse_lo, worse_hi) = if higher_is_better { (1.0 / hi, 1.0 / lo) } else { (lo, hi) };
    let (up, down) = (1.0 + threshold, 1.0 / (1.0 + threshold));
    if worse_lo > up {
        Decision::Regressed
    } else if worse_hi < down {
        Decision::Improved
    } else if worse_lo >= down && worse_hi <= up {
        Decision::NoChange
    } else {
        Decision::Inconclusive
    }
}

/// One-sided 95% quantile of the normal distribution: the power term of [`detectable`].
const Z_POWER: f64 = 1.644_853_626_951_472_2;

/// The smallest change `ci95` (an interval of a ratio, from its own spread) would call at `threshold` with 95%
/// power, as a fraction. The interval's half-width in logs is z(0.975) standard errors; a true change is called
/// when its whole interval clears the threshold, which 95% of the time takes its log to exceed ln(1 + threshold)
/// by that half-width plus z(0.95) standard errors. An exact comparison (a point interval) detects the threshold.
pub fn detectable([lo, hi]: [f64; 2], threshold: f64) -> Option<f64> {
    if !(lo > 0.0 && hi >= lo && hi.is_finite()) {
        return None;
    }
    let half = (hi / lo).ln() / 2.0;
    let se = half / crate::stats::Z_95;
    Some((1.0 + threshold) * (half + Z_POWER * se).exp() - 1.0)
}

/// `verdict` with its [`detectable`] change, when it has an interval.
pub fn with_detectable(mut verdict: Verdict) -> Verdict {
    verdict.detectable = verdict.ci95.and_then(|ci| detectable(ci, verdict.threshold));
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_detectable_change_grows_with_the_interval_and_is_the_threshold_when_exact() {
        assert!((detectable([1.0, 1.0], 0.03).unwrap() - 0.03).abs() < 1e-12, "exact: the threshold itself");
        // ±1% at 95% (se 0.51% in logs): 3% + 1% + 0.84% = ~4.97% in ratio terms.
        let d = detectable([0.99, 1.01], 0.03).unwrap();
        assert!((d - 0.0497).abs() < 0.001, "{d}");
        assert!(detectable([0.9, 1.1], 0.03).unwrap() > d, "a wider interval detects less");
        assert_eq!(detectable([0.0, 1.0], 0.03), None);
    }
}
