//! An instruction count (`run --instructions`), run under Cachegrind by the parent: load, set up, then pairs
//! of forks. A fork of a pair runs m iterations and exits at once (`_exit`: no teardown, no drop, no exit
//! handlers, whose cost may grow with the iterations); its twin runs 2m. Both inherit Cachegrind's counters as
//! they stood at the fork, so the difference of their totals is m iterations and nothing else: not the load,
//! whose layout check hashes with a seed drawn per process (std's `HashMap` in abi_stable: a few hundred
//! instructions that differ from process to process), nor set-up nor `prepare`. What is left, divided by m, is
//! what this process runs between its two forks (~140 instructions, the same every time) and the clock pair
//! around the batch, whose arithmetic differs by an instruction or two with the times it reads.
//!
//! m is sized on instructions, not time: a first pair with m = 1 counts one iteration, and m is the power of
//! two that makes m iterations about [`COUNTED`] instructions. The same code sizes alike on any machine, at
//! any load; a rig whose iterations cost more after more of them (the allocator warming up, a growing log)
//! then counts the same from run to run. Only iterations that spend their time in the kernel (a sleep, an
//! fsync: few instructions, much time) are held to fewer by the cell's time (`CountTask::most`).

use std::path::Path;

use benchhost_plugin_api::{RigError, Style};

use crate::child::channel::Protocol;
use crate::child::rig::{PluginRig, create, load_in_place, setup_json};
use crate::child::sampler::Measure;
use crate::proc::protocol::{CountTask, Message, Phase};

/// Instructions of the m iterations counted: ~0.1 s of native time here, a second or two under Cachegrind.
pub const COUNTED: u64 = 50_000_000;

/// Runs the count, speaking the protocol: [`Message::Counted`] carries m and the two forks' totals.
pub(super) fn run(task: &CountTask, out: &mut Protocol) {
    // Before any plugin code runs: the set-up's hash seeds and UUIDs shape the heap the forks iterate on.
    super::fixed::fix();
    out.send(&Message::Phase { phase: Phase::Load });
    // The load and the set-up's JSON on a thread of their own, in a heap arena of their own (as the task was
    // read): the main heap, where the rig allocates and the forks iterate, then holds the same as in any other
    // count of the same code. Where the rig's buffers land decides the path alignment-dependent code takes (a
    // memcpy): a task line a few bytes longer, or a library at a longer path, moved the count of the ingest rig's
    // metrics conversion by 1% when the main heap held them.
    let loaded = std::thread::scope(|s| {
        s.spawn(|| (load_in_place(&task.cell, &mut |m| out.send(&m)), setup_json(&task.cell, true))).join()
    });
    let (root, [params, ctx]) = match loaded {
        Ok((Ok((_, Style::Run)), _)) => {
            return out.error(Phase::Load, RigError::unsupported("instruction counts are not for run-style rigs"));
        }
        Ok((Ok((root, Style::Iterations)), json)) => (root, json),
        Ok((Err((phase, err)), _)) => return out.error(phase, err),
        Err(_) => return out.error(Phase::Load, RigError::new("the thread loading the plugin panicked")),
    };
    out.send(&Message::Phase { phase: Phase::Setup });
    let created = create(&root, &task.cell.rig, &params, &ctx);
    // Freed here, they would go to this thread's cache and be handed to the rig: kept until the process ends.
    std::mem::forget((params, ctx));
    let mut rig = match created {
        Ok(rig) => rig,
        Err(err) => return out.error(Phase::Setup, err),
    };
    out.send(&Message::Phase { phase: Phase::Measure });
    let threads = threads();
    // A fork keeps only the thread that forks: a rig with threads of its own cannot be counted this way.
    if threads != Some(1) {
        return out.send(&Message::Counted { threads, iterations: 0, totals: None });
    }
    let counted = pair(&mut rig, 1, &task.totals, out).and_then(|[one, two]| {
        let m = iterations(two.saturating_sub(one), &task.near).min(task.most.max(1));
        pair(&mut rig, m, &task.totals, out).map(|totals| (m, totals))
    });
    match counted {
        Ok((iterations, totals)) => out.send(&Message::Counted { threads, iterations, totals: Some(totals) }),
        Err(Ended::Failed(why)) => out.error(Phase::Measure, RigError::new(why)),
        // The rig's own error, sent by the fork itself.
        Err(Ended::Reported) => {}
        Err(Ended::Signaled(signal)) => die_of(signal),
    }
}

/// m for iterations of `per_iteration` instructions: a power of two near [`COUNTED`] instructions in all, or
/// one of `near` when it is within a factor of 4 of that.
pub fn iterations(per_iteration: u64, near: &[u64]) -> u64 {
    let wanted = (COUNTED / per_iteration.max(1)).clamp(1, 1 << 40);
    let wanted: u64 = 1 << (63 - wanted.leading_zeros());
    near.iter().copied().find(|&m| m <= wanted.saturating_mul(4) && wanted <= m.saturating_mul(4)).unwrap_or(wanted)
}

/// How a fork did not count.
enum Ended {
    /// It could not be made, waited for or read.
    Failed(String),
    /// The rig failed in it, and it said so on the protocol.
    Reported,
    /// It died of this signal.
    Signaled(i32),
}

/// Prepares 2`m` inputs, then forks one process that runs `m` iterations and one that runs 2`m`; their totals.
fn pair(rig: &mut PluginRig, m: u64, totals: &Path, out: &mut Protocol) -> Result<[u64; 2], Ended> {
    rig.prepare(2 * m).map_err(|err| {
        out.error(Phase::Measure, err);
        Ended::Reported
    })?;
    let forks = [m, 2 * m].map(|n| fork(rig, n, out));
    let mut counted = [0; 2];
    for (index, (total, fork)) in counted.iter_mut().zip(forks).enumerate() {
        let pid = fork.and_then(wait)?;
        // Read on a thread of its own: the file's length (it holds counts) must not shape the main heap.
        let read = std::thread::scope(|s| s.spawn(|| read_total(totals, pid, index)).join());
        *total = read.unwrap_or_else(|_| Err(Ended::Failed("the thread reading the totals panicked".into())))?;
    }
    Ok(counted)
}

/// Forks a process that runs `n` iterations and exits; its pid.
fn fork(rig: &mut PluginRig, n: u64, out: &mut Protocol) -> Result<libc::pid_t, Ended> {
    // SAFETY: this process has one thread (checked before the first pair), so the fork may run any code.
    match unsafe { libc::fork() } {
        -1 => Err(Ended::Failed(format!("fork: {}", std::io::Error::last_os_error()))),
        0 => {
            let code = match rig.measure(n) {
                Ok(_) => 0,
                Err(err) => {
                    out.error(Phase::Measure, err);
                    REPORTED
                }
            };
            // SAFETY: ends this fork at once, as intended.
            unsafe { libc::_exit(code) }
        }
        pid => Ok(pid),
    }
}

/// The exit code of a fork whose rig failed and said so.
const REPORTED: i32 = 3;

/// Waits for the fork `pid` to exit cleanly.
fn wait(pid: libc::pid_t) -> Result<libc::pid_t, Ended> {
    let mut status = 0;
    // SAFETY: waits for our own child.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(Ended::Failed(format!("waiting for the counting fork: {err}")));
        }
    }
    match (libc::WIFSIGNALED(status), libc::WEXITSTATUS(status)) {
        (true, _) => Err(Ended::Signaled(libc::WTERMSIG(status))),
        (false, 0) => Ok(pid),
        (false, REPORTED) => Err(Ended::Reported),
        (false, code) => Err(Ended::Failed(format!("the counting fork exited with code {code}"))),
    }
}

/// The instructions the fork `pid` executed in all, from the `summary:` line Cachegrind wrote at its exit. The
/// file is kept as [`CountTask::LAST`]`[index]` (the short fork's, then the long one's): those of the last pair are the
/// counted iterations', whose functions the host reads.
fn read_total(totals: &Path, pid: libc::pid_t, index: usize) -> Result<u64, Ended> {
    let file = totals.join(format!("cachegrind.{pid}"));
    let text = std::fs::read_to_string(&file)
        .map_err(|e| Ended::Failed(format!("reading {} (is this process under Cachegrind?): {e}", file.display())))?;
    let _ = std::fs::rename(&file, totals.join(CountTask::LAST[index]));
    summary(&text).ok_or_else(|| Ended::Failed(format!("{} has no `summary:` line", file.display())))
}

/// The total of a Cachegrind output file.
pub fn summary(text: &str) -> Option<u64> {
    text.lines().find_map(|l| l.strip_prefix("summary:")).and_then(|n| n.split_whitespace().next()?.parse().ok())
}

/// Dies of `signal`, as the fork that ran the iterations did, so the parent names the crash as it would any
/// cell's.
fn die_of(signal: i32) -> ! {
    // SAFETY: restores the default action and raises the signal on this process.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
        libc::_exit(128 + signal)
    }
}

/// Threads of this process: entries of `/proc/self/task`.
fn threads() -> Option<u64> {
    Some(std::fs::read_dir("/proc/self/task").ok()?.count() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m_is_a_power_of_two_sized_on_instructions_or_a_near_one_already_used() {
        assert_eq!(iterations(31, &[]), 1 << 20, "50M / 31 = 1.6M: 2^20");
        assert_eq!(iterations(8_000_000, &[]), 4);
        assert_eq!(iterations(u64::MAX, &[]), 1, "never zero");
        assert_eq!(iterations(0, &[]), 1 << 25, "a free iteration is bounded too");
        assert_eq!(iterations(8_000_000, &[16, 2]), 16, "the first one within 4x");
        assert_eq!(iterations(8_000_000, &[64]), 4, "64 is 16x: this cell's own");
    }

    #[test]
    fn the_total_is_read_from_the_summary_line() {
        assert_eq!(
            summary("desc: I1 cache:\ncmd: x\nevents: Ir\nfl=a.rs\n1 5\nsummary: 120127019\n"),
            Some(120_127_019)
        );
        assert_eq!(summary("events: Ir\n"), None);
    }
}
