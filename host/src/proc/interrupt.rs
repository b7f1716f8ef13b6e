//! Ctrl-C, SIGTERM and SIGHUP while cells run. The first signal kills the running cell's process group at
//! once (from the handler: `kill` is async-signal-safe) and is noted; the runner then removes that cell's
//! scratch directory, writes no record for it (it is half done), and ends the command with 128 + the signal,
//! naming the cell. Records written before stay: each is one whole line. A second signal ends the process
//! immediately. Signals are named here for every message (`SIGSEGV`, `signal 42`).

use std::sync::atomic::{AtomicI32, Ordering};

/// The first signal received, or 0.
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// The process groups of the cells (or probes) running now, or 0: two at most (`--pairing concurrent`).
static GROUPS: [AtomicI32; 2] = [AtomicI32::new(0), AtomicI32::new(0)];

/// The process group of a command benchhost runs on the user's behalf (`bisect`'s cargo and `run`), or 0: it
/// gets the same signal, to end as it ends on Ctrl-C (a `run` keeps its records), rather than SIGKILL.
static FORWARD: AtomicI32 = AtomicI32::new(0);

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Installs the handler; called by the commands that run cells.
pub fn install() {
    for signal in SIGNALS {
        // Safety: a handler that only touches atomics and calls async-signal-safe functions.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

extern "C" fn on_signal(signal: libc::c_int) {
    if RECEIVED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst).is_err() {
        // Safety: _exit is async-signal-safe.
        unsafe { libc::_exit(128 + signal) };
    }
    for slot in &GROUPS {
        let group = slot.load(Ordering::SeqCst);
        if group > 0 {
            // Safety: kill is async-signal-safe; the group is a running cell's.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
    }
    let group = FORWARD.load(Ordering::SeqCst);
    if group > 0 {
        // Safety: kill is async-signal-safe; the group is a command's that benchhost waits for.
        unsafe { libc::kill(-group, signal) };
    }
}

/// The signal that interrupted the command, if one did.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// `group` is a process group to kill on a signal, until [`leave`]. With both slots taken (never: at most two
/// cells run at once) the watch's own poll of [`received`] still kills it within 100 ms.
pub fn enter(group: libc::pid_t) {
    let _ = GROUPS.iter().find(|slot| slot.compare_exchange(0, group, Ordering::SeqCst, Ordering::SeqCst).is_ok());
}

/// `group` gets the signal benchhost gets, until [`leave`]: a command benchhost runs and waits for.
pub fn forward(group: libc::pid_t) {
    FORWARD.store(group, Ordering::SeqCst);
}

/// Process group `group` is not running any more.
pub fn leave(group: libc::pid_t) {
    for slot in &GROUPS {
        let _ = slot.compare_exchange(group, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
    let _ = FORWARD.compare_exchange(group, 0, Ordering::SeqCst, Ordering::SeqCst);
}

/// The command was interrupted while `cell` ran: its error, which `main` turns into exit code 128 + signal.
#[derive(Debug)]
pub struct Interrupted {
    /// The signal.
    pub signal: i32,
    /// What was running: the cell's label, or another step.
    pub during: String,
    /// Records written before the signal, and where.
    pub kept: String,
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = signal_name(self.signal);
        write!(f, "interrupted by {name} during {}: its record was not written; {}", self.during, self.kept)
    }
}

impl std::error::Error for Interrupted {}

impl Interrupted {
    /// 128 + the signal, as shells report a process a signal ended.
    pub fn exit_code(&self) -> u8 {
        (128 + self.signal).clamp(0, 255) as u8
    }
}

/// Name of a signal, e.g. `SIGSEGV`.
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGSYS => "SIGSYS",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGHUP => "SIGHUP",
        _ => return format!("signal {signal}"),
    };
    name.to_string()
}
