//! Change points of a nightly history: the nights where a series' level stepped. Nightly records are unpaired
//! (each night runs on another runner), so no paired verdict applies; what is left is the history itself.
//!
//! The method, a two-window scan read left to right:
//! - each candidate night k is judged by the nights just before it (up to [`WINDOW`], not before the last
//!   change point) against the nights from it on (up to [`WINDOW`]), in log values: a weighted mean of each
//!   side, each night weighted by the inverse of the between-night variance plus its own record's (from its
//!   CI95: a noisy night weighs less), values clipped at 3 sigma of their side's median (an outlier night
//!   moves a mean by a bounded amount), nights run in doubtful conditions (steal, a debug build) left out;
//!   sigma is the two sides' pooled MAD, so the statistic has no unit and one threshold fits 1% and 5% noise;
//! - the first night whose |z| reaches [`Z`] opens an excursion; its strongest z within half a window is the
//!   detection, and the change point is placed where splitting the nights around it costs the least absolute
//!   deviation from each side's median (the place a windowed z marks is blurred by the window; a median cost
//!   is not pulled by outliers);
//! - the scan goes on from the change point, whose nights no later window reaches back over;
//! - a night an acknowledgement (`benchhost accept`) holds from is a boundary as a change point is, forced: the
//!   mean restarts there, and the step there is reported as accepted ([`accepted_steps`]), not as a change.
//!
//! Read left to right and deciding from at most 1.5 windows ahead, a change point never moves once
//! [`SETTLED_AFTER`] nights follow it: every decision that placed it read only nights that were there. Nearer
//! the end it is `provisional` (it may move or vanish as nights arrive). Its ratio and CI95 are the medians of
//! the windows around it, and may still be refined while its next neighbour is provisional.
//!
//! Measured on the corpus of `benchmarks/trend` (see results/README.md): at 2% noise, steps of 3% and more
//! found at the right night +-2 in 45 of 46, 0.02 false change points per 1,000 step-free nights.

pub use crate::analysis::scan_windows::{Night, WINDOW};
use crate::analysis::scan_windows::{Windows, left_from, median_sorted, pooled_mad, right_to};

/// Nights on each side of a candidate, at least (fewer: no candidate there).
pub const MIN_SIDE: usize = 5;
/// |z| that opens an excursion. On the corpus's step-free series, 5 gave 0.02 false change points per 1,000
/// nights and 4.5 gave 0.2.
pub const Z: f64 = 5.0;
/// Nights after a change point from which it is final (see the module's documentation).
pub const SETTLED_AFTER: usize = 2 * WINDOW;

/// A change point of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// The first night after the change, 0-based in the series' order.
    pub index: usize,
    /// The scan's z at the detection (signed: positive when the value rose).
    pub z: f64,
    /// Two-sided p-value of that z (local: the scan looked at many nights).
    pub p: f64,
    /// Median after over median before, in the windows around the change point.
    pub ratio: f64,
    /// CI95 of the ratio.
    pub ci95: [f64; 2],
    /// False once [`SETTLED_AFTER`] nights follow it: it can no longer move.
    pub provisional: bool,
}

/// Why a series has no change points to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TooShort {
    /// Usable nights (not doubtful), and the least the method needs.
    Nights(usize, usize),
}

impl std::fmt::Display for TooShort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TooShort::Nights(have, need) => {
                let nights = if *have == 1 { "night" } else { "nights" };
                write!(f, "{have} usable {nights}, fewer than the {need} the method needs")
            }
        }
    }
}

/// The change points of `nights` (in run order), or why there can be none, with the nights `forced` (indices)
/// as boundaries: at each, the left window restarts, so no change point is found across it. They are not change
/// points themselves.
pub fn change_points_with(nights: &[Night], forced: &[usize]) -> Result<Vec<ChangePoint>, TooShort> {
    let usable = nights.iter().filter(|n| !n.doubtful).count();
    if usable < 2 * MIN_SIDE {
        return Err(TooShort::Nights(usable, 2 * MIN_SIDE));
    }
    let n = nights.len();
    let (mut found, mut start, mut k, mut windows) = (Vec::new(), 0, MIN_SIDE, Windows::default());
    while k + MIN_SIDE <= n {
        if let Some(&f) = forced.iter().filter(|&&f| start < f && f <= k).max() {
            (start, k) = (f, k.max(f + MIN_SIDE));
            continue;
        }
        if window_z(nights, start, k, &mut windows).abs() < Z {
            k += 1;
            continue;
        }
        let last = (k + WINDOW / 2).min(n - MIN_SIDE);
        let (peak, z) = (k..=last)
            .map(|j| (j, window_z(nights, start, j, &mut windows)))
            .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
            .expect("k <= last");
        let at = placed(nights, start.max(peak.saturating_sub(WINDOW)), (peak + WINDOW).min(n), peak);
        let provisional = k + WINDOW / 2 + WINDOW > n;
        found.push(ChangePoint { index: at, z, p: p_two_sided(z), ratio: 1.0, ci95: [1.0, 1.0], provisional });
        (start, k) = (at, at + MIN_SIDE);
    }
    let mut bounds: Vec<usize> = found.iter().map(|c| c.index).chain(forced.iter().copied()).collect();
    bounds.sort_unstable();
    for point in found.iter_mut() {
        (point.ratio, point.ci95) = step_at(nights, &bounds, point.index);
    }
    Ok(found)
}

/// The step at night `at`: the ratio of the medians on either side, each side reaching at most [`WINDOW`]
/// nights and not past the neighbouring `bounds` (sorted; `at` may be among them), and its CI95.
pub(crate) fn step_at(nights: &[Night], bounds: &[usize], at: usize) -> (f64, [f64; 2]) {
    let before = bounds.iter().rev().find(|&&b| b < at).copied().unwrap_or(0).max(at.saturating_sub(WINDOW));
    let after = bounds.iter().find(|&&b| b > at).copied().unwrap_or(nights.len()).min(at + WINDOW);
    median_ratio(&usable_logs(&nights[before..at]), &usable_logs(&nights[at..after]))
}

/// The scan's statistic at night `k`, the left side not reaching back before `start`; 0 when a side has
/// fewer than [`MIN_SIDE`] usable nights.
fn window_z(nights: &[Night], start: usize, k: usize, windows: &mut Windows) -> f64 {
    windows.move_to(nights, start, k);
    let Windows { left, right, own, .. } = windows;
    if left.len() < MIN_SIDE || right.len() < MIN_SIDE {
        return 0.0;
    }
    let (cl, cr) = (median_sorted(left), median_sorted(right));
    let sigma = (1.4826 * pooled_mad(left, cl, right, cr)).max(1e-9);
    // The residual spread holds each night's own noise too: what is left is the nights' spread between them.
    let between = (sigma * sigma - median_sorted(own)).max(0.1 * sigma * sigma);
    let side = |nights: &[Night], center: f64| {
        let (mut sum, mut weights) = (0.0, 0.0);
        for night in nights.iter().filter(|n| !n.doubtful) {
            let variance = between + night.log_se * night.log_se;
            let reach = 3.0 * variance.sqrt();
            sum += night.log_value.clamp(center - reach, center + reach) / variance;
            weights += 1.0 / variance;
        }
        (sum / weights, weights)
    };
    let (left, right) = (&nights[left_from(start, k)..k], &nights[k..right_to(nights, k)]);
    let ((ml, wl), (mr, wr)) = (side(left, cl), side(right, cr));
    (mr - ml) / (1.0 / wl + 1.0 / wr).sqrt()
}

/// Where in `nights[lo..hi]` a split near `peak` (within half a window) leaves the least absolute deviation
/// from each side's median.
fn placed(nights: &[Night], lo: usize, hi: usize, peak: usize) -> usize {
    let first = (lo + MIN_SIDE).max(peak.saturating_sub(WINDOW / 2));
    let last = hi.saturating_sub(MIN_SIDE).min(peak + WINDOW / 2);
    let cost = |logs: Vec<f64>| {
        let center = median(logs.iter().copied());
        logs.iter().map(|v| (v - center).abs()).sum::<f64>()
    };
    (first..=last)
        .map(|j| (j, cost(usable_logs(&nights[lo..j])) + cost(usable_logs(&nights[j..hi]))))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(peak, |(j, _)| j)
}

/// The ratio of the medians of `after` over `before` (log values) and its CI95, from the medians' standard
/// error (1.2533 sigma / sqrt(n) each, sigma from the pooled MAD).
fn median_ratio(before: &[f64], after: &[f64]) -> (f64, [f64; 2]) {
    if before.is_empty() || after.is_empty() {
        return (1.0, [0.0, f64::INFINITY]);
    }
    let (mb, ma) = (median(before.iter().copied()), median(after.iter().copied()));
    let residuals = before.iter().map(|v| (v - mb).abs()).chain(after.iter().map(|v| (v - ma).abs()));
    let sigma = 1.4826 * median(residuals);
    let se = 1.2533 * sigma * (1.0 / before.len() as f64 + 1.0 / after.len() as f64).sqrt();
    let d = ma - mb;
    (d.exp(), [(d - 1.96 * se).exp(), (d + 1.96 * se).exp()])
}

fn usable_logs(nights: &[Night]) -> Vec<f64> {
    nights.iter().filter(|n| !n.doubtful).map(|n| n.log_value).collect()
}

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
fn median(values: impl Iterator<Item = f64>) -> f64 {
    median_in(&mut Vec::new(), values)
}

/// [`median`], in `buffer` (cleared first), by selection rather than a sort.
fn median_in(buffer: &mut Vec<f64>, values: impl Iterator<Item = f64>) -> f64 {
    buffer.clear();
    buffer.extend(values);
    if buffer.is_empty() {
        return 0.0;
    }
    let mid = buffer.len() / 2;
    let (below, &mut upper, _) = buffer.select_nth_unstable_by(mid, f64::total_cmp);
    match below.iter().copied().reduce(f64::max) {
        Some(lower) if mid * 2 == buffer.len() => (lower + upper) / 2.0,
        _ => upper,
    }
}

/// P(|Z| >= |z|) for a standard normal Z: erfc(|z| / sqrt 2), by Numerical Recipes' Chebyshev fit (relative
/// error below 1.2e-7 everywhere, so tiny p-values stay meaningful).
pub fn p_two_sided(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x);
    let poly = -x * x - 1.26551223
        + t * (1.00002368
            + t * (0.37409196
                + t * (0.09678418
                    + t * (-0.18628806
                        + t * (0.27886807
                            + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    (t * poly.exp()).min(1.0)
}

#[cfg(test)]
#[path = "change_points_tests.rs"]
mod tests;
