//! `work_us` of busy work per record: a fixed arithmetic spin, so the work itself reads no clock and is the
//! same amount in every instance of the rig.
//!
//! It used to be calibrated against the clock at set-up (the median of five 2 ms trials). That made the
//! work a measurement: on the project's 2-core Intel Xeon VM, 40 calibrations in a row read 468-599 rounds
//! per µs (median 592), so one instance did up to 20% more work per record than another. Two arms set up in
//! one process then compared different workloads (an A/A duel of identical libraries read x0.89 in one
//! process), and between processes the calibration moved the throughput more than the consumers did.

use std::hint::black_box;

/// Spin rounds per µs of work: the unloaded speed of the spin on the project's 2-core Intel Xeon VM (best 599,
/// median 592 of 40 calibrations). Elsewhere `work_us` is this many rounds, whatever they take there.
pub const ROUNDS_PER_US: u64 = 600;

/// Busy work of a fixed length.
#[derive(Debug, Clone, Copy)]
pub struct Spin {
    rounds: u64,
}

impl Spin {
    /// `micros` µs of work on the reference machine: `micros` x [`ROUNDS_PER_US`] rounds.
    pub fn of_micros(micros: u64) -> Spin {
        Spin { rounds: micros.saturating_mul(ROUNDS_PER_US) }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_is_a_fixed_count_of_rounds() {
        assert_eq!(Spin::of_micros(0).rounds, 0);
        assert_eq!(Spin::of_micros(10).rounds, 10 * ROUNDS_PER_US);
        assert_eq!(Spin::of_micros(10).rounds, Spin::of_micros(10).rounds, "no clock: every instance alike");
    }
}
