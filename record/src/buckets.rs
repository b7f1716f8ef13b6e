//! A metric's whole history in a bounded number of time buckets (see [`Buckets`]).

/// A value at a time: `(ts_ms, arrival, value)`, ordered as records are.
pub type Point = (u64, u64, f64);

/// A metric's history in a bounded number of time buckets: each holds the lowest, the highest and the newest
/// value of its span. The span starts at an hour and doubles (merging neighbours) whenever there would be more
/// buckets than allowed, so any history, in any order, fits.
#[derive(Debug, Clone, Default)]
pub struct Buckets {
    /// Span of a bucket, ms.
    pub width_ms: u64,
    /// Bucket start (ms) → its values.
    pub spans: std::collections::BTreeMap<u64, Span>,
}

/// The values of one bucket.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// Lowest value.
    pub min: f64,
    /// Highest value.
    pub max: f64,
    /// The newest value and when: `(ts_ms, arrival, value)`.
    pub newest: Point,
    /// The newest value's CI95, when its record has one.
    pub newest_ci: Option<[f64; 2]>,
    /// Values in the span.
    pub count: u64,
}

impl Span {
    fn merge(&mut self, other: &Span) {
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        if (other.newest.0, other.newest.1) > (self.newest.0, self.newest.1) {
            self.newest = other.newest;
            self.newest_ci = other.newest_ci;
        }
        self.count += other.count;
    }
}

impl Buckets {
    const FIRST_WIDTH_MS: u64 = 3_600_000;

    pub(crate) fn push(&mut self, point: Point, ci: Option<[f64; 2]>, most: usize) {
        if self.width_ms == 0 {
            self.width_ms = Self::FIRST_WIDTH_MS;
        }
        let span = Span { min: point.2, max: point.2, newest: point, newest_ci: ci, count: 1 };
        self.add(point.0, span);
        self.shrink(most);
    }

    /// Adds the spans of `other` (spans are an hour doubled k times, so one width divides the other).
    pub(crate) fn merge(&mut self, other: Buckets, most: usize) {
        if other.spans.is_empty() {
            return;
        }
        if self.spans.is_empty() {
            *self = other;
            return;
        }
        self.widen(self.width_ms.max(other.width_ms));
        for (start, span) in other.spans {
            self.add(start, span);
        }
        self.shrink(most);
    }

    fn add(&mut self, at: u64, span: Span) {
        let start = at - at % self.width_ms;
        self.spans.entry(start).and_modify(|s| s.merge(&span)).or_insert(span);
    }

    fn widen(&mut self, width_ms: u64) {
        self.width_ms = width_ms;
        for (start, span) in std::mem::take(&mut self.spans) {
            self.add(start, span);
        }
    }

    fn shrink(&mut self, most: usize) {
        while self.spans.len() > most.max(1) {
            self.widen(self.width_ms * 2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_history_in_any_order_fits_its_buckets_and_keeps_every_extreme() {
        let mut buckets = Buckets::default();
        let days: Vec<u64> = (0..365).map(|d| (d * 7919) % 365).collect();
        for (arrival, day) in days.iter().enumerate() {
            let value = if *day == 200 { 1000.0 } else { *day as f64 };
            buckets.push((day * 86_400_000, arrival as u64, value), Some([value - 1.0, value + 1.0]), 64);
        }
        assert!(buckets.spans.len() <= 64 && buckets.spans.len() > 32, "{}", buckets.spans.len());
        assert_eq!(buckets.spans.values().map(|s| s.count).sum::<u64>(), 365);
        assert_eq!(buckets.spans.values().map(|s| s.max).fold(0.0, f64::max), 1000.0, "the spike survives");
        let last = buckets.spans.values().last().unwrap();
        assert_eq!(last.newest.2, 364.0, "the newest bucket ends with the newest value");
        assert_eq!(last.newest_ci, Some([363.0, 365.0]), "and its CI95");
    }

    #[test]
    fn buckets_folded_in_parts_and_merged_equal_one_fold() {
        let points: Vec<Point> = (0..500u64).map(|i| ((i * 7919 % 500) * 3_600_000 * 5, i, (i % 37) as f64)).collect();
        let mut whole = Buckets::default();
        points.iter().for_each(|p| whole.push(*p, None, 48));
        let (mut a, mut b) = (Buckets::default(), Buckets::default());
        points[..123].iter().for_each(|p| a.push(*p, None, 48));
        points[123..].iter().for_each(|p| b.push(*p, None, 48));
        a.merge(b, 48);
        assert_eq!(a.width_ms, whole.width_ms);
        let spans =
            |b: &Buckets| b.spans.iter().map(|(s, x)| (*s, x.min, x.max, x.newest.1, x.count)).collect::<Vec<_>>();
        assert_eq!(spans(&a), spans(&whole));
    }
}
