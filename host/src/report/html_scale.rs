//! The scales of the HTML report's charts: a value's place along an axis, linear from zero or logarithmic
//! where the values span more than a decade (sizes of 100, 1k and 10k rows; rates of 70k to 400M rows/s), and
//! the ticks each one is labelled at.

/// Values span "decades" when the largest is at least this many times the smallest.
pub const DECADE: f64 = 10.0;

/// Where values fall along an axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// From 0 to `top`.
    Linear { top: f64 },
    /// From `lo` to `hi`, both positive, by their logarithm.
    Log { lo: f64, hi: f64 },
}

impl Scale {
    /// The scale for `values` (their CI95 bounds included): logarithmic when all are positive and span more
    /// than a decade and `log` allows it, else linear from 0 with a tenth of headroom.
    pub fn fit(values: impl IntoIterator<Item = f64>, log: bool) -> Scale {
        let (lo, hi) = values
            .into_iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
        match log && lo > 0.0 && hi / lo > DECADE {
            true => Scale::Log { lo: decade_below(lo), hi: decade_above(hi) },
            false => Scale::Linear { top: hi.max(f64::MIN_POSITIVE) * 1.1 },
        }
    }

    /// A logarithmic scale.
    pub fn is_log(&self) -> bool {
        matches!(self, Scale::Log { .. })
    }

    /// `v`'s place from 0 (the axis' start) to 1 (its end), clamped.
    pub fn at(&self, v: f64) -> f64 {
        let place = match *self {
            Scale::Linear { top } => v / top,
            Scale::Log { lo, hi } => (v.max(lo).ln() - lo.ln()) / (hi.ln() - lo.ln()),
        };
        place.clamp(0.0, 1.0)
    }

    /// Where to label the axis: five even steps of a linear one; each decade of a logarithmic one, and its 2
    /// and 5 too when it spans at most two decades.
    pub fn ticks(&self) -> Vec<f64> {
        match *self {
            Scale::Linear { top } => (0..=4).map(|i| top * i as f64 / 4.0).collect(),
            Scale::Log { lo, hi } => {
                let steps: &[f64] = if hi / lo <= 100.0 { &[1.0, 2.0, 5.0] } else { &[1.0] };
                let mut ticks = Vec::new();
                let mut decade = lo;
                while decade <= hi * 1.000_001 {
                    ticks.extend(steps.iter().map(|s| s * decade).filter(|t| *t <= hi * 1.000_001));
                    decade *= 10.0;
                }
                ticks
            }
        }
    }
}

/// The power of ten at or below `v`.
fn decade_below(v: f64) -> f64 {
    10f64.powf(v.log10().floor())
}

/// The power of ten at or above `v`.
fn decade_above(v: f64) -> f64 {
    10f64.powf(v.log10().ceil())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_spanning_decades_get_a_log_scale_from_decade_to_decade() {
        let rows = Scale::fit([100.0, 1000.0, 10_000.0], true);
        assert_eq!(rows, Scale::Log { lo: 100.0, hi: 10_000.0 });
        assert_eq!(rows.ticks(), [100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10_000.0]);
        assert!((rows.at(1000.0) - 0.5).abs() < 1e-12, "a decade of two is half the axis");
        assert_eq!(Scale::fit([70_000.0, 4e8], true).ticks().len(), 6, "four decades and more: decades only");
        assert_eq!(Scale::fit([6.0, 24.0], true), Scale::Linear { top: 24.0 * 1.1 }, "within a decade: linear");
        assert_eq!(Scale::fit([0.0, 1000.0], true), Scale::Linear { top: 1100.0 }, "a zero: linear");
        assert_eq!(Scale::fit([1.0, 1000.0], false), Scale::Linear { top: 1100.0 }, "bars start at 0");
        assert_eq!(Scale::Linear { top: 8.0 }.ticks(), [0.0, 2.0, 4.0, 6.0, 8.0]);
    }
}
