//! The decision rule of every verdict: where the interval of a ratio new / old lies against the noise threshold,
//! in the metric's direction of goodness; and the threshold itself, per series and metric. Pure.

use benchhost_record::{Decision, Record};

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
