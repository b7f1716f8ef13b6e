//! An instruction count (`run --instructions`), run under Valgrind by the parent: load, set up, prepare the
//! inputs of 2m iterations, then fork twice. One fork runs m iterations, the other 2m, and each exits at once
//! (`_exit`: no teardown, no drop, no exit handlers, whose cost may grow with the iterations). Both inherit
//! Cachegrind's counters as they stood at the fork, so the difference of their totals is m iterations and
//! nothing else: not the load, whose layout check hashes with a seed drawn per process (std's `HashMap` in
//! abi_stable: a few hundred instructions that differ from process to process), nor set-up nor `prepare`.
//! What is left is the clock pair around the batch, whose arithmetic differs by an instruction or two with
//! the times it reads.

use benchhost_plugin_api::{RigError, Style};

use super::sampler::Measure;
use super::{PluginRig, Protocol, load, set_up};
use crate::proc::protocol::{CountTask, Message, Phase};

/// Runs the count, speaking the protocol: [`Message::Counted`] names the two forks, whose totals Cachegrind
/// writes to files named by their pids.
pub(super) fn run(task: &CountTask, out: &mut Protocol) {
    out.send(&Message::Phase { phase: Phase::Load });
    let root = match load(&task.cell, &mut |m| out.send(&m)) {
        Ok((_, Style::Run)) => {
            return out.error(Phase::Load, RigError::unsupported("instruction counts are not for run-style rigs"));
        }
        Ok((root, Style::Iterations)) => root,
        Err((phase, err)) => return out.error(phase, err),
    };
    out.send(&Message::Phase { phase: Phase::Setup });
    let mut rig = match set_up(&root, &task.cell) {
        Ok(rig) => rig,
        Err(err) => return out.error(Phase::Setup, err),
    };
    out.send(&Message::Phase { phase: Phase::Measure });
    if let Err(err) = rig.prepare(2 * task.iterations) {
        return out.error(Phase::Measure, err);
    }
    let threads = threads();
    // A fork keeps only the thread that forks: a rig with threads of its own cannot be counted this way.
    if threads != Some(1) {
        return out.send(&Message::Counted { threads, forks: None });
    }
    let forks = [task.iterations, 2 * task.iterations].map(|n| fork(&mut rig, n, out));
    let mut pids = [0u32; 2];
    for (pid, fork) in pids.iter_mut().zip(forks) {
        match fork.and_then(wait) {
            Ok(p) => *pid = p,
            Err(Ended::Failed(why)) => return out.error(Phase::Measure, RigError::new(why)),
            // The rig's own error, sent by the fork itself.
            Err(Ended::Reported) => return,
            Err(Ended::Signaled(signal)) => die_of(signal),
        }
    }
    out.send(&Message::Counted { threads, forks: Some(pids) });
}

/// How a fork did not count.
enum Ended {
    /// It could not be made or waited for.
    Failed(String),
    /// The rig failed in it, and it said so on the protocol.
    Reported,
    /// It died of this signal.
    Signaled(i32),
}

/// Forks a process that runs `n` iterations and exits; its pid.
fn fork(rig: &mut PluginRig, n: u64, out: &mut Protocol) -> Result<libc::pid_t, Ended> {
    // SAFETY: this process has one thread (checked by the caller), so the fork may run any code.
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

/// Waits for the fork `pid` to exit cleanly; its pid.
fn wait(pid: libc::pid_t) -> Result<u32, Ended> {
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
        (false, 0) => Ok(pid as u32),
        (false, REPORTED) => Err(Ended::Reported),
        (false, code) => Err(Ended::Failed(format!("the counting fork exited with code {code}"))),
    }
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
