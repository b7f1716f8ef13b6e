//! The child's heap, settled before any plugin code runs (see `benchhost_plugin_api::heap` for why), and its
//! page faults counted.

pub use benchhost_plugin_api::heap::settle;

/// Minor page faults of this process so far.
pub fn minor_faults() -> Option<u64> {
    // SAFETY: getrusage fills the zeroed struct it is given.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        (libc::getrusage(libc::RUSAGE_SELF, &mut usage) == 0).then_some(usage.ru_minflt as u64)
    }
}
