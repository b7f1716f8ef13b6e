//! Whether a commit is bad: its change against GOOD is closer to BAD's than to none. Pure.
//!
//! Closer is measured in logs, so the line between good and bad is the geometric middle of 1 and BAD's ratio
//! (x1.2 for a BAD at x1.44). The step's own interval decides: wholly beyond the middle is bad, wholly before
//! it good; an interval across it is `Unsure`, and the step is measured again with more processes. An exact
//! count (a point interval) always decides.

use crate::bisect::search::Judged;

/// The call on one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// Decided, with the verdict's confidence.
    Sure(Judged),
    /// The interval spans the middle.
    Unsure,
}

/// The middle between no change and BAD's `bad_ratio` (new / old), as a ratio of the same metric.
pub fn middle(bad_ratio: f64) -> f64 {
    bad_ratio.sqrt()
}

/// Calls a step whose ratio against GOOD has the interval `ci95`, when BAD's ratio was `bad_ratio`.
pub fn call(ci95: [f64; 2], bad_ratio: f64) -> Call {
    let middle = middle(bad_ratio);
    // BAD moved the metric up (a slower time) or down (a lower rate): bad lies on BAD's side of the middle.
    let beyond = |r: f64| if bad_ratio >= 1.0 { r > middle } else { r < middle };
    match (beyond(ci95[0]), beyond(ci95[1])) {
        (true, true) => Call::Sure(Judged::Bad),
        (false, false) if ci95[0] != middle && ci95[1] != middle => Call::Sure(Judged::Good),
        _ => Call::Unsure,
    }
}

/// The call of the estimate alone, for a step still unsure after its extra processes.
pub fn by_estimate(ratio: f64, bad_ratio: f64) -> Judged {
    match call([ratio, ratio], bad_ratio) {
        Call::Sure(judged) => judged,
        Call::Unsure => Judged::Good,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slower_bad_splits_at_the_geometric_middle() {
        assert!((middle(1.44) - 1.2).abs() < 1e-12);
        assert_eq!(call([1.25, 1.5], 1.44), Call::Sure(Judged::Bad));
        assert_eq!(call([0.98, 1.03], 1.44), Call::Sure(Judged::Good));
        assert_eq!(call([1.1, 1.3], 1.44), Call::Unsure);
    }

    #[test]
    fn a_lower_rate_is_bad_below_the_middle() {
        // elements_per_s fell to 0.81: the middle is 0.9.
        assert_eq!(call([0.8, 0.85], 0.81), Call::Sure(Judged::Bad));
        assert_eq!(call([0.97, 1.01], 0.81), Call::Sure(Judged::Good));
        assert_eq!(call([0.85, 0.95], 0.81), Call::Unsure);
    }

    #[test]
    fn exact_counts_always_decide() {
        assert_eq!(call([1.3, 1.3], 1.5), Call::Sure(Judged::Bad));
        assert_eq!(call([1.0, 1.0], 1.5), Call::Sure(Judged::Good));
        assert_eq!(by_estimate(1.19, 1.44), Judged::Good);
        assert_eq!(by_estimate(1.21, 1.44), Judged::Bad);
    }
}
