//! A settled heap: what benchhost's cells run on, and what a bare loop should run on to compare with them.
//!
//! A cell runs in a fresh process whose heap is nearly empty, so the memory an iteration allocates sits at the
//! top of the heap, and glibc gives it back to the kernel (`brk` shrinks past `M_TRIM_THRESHOLD`, 128 KiB)
//! whenever the iteration frees it: the next iteration takes page faults to get it back. Measured on the
//! `ingest` rig (traces, convert_only): ~40 minor faults and 2 `brk` calls per iteration, 378 µs per request
//! against 311 µs with the heap settled and 276-322 µs for the bare loop in an ordinary process. That is the
//! layout of a benchmark process, not a cost of the code under test, so cells run with trimming off and the
//! mmap threshold at the top of glibc's own dynamic range (32 MiB): what a warmed-up long-running process has.
//! Ordinary benchmark processes hit it too, depending on their layout: the `wal` rig's zstd round trip took
//! 1.31 ms in its bare loop (and so under a Criterion-style loop) against 0.87 ms on a settled heap.

/// Switches heap trimming off and raises the mmap threshold (glibc only; elsewhere nothing to do).
///
/// # Examples
/// ```
/// // At the start of a bare-loop example, before its threads start, as benchhost's child does.
/// benchhost_plugin_api::heap::settle();
/// ```
pub fn settle() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; meant to be called before other threads start.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, -1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}
