//! The two sides of the change-point scan at one night (see `change_points`), kept sorted as the scan slides
//! from night to night, and the medians read from them.

/// Nights on each side of a candidate, at most.
pub const WINDOW: usize = 30;

/// One night of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Night {
    /// ln of the night's value.
    pub log_value: f64,
    /// Standard error of that, from the record's own CI95 (0 when it has none).
    pub log_se: f64,
    /// Ran in conditions that make its number doubtful: left out of every statistic.
    pub doubtful: bool,
}

/// The usable nights of the scan's two sides at one night, each kept sorted as the scan slides from night to
/// night (a night in and a night out per side) rather than selected afresh: a history of 1M records holds ~5M
/// values, each the candidate of one window, and four selections per window were most of `trend`'s time.
#[derive(Debug, Default)]
pub(crate) struct Windows {
    /// `(start, k)` the sides are of.
    at: Option<(usize, usize)>,
    /// ln values of the left side, `nights[max(start, k - WINDOW)..k]`.
    pub left: Vec<f64>,
    /// ln values of the right side, `nights[k..k + WINDOW]`.
    pub right: Vec<f64>,
    /// Squared standard errors of both sides.
    pub own: Vec<f64>,
}

impl Windows {
    /// The sides at night `k`, the left not reaching back before `start`.
    pub fn move_to(&mut self, nights: &[Night], start: usize, k: usize) {
        match self.at {
            Some(at) if at == (start, k) => {}
            Some((from, before)) if from == start && before + 1 == k => self.slide(nights, start, before),
            _ => self.fill(nights, start, k),
        }
        self.at = Some((start, k));
    }

    fn fill(&mut self, nights: &[Night], start: usize, k: usize) {
        let usable = |range: &[Night]| range.iter().filter(|n| !n.doubtful).copied().collect::<Vec<_>>();
        let (left, right) = (usable(&nights[left_from(start, k)..k]), usable(&nights[k..right_to(nights, k)]));
        self.left = sorted(left.iter().map(|n| n.log_value));
        self.right = sorted(right.iter().map(|n| n.log_value));
        self.own = sorted(left.iter().chain(&right).map(|n| n.log_se * n.log_se));
    }

    /// From night `k` to `k + 1`: night k moves from the right side to the left, the left may lose its oldest
    /// night and the right gains one.
    fn slide(&mut self, nights: &[Night], start: usize, k: usize) {
        let moved = nights[k];
        if !moved.doubtful {
            take(&mut self.right, moved.log_value);
            put(&mut self.left, moved.log_value);
        }
        if left_from(start, k + 1) > left_from(start, k) {
            let gone = nights[left_from(start, k)];
            if !gone.doubtful {
                take(&mut self.left, gone.log_value);
                take(&mut self.own, gone.log_se * gone.log_se);
            }
        }
        if right_to(nights, k + 1) > right_to(nights, k) {
            let new = nights[right_to(nights, k)];
            if !new.doubtful {
                put(&mut self.right, new.log_value);
                put(&mut self.own, new.log_se * new.log_se);
            }
        }
    }
}

/// First night of the left side at `k`.
pub(crate) fn left_from(start: usize, k: usize) -> usize {
    start.max(k.saturating_sub(WINDOW))
}

/// End of the right side at `k`.
pub(crate) fn right_to(nights: &[Night], k: usize) -> usize {
    (k + WINDOW).min(nights.len())
}

fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut values: Vec<f64> = values.collect();
    values.sort_unstable_by(f64::total_cmp);
    values
}

fn put(sorted: &mut Vec<f64>, value: f64) {
    let at = sorted.partition_point(|v| v.total_cmp(&value).is_lt());
    sorted.insert(at, value);
}

fn take(sorted: &mut Vec<f64>, value: f64) {
    let at = sorted.partition_point(|v| v.total_cmp(&value).is_lt());
    debug_assert!(sorted.get(at).is_some_and(|v| v.total_cmp(&value).is_eq()), "{value} is in the window");
    sorted.remove(at);
}

/// The median of sorted `values` (the mean of the middle two for an even count); 0 for none.
pub(crate) fn median_sorted(values: &[f64]) -> f64 {
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// |v - center| of sorted `values`, smallest first: walking outwards from the center.
fn deviations(values: &[f64], center: f64) -> impl Iterator<Item = f64> + '_ {
    let split = values.partition_point(|v| *v < center);
    let (mut below, mut above) = (split, split);
    std::iter::from_fn(move || {
        let down = (below > 0).then(|| center - values[below - 1]);
        let up = values.get(above).map(|v| v - center);
        match (down, up) {
            (Some(d), Some(u)) if u < d => (above += 1, Some(u)).1,
            (Some(d), _) => (below -= 1, Some(d)).1,
            (None, u) => (above += 1, u).1,
        }
    })
}

/// The median of the absolute deviations of two sorted sides, each from its own median.
pub(crate) fn pooled_mad(left: &[f64], cl: f64, right: &[f64], cr: f64) -> f64 {
    let (mut a, mut b) = (deviations(left, cl).peekable(), deviations(right, cr).peekable());
    let mut merged = std::iter::from_fn(|| match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if y < x => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    });
    let n = left.len() + right.len();
    match n {
        0 => 0.0,
        n if n % 2 == 1 => merged.nth(n / 2).unwrap_or(0.0),
        n => {
            let lower = merged.nth(n / 2 - 1).unwrap_or(0.0);
            (lower + merged.next().unwrap_or(lower)) / 2.0
        }
    }
}
