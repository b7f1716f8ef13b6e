use super::*;
use crate::analysis::accepted_steps::{self, AcceptedStep, Unplaced};
use benchhost_record::Record;
use benchhost_record::nightly::NightlyKey;

/// The change points of `nights`, no boundary forced.
fn change_points(nights: &[Night]) -> Result<Vec<ChangePoint>, TooShort> {
    change_points_with(nights, &[])
}
use crate::stats::bootstrap::Rng;

/// `n` nights of log-normal noise `sigma` around 1.0, stepping by the factors in `steps` at their nights.
fn nights(n: usize, sigma: f64, steps: &[(usize, f64)], seed: u64) -> Vec<Night> {
    let mut rng = Rng::new(seed);
    let mut uniform = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut level = 0.0;
    (0..n)
        .map(|i| {
            level += steps.iter().filter(|(at, _)| *at == i).map(|(_, f)| f64::ln(*f)).sum::<f64>();
            // Box-Muller: one standard normal from two uniforms.
            let z = (-2.0 * (1.0 - uniform()).ln()).sqrt() * (std::f64::consts::TAU * uniform()).cos();
            Night { log_value: level + sigma * z, log_se: sigma / 3.0, doubtful: false }
        })
        .collect()
}

#[test]
fn a_step_is_found_at_its_night_with_its_size() {
    for seed in 1..=5 {
        let points = change_points(&nights(200, 0.02, &[(100, 1.05)], seed)).unwrap();
        assert_eq!(points.len(), 1, "seed {seed}: {points:?}");
        let point = points[0];
        assert!((98..=102).contains(&point.index), "seed {seed}: {point:?}");
        assert!(point.z > Z && point.p < 1e-6 && !point.provisional, "seed {seed}: {point:?}");
        assert!((point.ratio - 1.05).abs() < 0.02, "seed {seed}: {point:?}");
        assert!(
            1.0 < point.ci95[0] && point.ci95[0] < point.ratio && point.ratio < point.ci95[1],
            "seed {seed}: {point:?}"
        );
    }
    let down = change_points(&nights(200, 0.02, &[(120, 0.9)], 9)).unwrap();
    assert_eq!(down.iter().map(|p| (p.index, p.z < 0.0)).collect::<Vec<_>>(), [(120, true)]);
}

#[test]
fn a_flat_series_with_outlier_nights_has_no_change_point() {
    for seed in 1..=3 {
        let mut flat = nights(1000, 0.02, &[], seed);
        for at in [100, 101, 400, 700] {
            flat[at].log_value += f64::ln(1.3);
        }
        assert_eq!(change_points(&flat).unwrap(), [], "seed {seed}");
    }
}

#[test]
fn nights_in_doubtful_conditions_are_left_out() {
    let mut slow = nights(300, 0.02, &[], 4);
    for night in &mut slow[150..170] {
        night.log_value += f64::ln(1.5);
    }
    assert!(!change_points(&slow).unwrap().is_empty(), "20 slow nights look like two steps when nothing says why");
    for night in &mut slow[150..170] {
        night.doubtful = true;
    }
    assert_eq!(change_points(&slow).unwrap(), []);
}

#[test]
fn the_sliding_windows_hold_what_a_fresh_reading_holds() {
    let mut series = nights(400, 0.03, &[(200, 1.1)], 6);
    for at in [0, 3, 31, 32, 90, 199, 200, 250, 399] {
        series[at].doubtful = true;
    }
    series[120].log_value = series[119].log_value; // equal values leave one at a time
    for start in [0, 7, 150] {
        let mut slid = Windows::default();
        for k in start + 1..series.len() {
            window_z(&series, start, k, &mut slid);
            let mut fresh = Windows::default();
            fresh.move_to(&series, start, k);
            assert_eq!((&slid.left, &slid.right, &slid.own), (&fresh.left, &fresh.right, &fresh.own), "at {k}");
            let (cl, cr) = (median_sorted(&slid.left), median_sorted(&slid.right));
            let residuals = slid.left.iter().map(|v| (v - cl).abs()).chain(slid.right.iter().map(|v| (v - cr).abs()));
            assert_eq!(pooled_mad(&slid.left, cl, &slid.right, cr), median(residuals), "at {k}");
            assert_eq!(median_sorted(&slid.left), median(slid.left.iter().rev().copied()), "at {k}");
            assert!(slid.left.len() <= WINDOW && slid.right.len() <= WINDOW && slid.own.len() <= 2 * WINDOW);
        }
    }
}

#[test]
fn a_noisy_night_weighs_less() {
    // How far one night's value moves the statistic: by its weight, which its own CI95 lowers. Nights
    // alternate around 0, so medians and spread stay put while night 40 moves.
    let mut series: Vec<Night> = (0..60)
        .map(|i| Night { log_value: if i % 2 == 0 { 0.01 } else { -0.01 }, log_se: 0.003, doubtful: false })
        .collect();
    let moved = |series: &mut Vec<Night>| {
        series[40].log_value = 0.01;
        let before = window_z(series, 0, 30, &mut Windows::default());
        series[40].log_value = 0.02;
        window_z(series, 0, 30, &mut Windows::default()) - before
    };
    let plain = moved(&mut series);
    series[40].log_se = 0.1;
    let noisy = moved(&mut series);
    assert!(plain > 0.05 && noisy.abs() < plain / 4.0, "plain {plain}, noisy {noisy}");
}

#[test]
fn a_change_point_never_moves_once_settled() {
    let full = nights(600, 0.02, &[(150, 1.04), (300, 0.95), (420, 1.1)], 7);
    let whole = change_points(&full).unwrap();
    assert_eq!(whole.len(), 3, "{whole:?}");
    for (point, truth) in whole.iter().zip([150, 300, 420]) {
        assert!(point.index.abs_diff(truth) <= 2, "{whole:?}");
    }
    let mut settled_seen = 0;
    for len in (20..=full.len()).step_by(3) {
        for point in change_points(&full[..len]).unwrap() {
            if !point.provisional {
                settled_seen += 1;
                assert!(whole.iter().any(|w| w.index == point.index), "prefix {len}: {point:?} not in {whole:?}");
            }
            if point.index + SETTLED_AFTER <= len {
                assert!(!point.provisional, "prefix {len}: {point:?}");
            }
        }
    }
    assert!(settled_seen > 100, "{settled_seen}");
    // Near the end a change point is provisional.
    let recent = change_points(&nights(200, 0.02, &[(185, 1.2)], 3)).unwrap();
    assert_eq!(recent.iter().map(|p| (p.index, p.provisional)).collect::<Vec<_>>(), [(185, true)]);
}

#[test]
fn a_series_too_short_says_how_short() {
    assert_eq!(change_points(&nights(9, 0.02, &[], 1)), Err(TooShort::Nights(9, 10)));
    let mut some_doubtful = nights(12, 0.02, &[], 1);
    for night in &mut some_doubtful[..4] {
        night.doubtful = true;
    }
    assert_eq!(change_points(&some_doubtful), Err(TooShort::Nights(8, 10)));
    assert_eq!(change_points(&nights(10, 0.02, &[], 1)), Ok(vec![]));
}

#[test]
fn p_values_are_the_normal_tails() {
    assert!((p_two_sided(0.0) - 1.0).abs() < 1e-6);
    assert!((p_two_sided(1.959964) - 0.05).abs() < 1e-6);
    assert!((p_two_sided(-5.0) / 5.733031e-7 - 1.0).abs() < 1e-5);
}

#[test]
fn medians_by_selection_are_the_middle_or_the_mean_of_the_middle_two() {
    assert_eq!(median([3.0, 1.0, 2.0].into_iter()), 2.0);
    assert_eq!(median([4.0, 1.0, 3.0, 2.0].into_iter()), 2.5);
    assert_eq!(median(std::iter::empty()), 0.0);
}

/// A standing acknowledgement of `wal rows=1` (`time`, lower is better) accepting `decision` by `ratio` [lo, hi].
fn acknowledgement(decision: &str, ratio: f64, ci95: [f64; 2]) -> Record {
    serde_json::from_value(serde_json::json!({
        "schema": 1, "bench": "wal", "kind": "acknowledgement", "variant": {"rows": 1},
        "run": {"ts_ms": 1, "host": "h", "cpu": "c", "cores": 2, "os": "linux", "profile": "release"},
        "acknowledgement": {"id": "a1", "metric": "time", "decision": decision, "ratio": ratio, "ci95": ci95,
            "higher_is_better": false, "from_ts_ms": 1, "source": "verdict", "reason": "a new check", "by": "ann"}
    }))
    .unwrap()
}

/// The scan of `nights` with the acknowledgement `ack` holding from night `at`: (change points, accepted, unplaced).
fn settled(nights: &[Night], ack: &Record, at: usize) -> (Vec<ChangePoint>, Vec<AcceptedStep>, Vec<Unplaced>) {
    let points = change_points_with(nights, &[at]).unwrap();
    accepted_steps::settle(points, nights, &[(ack, Some(at))], false)
}

#[test]
fn an_accepted_step_is_a_boundary_not_a_change_point() {
    let ack = acknowledgement("regressed", 1.05, [1.04, 1.06]);
    for (seed, at) in [(1, 120), (2, 117), (3, 123)] {
        // The acknowledgement's night at the step, or a few nights from it (the night of the verdict it accepted).
        let history = nights(200, 0.02, &[(120, 1.05)], seed);
        let (points, accepted, unplaced) = settled(&history, &ack, at);
        assert_eq!((points.as_slice(), unplaced.as_slice()), (&[][..], &[][..]), "seed {seed}");
        assert_eq!(accepted.len(), 1, "seed {seed}");
        assert!((accepted[0].index as i64 - 120).abs() <= 3, "seed {seed}: {:?}", accepted[0].index);
        assert!((accepted[0].ratio - 1.05).abs() < 0.02, "seed {seed}: {}", accepted[0].ratio);
    }
}

#[test]
fn a_later_larger_step_is_still_a_change_point_and_so_is_one_larger_than_accepted() {
    let ack = acknowledgement("regressed", 1.05, [1.04, 1.06]);
    let history = nights(240, 0.02, &[(100, 1.05), (170, 1.10)], 5);
    let (points, accepted, _) = settled(&history, &ack, 100);
    assert_eq!(accepted.iter().map(|s| s.index).collect::<Vec<_>>(), [100]);
    assert_eq!(points.len(), 1, "{points:?}");
    assert!((168..=172).contains(&points[0].index) && points[0].ratio > 1.05, "{points:?}");
    // The step at the acknowledged night is 20%, where 5% [4%, 6%] was accepted: not accepted, a change point.
    let larger = nights(200, 0.02, &[(100, 1.20)], 6);
    let (points, accepted, unplaced) = settled(&larger, &ack, 100);
    assert!(accepted.is_empty());
    assert_eq!(points.iter().map(|p| p.index).collect::<Vec<_>>(), [100]);
    assert!(unplaced[0].why.contains("is larger than the accepted x1.050 [1.040, 1.060]"), "{}", unplaced[0].why);
}

#[test]
fn an_acknowledgement_with_no_step_near_it_says_so() {
    let ack = acknowledgement("regressed", 1.05, [1.04, 1.06]);
    let (points, accepted, unplaced) = settled(&nights(200, 0.02, &[], 7), &ack, 100);
    assert!(points.is_empty() && accepted.is_empty());
    assert!(unplaced[0].why.starts_with("no step near night 101 (x"), "{}", unplaced[0].why);
    // An improvement where a regression was accepted is not the step accepted.
    let (points, accepted, unplaced) = settled(&nights(200, 0.02, &[(100, 0.9)], 8), &ack, 100);
    assert!(accepted.is_empty() && points.iter().all(|p| p.ratio < 1.0), "{points:?}");
    assert!(unplaced[0].why.starts_with("no step near night 101"), "{}", unplaced[0].why);
}

#[test]
fn an_acknowledgement_holds_from_the_night_of_its_commit_else_from_its_time() {
    use benchhost_record::nightly::{Point, RunOf};
    let point = |ts_ms: u64, commit: &str| Point {
        ts_ms,
        at: ts_ms,
        value: 1.0,
        log_se: 0.0,
        doubtful: false,
        run: std::sync::Arc::new(RunOf { id: None, commit: Some(commit.into()) }),
    };
    let points: Vec<Point> = (0..10).map(|i| point(1000 * i, &format!("{i:0>12}"))).collect();
    let key = NightlyKey {
        bench: "wal".into(),
        variant: r#"{"rows":1}"#.into(),
        metric: "time".into(),
        machine: "m".into(),
        method: String::new(),
    };
    let mut ack = acknowledgement("regressed", 1.05, [1.04, 1.06]);
    let a = ack.acknowledgement.as_mut().unwrap();
    (a.from_commit, a.from_ts_ms) = (Some(format!("{:0>12}{}", 6, "ab12cd34")), 2500);
    assert_eq!(accepted_steps::of_series(&key, &points, &[&ack]), [(&ack, Some(6))], "by its commit");
    ack.acknowledgement.as_mut().unwrap().from_commit = Some("f00dfeedbeef".into());
    assert_eq!(accepted_steps::of_series(&key, &points, &[&ack]), [(&ack, Some(3))], "by its time");
    ack.acknowledgement.as_mut().unwrap().from_ts_ms = 99_999;
    assert_eq!(accepted_steps::of_series(&key, &points, &[&ack]), [(&ack, None)], "no night after it");
    let other = NightlyKey { metric: "bytes".into(), ..key };
    assert!(accepted_steps::of_series(&other, &points, &[&ack]).is_empty(), "another metric");
}
