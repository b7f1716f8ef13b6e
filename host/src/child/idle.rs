//! The idle arm of a duel: two rigs set up side by side in one process each bring their own threads (a tokio
//! runtime's workers, librdkafka's and its mock cluster's), and while one arm is timed the other's should sleep.
//! This module says which threads are whose (the ones that appeared while an arm was set up or warmed up) and
//! how much CPU an arm's threads used while the other arm was timed, read from each thread's CPU clock
//! between samples, never inside one.

use std::collections::BTreeSet;

use crate::proc::protocol::Message;

/// The threads of this process now (`/proc/self/task`).
pub fn threads() -> BTreeSet<i32> {
    let Ok(entries) = std::fs::read_dir("/proc/self/task") else { return BTreeSet::new() };
    entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect()
}

/// CPU time `tids` have used so far, ns; a thread that has ended counts as 0.
pub fn cpu_ns(tids: &[i32]) -> u64 {
    tids.iter().map(|&tid| thread_cpu_ns(tid).unwrap_or(0)).sum()
}

/// The CPU clock of thread `tid` of this process: Linux's per-thread CPU clock id (`MAKE_THREAD_CPUCLOCK(tid,
/// CPUCLOCK_SCHED)`), which a thread may read for any thread of its own process.
fn thread_cpu_ns(tid: i32) -> Option<u64> {
    let clock = ((!tid) << 3) | 6;
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec to write to; a bad clock id is an error return, not UB.
    let ok = unsafe { libc::clock_gettime(clock as libc::clockid_t, &mut now) } == 0;
    ok.then(|| now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64)
}

/// What each arm's threads did while the other arm was timed.
#[derive(Debug, Default)]
pub struct IdleArms {
    /// Per side, its own threads (not the one that times).
    pub threads: [Vec<i32>; 2],
    /// Per side, CPU time its threads used while the other side was timed, ns.
    busy_ns: [u64; 2],
    /// Per side, the time the other side was timed while this one idled, ns.
    idle_ns: [u64; 2],
}

impl IdleArms {
    /// Gives side `s` the threads that are in `after` but were not in `before`.
    pub fn adopt(&mut self, s: usize, before: &BTreeSet<i32>, after: &BTreeSet<i32>) {
        let known: BTreeSet<i32> = self.threads.iter().flatten().copied().collect();
        self.threads[s].extend(after.difference(before).filter(|t| !known.contains(t)));
    }

    /// Times side `s` with `timed` (which returns its wall ns), charging side `1 - s`'s threads with the CPU
    /// they use meanwhile.
    pub fn while_timed<T, E>(&mut self, s: usize, timed: impl FnOnce() -> Result<(T, u64), E>) -> Result<T, E> {
        let other = 1 - s;
        let before = cpu_ns(&self.threads[other]);
        let (value, ns) = timed()?;
        self.busy_ns[other] += cpu_ns(&self.threads[other]).saturating_sub(before);
        self.idle_ns[other] += ns;
        Ok(value)
    }

    /// Side `s`'s [`Message::IdleCpu`], when it has threads of its own and the other side was timed.
    pub fn message(&self, s: usize) -> Option<Message> {
        (!self.threads[s].is_empty() && self.idle_ns[s] > 0)
            .then(|| Message::IdleCpu { busy_ns: self.busy_ns[s], during_ns: self.idle_ns[s] })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arm_adopts_the_threads_that_appeared_and_no_thread_twice() {
        let mut idle = IdleArms::default();
        idle.adopt(0, &BTreeSet::from([1]), &BTreeSet::from([1, 2, 3]));
        idle.adopt(1, &BTreeSet::from([1]), &BTreeSet::from([1, 2, 4]));
        assert_eq!(idle.threads, [vec![2, 3], vec![4]]);
    }

    #[test]
    fn the_idle_arm_is_charged_with_what_its_spinning_thread_ran_and_not_with_a_parked_one() {
        let tid = || unsafe { libc::gettid() };
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let (tids, spawned) = std::sync::mpsc::channel();
        let to_spinner = tids.clone();
        let spinner = std::thread::spawn(move || {
            to_spinner.send(tid()).unwrap();
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {}
        });
        let (wake, parked_rx) = std::sync::mpsc::channel::<()>();
        let parked = std::thread::spawn(move || {
            tids.send(tid()).unwrap();
            parked_rx.recv()
        });
        let (first, second) = (spawned.recv().unwrap(), spawned.recv().unwrap());
        assert!(threads().contains(&first) && threads().contains(&second), "/proc/self/task lists them");
        let timed = || -> Result<((), u64), ()> {
            std::thread::sleep(std::time::Duration::from_millis(50));
            Ok(((), 50_000_000))
        };
        // Which thread sent first is not known: charge each alone, then see which one ran.
        let mut busy = Vec::new();
        for tid in [first, second] {
            let mut idle = IdleArms { threads: [vec![], vec![tid]], ..IdleArms::default() };
            idle.while_timed(0, timed).unwrap();
            let Some(Message::IdleCpu { busy_ns, during_ns }) = idle.message(1) else { panic!("side 1 has a thread") };
            assert_eq!(during_ns, 50_000_000);
            assert!(idle.message(0).is_none(), "side 0 has no threads of its own");
            busy.push(busy_ns);
        }
        busy.sort();
        // The spinner ran (most of a core of the 50 ms, less on a crowded machine); the parked thread did not.
        assert!(busy[0] < 1_000_000 && busy[1] > 5_000_000, "{busy:?}");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        drop(wake);
        spinner.join().unwrap();
        let _ = parked.join().unwrap();
    }
}
