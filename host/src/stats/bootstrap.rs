//! Percentile bootstrap confidence intervals, seeded so the same samples always give the same interval.
//! Pure: no I/O, no clock, no global RNG.

/// The seed every CI in a record uses, so re-analysing stored samples reproduces the record.
pub const SEED: u64 = 0x5EED_BE4C_4057;

/// A small, fast, reproducible generator (SplitMix64): statistical quality is ample for resampling indices.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (Lemire's multiply-shift; the bias is below 2^-32 for any n we resample).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// The 95% percentile-bootstrap interval of `statistic` over `items`, from `resamples` resamples drawn with
/// `seed`. `None` for fewer than two items or no resamples.
pub fn ci95<T: Copy>(items: &[T], resamples: usize, seed: u64, statistic: impl Fn(&[T]) -> f64) -> Option<[f64; 2]> {
    if items.len() < 2 || resamples == 0 {
        return None;
    }
    let mut rng = Rng::new(seed);
    let mut resample = Vec::with_capacity(items.len());
    let mut estimates: Vec<f64> = (0..resamples)
        .map(|_| {
            resample.clear();
            resample.extend((0..items.len()).map(|_| items[rng.below(items.len())]));
            statistic(&resample)
        })
        .filter(|e| e.is_finite())
        .collect();
    if estimates.is_empty() {
        return None;
    }
    estimates.sort_by(f64::total_cmp);
    Some([quantile_of_sorted(&estimates, 0.025), quantile_of_sorted(&estimates, 0.975)])
}

/// Linear interpolation between the order statistics around `q` (the "type 7" quantile of R and NumPy).
pub fn quantile_of_sorted(sorted: &[f64], q: f64) -> f64 {
    let position = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (low, high) = (position.floor() as usize, position.ceil() as usize);
    sorted[low] + (sorted[high] - sorted[low]) * (position - low as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_interval_other_seed_close_interval() {
        let values: Vec<f64> = (0..50).map(|i| 100.0 + ((i * 37) % 11) as f64).collect();
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        let a = ci95(&values, 2000, SEED, mean).unwrap();
        assert_eq!(a, ci95(&values, 2000, SEED, mean).unwrap());
        let b = ci95(&values, 2000, SEED + 1, mean).unwrap();
        assert!((a[0] - b[0]).abs() < 0.3 && (a[1] - b[1]).abs() < 0.3, "{a:?} vs {b:?}");
    }

    #[test]
    fn interval_of_a_mean_is_near_the_normal_theory_interval() {
        // 200 values with sd ~3.2: the normal-theory half-width is 1.96 * sd / sqrt(200) ~ 0.44.
        let values: Vec<f64> = (0..200).map(|i| ((i * 7919) % 11) as f64).collect();
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        let [lo, hi] = ci95(&values, 10_000, SEED, mean).unwrap();
        let half = (hi - lo) / 2.0;
        assert!((0.38..0.50).contains(&half), "half-width {half}");
    }

    #[test]
    fn quantiles_interpolate() {
        let sorted = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile_of_sorted(&sorted, 0.5), 3.0);
        assert_eq!(quantile_of_sorted(&sorted, 0.25), 2.0);
        assert_eq!(quantile_of_sorted(&sorted, 0.1), 1.4);
        assert!(ci95(&[1.0], 100, SEED, |s| s[0]).is_none());
    }

    #[test]
    fn indices_cover_the_range_evenly() {
        let mut rng = Rng::new(1);
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            counts[rng.below(7)] += 1;
        }
        assert!(counts.iter().all(|&c| (9_500..10_500).contains(&c)), "{counts:?}");
    }
}
