//! A count process's environment, fixed: its randomness and its clocks are the same in every count, so that
//! code whose work depends on them does the same work in every count.
//!
//! Why: a count forks a set-up rig, and the instructions an iteration runs depend on the random bytes and the
//! times it and its set-up read: hash seeds and UUIDs shape the heap the forks iterate on (`random`), and caches
//! that tidy up on a timer (moka's, in iceberg-rust's manifest cache, runs its pending work when 300 ms have
//! passed) do more or less of it with the time Valgrind happens to take (`clock`).
//!
//! How: this binary defines the C library functions that hand them out and exports them (`build.rs`), so they
//! come before glibc's in the process's symbol lookup: std, the `getrandom` crate and so every plugin's copies of
//! them find ours, by that lookup (`dlsym`) or by a call through the PLT. Until [`fix`] is called they pass
//! through to the kernel or to glibc; after it (only a count process calls it, before it loads the plugin) they
//! give a fixed stream. Timed processes never call it: their randomness and time are the OS's.

use std::sync::atomic::{AtomicBool, Ordering};

mod clock;
mod random;

/// Whether this process's randomness and clocks are fixed.
static FIXED: AtomicBool = AtomicBool::new(false);

/// Fixes this process's randomness and clocks from now on. For a count process only: its bytes are not random
/// at all, and its time is not the wall's.
pub fn fix() {
    FIXED.store(true, Ordering::SeqCst);
}

/// Whether [`fix`] was called.
fn fixed() -> bool {
    FIXED.load(Ordering::Relaxed)
}
