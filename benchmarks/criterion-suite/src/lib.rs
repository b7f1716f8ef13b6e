//! The library the example suite benchmarks: a sort, a copy, a checksum and an async echo, each with the
//! slowdown the proof's other build compiles in (`--features slower`).

/// The spin rounds the `slower` feature compiles in (`BENCHHOST_SLOWER_SPIN` at build time), else none.
const ROUNDS: u64 = if cfg!(feature = "slower") { parse(option_env!("BENCHHOST_SLOWER_SPIN")) } else { 0 };

/// The slowdown of the `slower` build: a dependent arithmetic chain of [`ROUNDS`] rounds.
#[inline(always)]
pub fn spin() {
    spin_rounds(ROUNDS);
}

#[inline(always)]
fn spin_rounds(rounds: u64) {
    if rounds == 0 {
        return;
    }
    let mut x = std::hint::black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..rounds {
        x = std::hint::black_box(x.rotate_left(5) ^ 0x5851_F42D_4C95_7F2D).wrapping_mul(6364136223846793005);
    }
    std::hint::black_box(x);
}

/// `text` as a number of rounds (0 when absent); a malformed value fails the build. plugin-api's
/// `slower::rounds` does the same for rigs; a suite like this one depends on Criterion alone, so it has its own.
const fn parse(text: Option<&str>) -> u64 {
    let Some(text) = text else { return 0 };
    let (bytes, mut i, mut n) = (text.as_bytes(), 0, 0u64);
    while i < bytes.len() {
        assert!(bytes[i].is_ascii_digit(), "BENCHHOST_SLOWER_SPIN must be a number of rounds");
        n = n * 10 + (bytes[i] - b'0') as u64;
        i += 1;
    }
    n
}

/// Sorts `data` in place.
pub fn sort(data: &mut [u64]) {
    spin();
    data.sort_unstable();
}

/// Copies `src` into `dst`.
pub fn copy(src: &[u8], dst: &mut [u8]) {
    spin();
    dst.copy_from_slice(src);
}

/// An FNV-1a checksum of `data`.
pub fn checksum(data: &[u8]) -> u64 {
    spin();
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// Echoes `n` through a task of the current runtime.
pub async fn echo(n: u64) -> u64 {
    spin();
    tokio::task::yield_now().await;
    n
}

/// Data that sorts differently each time: a xorshift sequence from `seed`.
pub fn scrambled(len: usize, seed: u64) -> Vec<u64> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect()
}
