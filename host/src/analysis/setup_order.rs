//! Whether the order a duel's two arms were set up in, in each of its processes, moved what they measured.
//! Pure.
//!
//! Both arms of an `alternate` duel live in one process, set up one after the other, the first one the
//! reference in even processes and the arm in odd ones. What the first arm's setup leaves behind (the heap's
//! free places, warm pages) is where the second's lands, and a workload whose cost depends on it reads the order
//! instead of the code: the harness's 64 KiB copy between two buffers took 3% more time (22% in some processes)
//! in whichever arm was set up second on an Intel Xeon VM (issue 83; the rig now places its buffers itself).
//! The order is balanced, so the estimate is not biased by it, but the interval counts it as spread between
//! processes: a verdict that cannot decide says so when the two orders' processes read apart.

/// An estimate over processes and its CI95 and CI90, as ratios (`duel::intervals`).
type Intervals = Option<(f64, [f64; 2], [f64; 2])>;

/// The note a verdict adds when the processes that set up the reference first (`orders[0]`: their log ratios)
/// and those that set up the arm first (`orders[1]`) read apart, their `intervals` (the verdict's own, over
/// each order's processes) not overlapping (under no effect, one duel in a few hundred), with both readings;
/// `None` otherwise, or when either order had fewer than three processes (`concurrent` duels have no order).
pub fn note(orders: [&[f64]; 2], intervals: impl Fn(&[f64]) -> Intervals) -> Option<String> {
    let [reference_first, arm_first] = orders;
    if reference_first.len() < 3 || arm_first.len() < 3 {
        return None;
    }
    let (r, [r_lo, r_hi], _) = intervals(reference_first)?;
    let (a, [a_lo, a_hi], _) = intervals(arm_first)?;
    (r_lo > a_hi || a_lo > r_hi).then(|| {
        format!(
            "; the order the arms were set up in moved it: x{r:.4} over the {} processes that set up the reference \
             first, x{a:.4} over the {} that set up this arm first, which the interval counts as spread (a workload \
             whose cost depends on where its buffers lie: see Writing a rig)",
            reference_first.len(),
            arm_first.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The log ratios of `n` processes of each order, `order` apart by it (+ for the reference first), each
    /// with a small spread of its own.
    fn orders(n: usize, order: f64) -> [Vec<f64>; 2] {
        let own = |k: usize| 0.002 * ((k * 7 % 5) as f64 - 2.0);
        [(0..n).map(|k| own(k) + order).collect(), (0..n).map(|k| own(k + 3) - order).collect()]
    }

    /// A plain mean's interval, as a stand-in for the verdict's own.
    fn interval(logs: &[f64]) -> Intervals {
        let s = crate::stats::summarize(logs)?;
        let h = 2.0 * s.stddev / (logs.len() as f64).sqrt();
        Some((s.mean.exp(), [(s.mean - h).exp(), (s.mean + h).exp()], [(s.mean - h).exp(), (s.mean + h).exp()]))
    }

    #[test]
    fn a_verdict_says_so_when_the_order_its_arms_were_set_up_in_moved_it() {
        let [reference_first, arm_first] = orders(10, 0.03);
        let said = note([&reference_first, &arm_first], interval).unwrap();
        assert!(said.contains("x1.03") && said.contains("x0.97") && said.contains("10 processes"), "{said}");
        let [reference_first, arm_first] = orders(10, 0.0);
        assert_eq!(note([&reference_first, &arm_first], interval), None, "no effect of the order");
        // Both at once (`concurrent`): no process has an order.
        assert_eq!(note([&[], &[]], interval), None);
    }
}
