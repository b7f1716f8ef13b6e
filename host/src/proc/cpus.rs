//! The cores this process may run on, and pinning to one (`--pairing concurrent` runs each arm on its own).

/// The cores this process may run on (its affinity mask: `taskset` and cgroups narrow it), in order.
pub fn allowed() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain old data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![0];
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&cpu| libc::CPU_ISSET(cpu, &set)).collect()
    }
}

/// Pins this process to `cpu`.
pub fn pin(cpu: usize) -> std::io::Result<()> {
    // SAFETY: as above; sched_setaffinity reads the set it is given.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        match libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_allowed_cores_are_what_the_process_may_use() {
        let cores = super::allowed();
        assert!(!cores.is_empty());
        let parallelism = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!(cores.len() >= parallelism, "std reads the same mask (and may narrow it by a cgroup quota)");
    }
}
