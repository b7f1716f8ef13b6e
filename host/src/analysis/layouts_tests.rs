use super::*;
use crate::stats::bootstrap::Rng;

/// A standard normal draw (Box-Muller over the bootstrap's seeded generator).
fn normal(rng: &mut Rng) -> f64 {
    let uniform = |rng: &mut Rng| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let (u, v) = (uniform(rng).max(1e-300), uniform(rng));
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// One duel's per-process log ratios: `pairs` layout pairs, two processes each, a layout effect of sd
/// `layouts` shared by a pair's processes, a process effect of sd `processes`, around `change`.
fn duel(rng: &mut Rng, pairs: usize, change: f64, layouts: f64, processes: f64) -> Vec<(usize, f64)> {
    let mut out = Vec::new();
    for pair in 0..pairs {
        let layout = layouts * normal(rng);
        for _ in 0..2 {
            out.push((pair, change + layout + processes * normal(rng)));
        }
    }
    out
}

#[test]
fn each_pair_of_processes_draws_a_pair_from_the_pools_and_the_sides_never_share_a_seed() {
    let mut rng = Rng::new(63);
    let draw = Draw::new(16, 16, &mut rng);
    let pairs: Vec<[u64; 2]> = (0..32).step_by(2).map(|p| [draw.seed(p, 0), draw.seed(p, 1)]).collect();
    // The two processes of a pair share it, and the 16 pairs use each side's pool once: odd seeds on side 0.
    assert!((0..32).all(|p| draw.seed(p, 0) == draw.seed(p / 2 * 2, 0) && draw.seed(p, 1) == draw.seed(p / 2 * 2, 1)));
    let mut side0: Vec<u64> = pairs.iter().map(|p| p[0]).collect();
    let mut side1: Vec<u64> = pairs.iter().map(|p| p[1]).collect();
    side0.sort_unstable();
    side1.sort_unstable();
    assert_eq!(side0, (0..16).map(|i| 2 * i + 1).collect::<Vec<u64>>());
    assert_eq!(side1, (0..16).map(|i| 2 * i + 2).collect::<Vec<u64>>());
    // More processes than pairs: the pairs cycle, and a cluster is a pair, wherever it comes.
    assert_eq!((0..36).map(|p| draw.pair_of(p)).filter(|&k| k == 0).count(), 4);
    assert_eq!(draw.seed(33, 1), draw.seed(1, 1));
    // Another comparison draws other pairs: of 200 draws, no two alike in their first 10 pairs.
    let firsts: Vec<Vec<[u64; 2]>> = (0..200)
        .map(|_| {
            let d = Draw::new(16, 16, &mut rng);
            (0..20).step_by(2).map(|p| [d.seed(p, 0), d.seed(p, 1)]).collect()
        })
        .collect();
    let distinct: std::collections::BTreeSet<_> = firsts.iter().collect();
    assert_eq!(distinct.len(), 200);
    // Every seed is drawn about as often in the first pair (16 seeds, 200 draws: 12.5 each on average).
    let counts = (0..16).map(|i| firsts.iter().filter(|f| f[0][0] == 2 * i + 1).count());
    assert!(counts.clone().all(|c| (2..=30).contains(&c)), "{:?}", counts.collect::<Vec<_>>());
}

#[test]
fn processes_past_the_pool_draw_fresh_pairs_of_the_extension_then_cycle() {
    let mut rng = Rng::new(82);
    let draw = Draw::new(16, 32, &mut rng);
    let side = |s: usize, processes: std::ops::Range<usize>| {
        let mut seeds: Vec<u64> = processes.step_by(2).map(|p| draw.seed(p, s)).collect();
        seeds.sort_unstable();
        seeds
    };
    // The first 32 processes are the pool's pairs, as without an extension; the next 32 the extension's.
    assert_eq!(side(0, 0..32), (0..16).map(|i| 2 * i + 1).collect::<Vec<u64>>());
    assert_eq!(side(1, 0..32), (0..16).map(|i| 2 * i + 2).collect::<Vec<u64>>());
    assert_eq!(side(0, 32..64), (16..32).map(|i| 2 * i + 1).collect::<Vec<u64>>());
    assert_eq!(side(1, 32..64), (16..32).map(|i| 2 * i + 2).collect::<Vec<u64>>());
    assert_eq!(draw.pair_of(33), 16);
    assert_eq!(draw.seed(64, 0), draw.seed(0, 0));
    // An extension no larger than the pool is none.
    assert_eq!(Draw::new(7, 4, &mut rng).pair_of(14), 0);
}

#[test]
fn the_split_finds_known_components_of_synthetic_duels() {
    let mut rng = Rng::new(63);
    let values = duel(&mut rng, 4000, 0.0, 0.02, 0.005);
    let c = components(&values).unwrap();
    assert!((c.between_layouts - 0.02).abs() < 0.001, "{c:?}");
    assert!((c.between_processes - 0.005).abs() < 0.0003, "{c:?}");
    // No layout effect: the split says so (within what chance leaves), and never a negative variance.
    let c = components(&duel(&mut rng, 4000, 0.0, 0.0, 0.01)).unwrap();
    assert!(c.between_layouts < 0.003 && (c.between_processes - 0.01).abs() < 0.0005, "{c:?}");
    assert_eq!(components(&[(0, 0.1), (1, 0.2)]), None, "no cluster of two: processes and layouts are one");
}

#[test]
fn an_interval_over_the_pairs_means_covers_the_change_and_one_over_processes_does_not() {
    // Layouts that move the ratio 4x as much as processes do (the wal cell: ±1.4% against ~0.3%): an interval
    // over the 20 processes counts each layout twice and misses; over the 10 pairs' means it holds ~95%.
    let mut rng = Rng::new(631);
    let (mut over_pairs, mut over_processes) = (0, 0);
    for _ in 0..2000 {
        let values = duel(&mut rng, 10, 0.01, 0.014, 0.0035);
        let holds = |logs: &[f64]| {
            let (_, [lo, hi], _) = crate::analysis::duel::intervals(logs).unwrap();
            lo <= 0.01f64.exp() && 0.01f64.exp() <= hi
        };
        over_pairs += usize::from(holds(&cluster_means(&values)));
        over_processes += usize::from(holds(&values.iter().map(|v| v.1).collect::<Vec<_>>()));
    }
    assert!((1820..=1960).contains(&over_pairs), "over the pairs' means: {over_pairs} of 2000");
    assert!(over_processes < 1800, "over the processes: {over_processes} of 2000");
}

#[test]
fn five_pairs_take_the_plain_mean_which_covers_the_change_at_two_thirds_of_the_trimmed_width() {
    // A run-style duel: 10 processes, 5 layout pairs (compaction: layouts ~0.7%, processes ~1.8%).
    let mut rng = Rng::new(632);
    let (mut holds, mut plain_width, mut trimmed_width) = (0, 0.0, 0.0);
    for _ in 0..2000 {
        let means = cluster_means(&duel(&mut rng, 5, 0.01, 0.007, 0.018));
        let (_, [lo, hi], _) = crate::analysis::duel::pair_intervals(&means).unwrap();
        holds += usize::from(lo <= 0.01f64.exp() && 0.01f64.exp() <= hi);
        plain_width += (hi / lo).ln();
        let (_, [lo, hi], _) = crate::analysis::duel::intervals(&means).unwrap();
        trimmed_width += (hi / lo).ln();
    }
    assert!((1860..=1960).contains(&holds), "over 5 pairs' plain mean: {holds} of 2000");
    assert!(plain_width < 0.7 * trimmed_width, "{plain_width} against {trimmed_width}");
    // From 7 pairs on, the pairs' means are trimmed as processes are.
    let seven = cluster_means(&duel(&mut rng, 7, 0.0, 0.007, 0.018));
    assert_eq!(crate::analysis::duel::pair_intervals(&seven), crate::analysis::duel::intervals(&seven));
}

#[test]
fn the_floor_is_the_95_percent_reach_of_one_layout_pair() {
    assert!((floor(0.01) - 0.0198).abs() < 0.0002, "{}", floor(0.01));
    assert_eq!(floor(0.0), 0.0);
}

#[test]
fn a_large_librarys_pools_are_bounded_by_the_disk_budget() {
    // regression: 32 layouts of the lakehouse plugin's 151 MB kept 4.8 GB a build.
    let lakehouse = 151 * 1_000_000;
    let pool = pool_for(POOL, lakehouse);
    assert_eq!(pool, 7);
    assert!(2 * pool as u64 * lakehouse <= DISK_BUDGET, "both sides' pools within the budget");
    assert_eq!(pool_for(POOL, 8 * 1_000_000), POOL, "a small library keeps the whole pool");
    assert_eq!(pool_for(POOL, 4_000_000_000), LEAST_POOL, "never fewer than the least");
    assert_eq!(pool_for(2, 4_000_000_000), 2, "nor more than asked for");
}
