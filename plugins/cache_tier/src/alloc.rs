//! A counting global allocator. The plugin has its own copy of the Rust runtime and so its own allocator: only
//! code inside the plugin can count what the plugin allocates. Counting is off while requests are timed (while no
//! thread counts, that costs one relaxed load per allocation); the rig counts a few extra requests after the timed
//! region instead, so the counter's atomics never land in `request_time`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Forwards to the system allocator, counting allocations and their bytes on a thread inside [`count`].
pub struct Counting;

/// How many threads count: the one load every allocation pays while none does.
static COUNTERS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Const-initialised and without destructors, so touching them never allocates (no recursion).
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

fn note(size: usize) {
    if COUNTERS.load(Relaxed) > 0 && COUNTING.with(Cell::get) {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        BYTES.with(|n| n.set(n.get() + size as u64));
    }
}

// SAFETY: every call forwards to `System` with the caller's arguments unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    // A grown or shrunk block counts as one allocation of its new size, as Go's `allocs/op` counts a
    // slice growth (the seed's unit).
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Switches counting on for this thread until dropped (also when the counted code panics).
struct Switch;

impl Counting {
    fn start() -> Switch {
        COUNTING.with(|c| c.set(true));
        COUNTERS.fetch_add(1, Relaxed);
        Switch
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        COUNTERS.fetch_sub(1, Relaxed);
        COUNTING.with(|c| c.set(false));
    }
}

/// Allocations made by the plugin while counting was on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Allocations {
    /// Number of allocations (reallocations included).
    pub count: u64,
    /// Bytes requested by them.
    pub bytes: u64,
}

/// Runs `op` and returns what it allocated on this thread (other threads are not counted; the rig's requests
/// run on the calling thread, DataFusion's included, since it is driven by a current-thread runtime).
pub fn count<T>(op: impl FnOnce() -> T) -> (T, Allocations) {
    let before = Allocations { count: ALLOCATIONS.with(Cell::get), bytes: BYTES.with(Cell::get) };
    let guard = Counting::start();
    let value = op();
    drop(guard);
    let after = Allocations { count: ALLOCATIONS.with(Cell::get), bytes: BYTES.with(Cell::get) };
    (value, Allocations { count: after.count - before.count, bytes: after.bytes - before.bytes })
}
