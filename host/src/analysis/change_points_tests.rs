use super::*;
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
