//! The scales of the HTML report's charts: a value's place along an axis, linear from zero or logarithmic
//! where the values span more than a decade (sizes of 100, 1k and 10k rows; rates of 70k to 400M rows/s), and
//! the ticks each one is labelled at: round numbers, 1, 2 or 5 times a power of ten and their multiples, as d3's
//! `ticks` and matplotlib's `MaxNLocator` place them (a reader wants 0, 20, 40, 60, 80 files, not 16.78).

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
    /// than a decade and `log` allows it, else linear from 0 with a tenth of headroom, up to its next tick.
    pub fn fit(values: impl IntoIterator<Item = f64>, log: bool) -> Scale {
        let (lo, hi) = values
            .into_iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
        match log && lo > 0.0 && hi / lo > DECADE {
            true => Scale::Log { lo: decade_below(lo), hi: decade_above(hi) },
            false => {
                let top = hi.max(f64::MIN_POSITIVE) * 1.1;
                let step = round_step(top);
                Scale::Linear { top: (top / step * (1.0 - 1e-12)).ceil() * step }
            }
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

    /// Where to label the axis: 0 and each multiple of a round step up to the top of a linear one (at most six
    /// steps); each decade of a logarithmic one, and its 2 and 5 too when it spans at most two decades.
    pub fn ticks(&self) -> Vec<f64> {
        match *self {
            Scale::Linear { top } => {
                let step = round_step(top);
                (0..).map(|i| i as f64 * step).take_while(|t| *t <= top * (1.0 + 1e-9)).collect()
            }
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

/// The smallest of 1, 2 and 5 times a power of ten that cuts `0..top` into at most six steps.
fn round_step(top: f64) -> f64 {
    let rough = top / 6.0;
    let decade = decade_below(rough);
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * decade).find(|s| *s >= rough * (1.0 - 1e-9)).unwrap_or(10.0 * decade)
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
        assert_eq!(Scale::fit([6.0, 24.0], true), Scale::Linear { top: 30.0 }, "within a decade: linear");
        assert_eq!(Scale::fit([0.0, 1000.0], true), Scale::Linear { top: 1200.0 }, "a zero: linear");
        assert_eq!(Scale::fit([1.0, 1000.0], false), Scale::Linear { top: 1200.0 }, "bars start at 0");
        assert_eq!(Scale::Linear { top: 8.0 }.ticks(), [0.0, 2.0, 4.0, 6.0, 8.0]);
    }

    #[test]
    fn a_linear_axis_ends_on_a_round_tick_and_is_labelled_at_round_steps() {
        // regression: five even steps of the top read "0, 16.78, 33.55, 50.33, 67.1 files".
        let files = Scale::fit([61.0], false);
        assert_eq!(files, Scale::Linear { top: 80.0 });
        assert_eq!(files.ticks(), [0.0, 20.0, 40.0, 60.0, 80.0]);
        let rows_per_s = Scale::fit([1_585_873.0], false).ticks();
        assert_eq!(rows_per_s, [0.0, 500_000.0, 1_000_000.0, 1_500_000.0, 2_000_000.0]);
        let ms = Scale::fit([2.2e6], false).ticks();
        assert_eq!(ms, [0.0, 500_000.0, 1e6, 1.5e6, 2e6, 2.5e6], "ns: 0, 500 µs, 1 ms, ... 2.5 ms");
        for top in [0.013, 0.7, 3.3, 47.0, 999.0, 1e9 / 7.0] {
            let ticks = Scale::fit([top], false).ticks();
            let step = ticks[1];
            let mantissa = step / 10f64.powf(step.log10().floor());
            assert!([1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-9), "{top}: step {step}");
            assert!((2..=7).contains(&ticks.len()) && *ticks.last().unwrap() >= top * 1.1 - 1e-9, "{top}: {ticks:?}");
        }
    }
}
