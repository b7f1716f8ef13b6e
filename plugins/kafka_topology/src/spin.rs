//! `work_us` of busy work per record: a calibrated arithmetic spin, so the work itself reads no clock.

use std::hint::black_box;
use std::time::Instant;

/// Busy work of a fixed length.
#[derive(Debug, Clone, Copy)]
pub struct Spin {
    rounds: u64,
}

impl Spin {
    /// Work of about `micros` µs on this machine; calibrated over a few milliseconds.
    pub fn calibrated(micros: u64) -> Spin {
        if micros == 0 {
            return Spin { rounds: 0 };
        }
        let per_us = rounds_per_microsecond();
        Spin { rounds: (per_us * micros as f64).round().max(1.0) as u64 }
    }

    /// Does the work.
    #[inline]
    pub fn work(&self) {
        spin(self.rounds);
    }
}

#[inline]
fn spin(rounds: u64) -> u64 {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..rounds {
        x = black_box(x.rotate_left(5) ^ 0x5851_F42D_4C95_7F2D).wrapping_mul(6364136223846793005);
    }
    x
}

/// The median of five 2 ms trials, robust to a trial that got descheduled.
fn rounds_per_microsecond() -> f64 {
    let mut trials: Vec<f64> = (0..5)
        .map(|_| {
            let rounds = 200_000u64;
            let start = Instant::now();
            black_box(spin(rounds));
            rounds as f64 / (start.elapsed().as_secs_f64() * 1e6).max(1e-3)
        })
        .collect();
    trials.sort_by(f64::total_cmp);
    trials[2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_work_costs_nothing_and_calibration_is_positive() {
        assert_eq!(Spin::calibrated(0).rounds, 0);
        assert!(Spin::calibrated(10).rounds >= 1);
    }
}
