//! Code layout as a level of a paired comparison (issue 63). A build is one draw of where its link put every
//! function: two builds of identical source, relinked with another padding seed, read up to ~3% apart with
//! intervals of ±0.15%, so an interval over the processes of one pair of libraries is true of those two
//! binaries, not of the change. A duel therefore runs its processes over relinked variants of both builds:
//! processes `2k` and `2k + 1` load the `k`-th pair of layouts, once in each order of the arms, each pair
//! another draw from each side's pool ([`Draw`]) (Kalibera and Jones's nesting: layouts, then processes, then
//! the samples in a process).
//!
//! The verdict's interval is taken over the pairs' means, the unit that is drawn independently: processes
//! that share a layout share its effect, and an interval over them would count it once per process (and under
//! 7 pairs over their plain mean: [`crate::analysis::duel::TRIMMED_PAIRS`]). The
//! spread of the log ratio is split by the method of moments of a balanced nested design: between the
//! processes of one layout pair (their mean squared difference), between layout pairs (what their means
//! spread beyond that), and within a process (its pairs' sampling). Pure.

use crate::stats::bootstrap::Rng;

/// The layouts each side of a comparison draws from under `--layouts auto`: 16 a side, so that 10 pairs (the 20
/// processes of an alternating duel) are drawn from 16 and two comparisons of the same builds share few pairs,
/// while a build's layouts stay a bounded set (the lakehouse plugin's take 151 MB each).
pub const POOL: usize = 16;

/// What one library's layouts may take on disk, both sides' pools together (a build is the old side of one
/// comparison and the new of another, so it keeps both): 2 GiB. A layout is as large as its library: 32 of the
/// lakehouse plugin's 151 MB filled 4.8 GB a build.
pub const DISK_BUDGET: u64 = 2 << 30;

/// The fewest layouts a side the budget leaves a large library: enough that a comparison's 10 pairs are drawn
/// from 16 or more combinations.
pub const LEAST_POOL: usize = 4;

/// The pool a side of a library of `bytes`: `requested`, fewer where both sides' pools of it would pass
/// [`DISK_BUDGET`], but not under [`LEAST_POOL`] (the lakehouse plugin's 151 MB: 7 a side, 2.1 GB).
pub fn pool_for(requested: usize, bytes: u64) -> usize {
    let fit = DISK_BUDGET / (2 * bytes.max(1));
    requested.min((fit as usize).max(LEAST_POOL))
}

/// The layouts a side a duel that takes more processes (`run::duels::EXTRA_PROCESSES`) may draw beyond its
/// pool, linked only when it reaches them: 32 in all, the 64 processes of a duel of 20 planned and 44 more,
/// each two on a pair of their own. Its processes past the pool's pairs used to run them again (pair 0 at
/// processes 32 and 33): where layouts spread the ratio more than processes do (arrow-array's `true_count`, 3.7%
/// between pairs, 3.2% between processes), a process on a pair already drawn adds little, and 27 of 40 A/A
/// comparisons came out `no_change` (`benchmarks/stop_rule.py layouts`: 59% cycling, 93% on fresh pairs).
pub const EXTENDED_POOL: usize = 2 * POOL;

/// The layout pairs of one comparison. Side 0 draws its seeds from the odd `1, 3, .., 2n - 1`, side 1 from the
/// even `2, 4, .., 2n` (`n` the pool), so the two sides never share a seed: two builds of identical source
/// would then share a layout, and an A/A comparison would hide exactly the variance it is meant to show. Each
/// side's pool is put in an order drawn anew for each comparison, and pair `k` is the `k`-th seed of each: the
/// comparisons of the same two builds draw other pairs, and their intervals are of the pools, not of one fixed
/// set of pairs. Processes `2k` and `2k + 1` run pair `k`. Past the pool's pairs come those of the extension
/// (seeds `2n + 1, ..` as the pool's, in an order of their own), then the pairs cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct Draw {
    seeds: [Vec<u64>; 2],
}

impl Draw {
    /// The pairs of one comparison over pools of `pool` layouts a side and `extended` in all (the pool first),
    /// their orders drawn from `rng`.
    pub fn new(pool: usize, extended: usize, rng: &mut Rng) -> Draw {
        let pool = pool.max(1) as u64;
        let extended = (extended as u64).max(pool);
        let shuffled = |seeds: std::ops::Range<u64>, first: u64, rng: &mut Rng| {
            let mut seeds: Vec<u64> = seeds.map(|i| 2 * i + first).collect();
            for i in (1..seeds.len()).rev() {
                seeds.swap(i, rng.below(i + 1));
            }
            seeds
        };
        let side = |first: u64, rng: &mut Rng| {
            let mut seeds = shuffled(0..pool, first, rng);
            seeds.extend(shuffled(pool..extended, first, rng));
            seeds
        };
        let side0 = side(1, rng);
        Draw { seeds: [side0, side(2, rng)] }
    }

    /// The layout seed of side `side` (0 or 1) in the comparison's process `process`.
    pub fn seed(&self, process: usize, side: usize) -> u64 {
        self.seeds[side][self.pair_of(process)]
    }

    /// The layout pair process `process` ran with (its cluster): processes are numbered in the order planned.
    pub fn pair_of(&self, process: usize) -> usize {
        (process / 2) % self.seeds[0].len()
    }
}

/// The means of the values of each cluster, in the order the clusters first appear.
pub fn cluster_means(values: &[(usize, f64)]) -> Vec<f64> {
    clusters(values).iter().map(|c| c.iter().sum::<f64>() / c.len() as f64).collect()
}

fn clusters(values: &[(usize, f64)]) -> Vec<Vec<f64>> {
    let mut order: Vec<usize> = Vec::new();
    let mut groups: Vec<Vec<f64>> = Vec::new();
    for &(cluster, value) in values {
        match order.iter().position(|&c| c == cluster) {
            Some(i) => groups[i].push(value),
            None => {
                order.push(cluster);
                groups.push(vec![value]);
            }
        }
    }
    groups
}

/// The spread of a log ratio split into its levels, each a standard deviation in logs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Components {
    /// Between layout pairs: how far one pair of links moves the ratio beyond what its processes spread.
    pub between_layouts: f64,
    /// Between the processes of one layout pair.
    pub between_processes: f64,
}

/// The method-of-moments split of `values` (`(cluster, value)`) into the variance between clusters and
/// between the members of one: `σ²_processes` is the pooled variance inside clusters, `σ²_layouts` what the
/// clusters' means spread beyond `σ²_processes / n` (`n` the members a cluster has, their harmonic mean when
/// they differ), never below 0. `None` without a cluster of two or without two clusters.
pub fn components(values: &[(usize, f64)]) -> Option<Components> {
    let groups = clusters(values);
    let (mut squares, mut df) = (0.0, 0usize);
    for group in &groups {
        let mean = group.iter().sum::<f64>() / group.len() as f64;
        squares += group.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
        df += group.len() - 1;
    }
    if df == 0 || groups.len() < 2 {
        return None;
    }
    let within = squares / df as f64;
    let means: Vec<f64> = groups.iter().map(|g| g.iter().sum::<f64>() / g.len() as f64).collect();
    let grand = means.iter().sum::<f64>() / means.len() as f64;
    let between_means = means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (means.len() - 1) as f64;
    let n = groups.len() as f64 / groups.iter().map(|g| 1.0 / g.len() as f64).sum::<f64>();
    let layouts = (between_means - within / n).max(0.0);
    Some(Components { between_layouts: layouts.sqrt(), between_processes: within.sqrt() })
}

/// The smallest change a comparison of one layout a side can call as the code's and not the links': the half
/// width of the 95% range of the log ratio of two single layouts of identical code, `1.96 σ` for the ratio's
/// between-layout spread `σ` (both sides' layouts in it), as a fraction (the ratio's distance from 1).
pub fn floor(between_layouts: f64) -> f64 {
    (crate::stats::Z_95 * between_layouts).exp() - 1.0
}

#[cfg(test)]
#[path = "layouts_tests.rs"]
mod tests;
