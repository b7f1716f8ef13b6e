//! The child's heap, settled before any plugin code runs (see `benchhost_plugin_api::heap` for why), and its
//! page faults counted.

pub use benchhost_plugin_api::heap::settle;

/// Caps this process's data memory (heap and private mappings) at `bytes`: allocations past it fail.
pub fn limit(bytes: u64) -> std::io::Result<()> {
    let limit = libc::rlimit { rlim_cur: bytes as libc::rlim_t, rlim_max: bytes as libc::rlim_t };
    // SAFETY: setrlimit reads the struct it is given.
    match unsafe { libc::setrlimit(libc::RLIMIT_DATA, &limit) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Minor page faults of this process so far.
pub fn minor_faults() -> Option<u64> {
    // SAFETY: getrusage fills the zeroed struct it is given.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        (libc::getrusage(libc::RUSAGE_SELF, &mut usage) == 0).then_some(usage.ru_minflt as u64)
    }
}
