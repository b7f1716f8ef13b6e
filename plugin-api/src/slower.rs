//! A known slowdown compiled into a rig, for proofs: a second build of the same tree that is slower by a known
//! amount, as `benchhost run --against` must catch it. A rig with a `slower` cargo feature spins
//! [`rounds`]`(option_env!("BENCHHOST_SLOWER_SPIN"))` rounds in its hot path when the feature is on, and
//! nothing otherwise; the proof script sizes the rounds to ~5% of the cell it measures.
//!
//! # Examples
//! ```
//! use benchhost_plugin_api::slower;
//! // What a rig writes (its own crate's feature and environment, read when it is compiled):
//! const SLOWER: u64 = if cfg!(feature = "slower") { slower::rounds(option_env!("BENCHHOST_SLOWER_SPIN")) } else { 0 };
//! slower::spin(SLOWER); // no work without the feature
//! assert_eq!(slower::rounds(Some("1200")), 1200);
//! ```

use std::hint::black_box;

/// `text` as a number of rounds (0 when absent); a build with a malformed value fails to compile.
pub const fn rounds(text: Option<&str>) -> u64 {
    let Some(text) = text else { return 0 };
    let (bytes, mut i, mut n) = (text.as_bytes(), 0, 0u64);
    while i < bytes.len() {
        assert!(bytes[i].is_ascii_digit(), "a slower spin must be a number of rounds");
        n = n * 10 + (bytes[i] - b'0') as u64;
        i += 1;
    }
    n
}

/// `rounds` of a dependent arithmetic chain (~1.7 ns each on the project's VM); nothing when 0, and with a
/// constant 0 (a build without the feature) not even a call.
#[inline(always)]
pub fn spin(rounds: u64) {
    if rounds == 0 {
        return;
    }
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..rounds {
        x = black_box(x.rotate_left(5) ^ 0x5851_F42D_4C95_7F2D).wrapping_mul(6364136223846793005);
    }
    black_box(x);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_are_read_from_the_text_and_absent_is_none() {
        assert_eq!((rounds(None), rounds(Some("0")), rounds(Some("42"))), (0, 0, 42));
    }
}
