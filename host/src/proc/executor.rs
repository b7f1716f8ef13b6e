//! Runs one child process and watches it: streams its protocol messages as they arrive, enforces the
//! deadline (killing the child's whole process group), keeps its stderr in a capped log and a short tail,
//! and reads its exit status and peak RSS with `wait4`.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::proc::protocol::{self, MAX_LINE, Message, Task};

/// How the child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// Exited with this code.
    Exited(i32),
    /// Killed by this signal (not by us).
    Signaled(i32),
    /// Still running at the deadline; we killed it.
    Deadline,
    /// Spoke something other than the protocol; we killed it.
    Violation(String),
    /// Could not be started.
    SpawnFailed(String),
    /// benchhost received this signal (Ctrl-C, SIGTERM) while the child ran; we killed it.
    Interrupted(i32),
}

/// Everything the parent saw of one child.
#[derive(Debug, Clone)]
pub struct ChildRun {
    /// Protocol messages after the hello, in order.
    pub messages: Vec<Message>,
    /// How it ended.
    pub end: End,
    /// Last lines of its stderr.
    pub stderr_tail: Vec<String>,
    /// Peak resident set, KiB.
    pub peak_rss_kib: Option<u64>,
    /// Wall time from spawn to exit.
    pub wall: Duration,
    /// Processes that had left the child's process group (`setsid`) and outlived it, as `pid N (name)`;
    /// all were killed when the cell ended.
    pub escaped: Vec<String>,
}

/// Where a child's stderr goes, and how much of it is kept.
pub const LOG_CAP: u64 = 8 << 20;
const TAIL_LINES: usize = 20;
const TAIL_BYTES: usize = 16 << 10;
/// After the child exits, how long to wait for the rest of its output.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

enum Event {
    Line(Result<String, String>),
    Eof,
    Exit { status: i32, peak_rss_kib: u64, escaped: Vec<String> },
}

/// Runs `exe __child` with `task`, calling `on_message` for each message as it arrives.
pub fn run_child(
    exe: &Path,
    task: &Task,
    deadline: Duration,
    log: Option<&Path>,
    on_message: &mut dyn FnMut(&Message),
) -> ChildRun {
    run_child_under(&[], exe, task, deadline, log, on_message)
}

/// [`run_child`] with `exe __child` run by a tool: `wrapper` is its command line up to the program it runs
/// (e.g. `valgrind --tool=cachegrind ...`), which runs in the child's own pid.
pub fn run_child_under(
    wrapper: &[std::ffi::OsString],
    exe: &Path,
    task: &Task,
    deadline: Duration,
    log: Option<&Path>,
    on_message: &mut dyn FnMut(&Message),
) -> ChildRun {
    let start = Instant::now();
    let mut command = match wrapper.split_first() {
        Some((tool, options)) => {
            let mut command = Command::new(tool);
            command.args(options).arg(exe);
            command
        }
        None => Command::new(exe),
    };
    command
        .arg("__child")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a deadline kills grandchildren too.
        .process_group(0);
    crate::proc::child_env::apply(&mut command);
    let spawned = crate::proc::reaper::spawn(&mut command);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            let program = wrapper.first().map_or(exe.display().to_string(), |t| t.to_string_lossy().into_owned());
            return failed_spawn(format!("starting {program}: {e}"));
        }
    };
    let pid = child.id() as libc::pid_t;
    crate::proc::interrupt::enter(pid);
    let task_line = serde_json::to_string(task).expect("tasks serialize") + "\n";
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(task_line.as_bytes());
    }
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let lines_tx = tx.clone();
    thread::spawn(move || read_lines(stdout, lines_tx));
    let log = log.map(Path::to_owned);
    let (tail_tx, tail_rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tail_tx.send(capture_stderr(stderr, log));
    });
    thread::spawn(move || reap(pid, tx));
    // `child` is never waited on through std: `reap` owns the wait, to get the rusage with the status.
    drop(child);

    let mut watch = Watch {
        pid,
        messages: vec![],
        saw_hello: false,
        violation: None,
        status: None,
        rss: None,
        eof: false,
        drain_until: None,
        escaped: vec![],
    };
    watch.follow(&rx, start + deadline, on_message);
    crate::proc::interrupt::leave(pid);
    // Bounded like every other wait: a process that left the cell's group may still hold its stderr open.
    let stderr_tail = tail_rx.recv_timeout(DRAIN_GRACE).unwrap_or_else(|_| {
        vec!["[benchhost: stderr still held open by a process outside the cell; tail not collected]".into()]
    });
    let end = if let Some(v) = watch.violation {
        v
    } else {
        match watch.status {
            Some(status) if libc::WIFSIGNALED(status) => End::Signaled(libc::WTERMSIG(status)),
            Some(status) => End::Exited(libc::WEXITSTATUS(status)),
            None => End::Deadline,
        }
    };
    ChildRun {
        messages: watch.messages,
        end,
        stderr_tail,
        peak_rss_kib: watch.rss,
        wall: start.elapsed(),
        escaped: watch.escaped,
    }
}

struct Watch {
    pid: libc::pid_t,
    messages: Vec<Message>,
    saw_hello: bool,
    violation: Option<End>,
    status: Option<i32>,
    rss: Option<u64>,
    eof: bool,
    /// Once the child exited or was killed: how long to keep listening.
    drain_until: Option<Instant>,
    /// Processes that had left the child's group, killed when it ended.
    escaped: Vec<String>,
}

/// How often the watch looks for a signal that arrived before the handler knew the child's group.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

impl Watch {
    fn follow(&mut self, rx: &mpsc::Receiver<Event>, deadline: Instant, on_message: &mut dyn FnMut(&Message)) {
        while !(self.eof && self.status.is_some()) {
            if let Some(signal) = crate::proc::interrupt::received().filter(|_| self.status.is_none()) {
                self.kill(End::Interrupted(signal));
            }
            let until = self.drain_until.unwrap_or(deadline);
            let wait = until.saturating_duration_since(Instant::now());
            let event = match rx.recv_timeout(wait.min(SIGNAL_POLL)) {
                Ok(event) => event,
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < until => continue,
                // The deadline passed: kill the group, then give the exit status a bounded time to arrive.
                Err(_) if self.drain_until.is_none() => {
                    self.kill(End::Deadline);
                    continue;
                }
                // Killed or exited, and the grace ran out (a grandchild holding the pipe, an unkillable
                // process): stop listening rather than hang the run.
                Err(_) => break,
            };
            match event {
                Event::Line(Ok(line)) => self.line(&line, on_message),
                Event::Line(Err(e)) => self.kill(End::Violation(e)),
                Event::Eof => self.eof = true,
                Event::Exit { status, peak_rss_kib, escaped } => {
                    self.status = Some(status);
                    self.rss = Some(peak_rss_kib);
                    self.escaped = escaped;
                    self.drain_until.get_or_insert(Instant::now() + DRAIN_GRACE);
                }
            }
        }
    }

    fn line(&mut self, line: &str, on_message: &mut dyn FnMut(&Message)) {
        if self.violation.is_some() {
            return;
        }
        if !self.saw_hello {
            match protocol::decode_hello(line) {
                Ok(()) => self.saw_hello = true,
                Err(e) => self.kill(End::Violation(e)),
            }
            return;
        }
        match protocol::decode(line) {
            Ok(message) => {
                on_message(&message);
                self.messages.push(message);
            }
            Err(e) => self.kill(End::Violation(e)),
        }
    }

    fn kill(&mut self, why: End) {
        if self.violation.is_none() && self.status.is_none() {
            self.violation = Some(why);
        }
        self.drain_until.get_or_insert(Instant::now() + DRAIN_GRACE);
        // Safety: signalling our own child's process group.
        unsafe { libc::killpg(self.pid, libc::SIGKILL) };
    }
}

fn read_lines(stdout: impl Read, tx: mpsc::Sender<Event>) {
    let mut reader = BufReader::new(stdout);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) if buf.len() > MAX_LINE => {
                let _ = tx.send(Event::Line(Err(format!("a protocol line longer than {MAX_LINE} bytes"))));
                break;
            }
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf).trim_end().to_string();
                if tx.send(Event::Line(Ok(line))).is_err() {
                    break;
                }
            }
        }
    }
    let _ = tx.send(Event::Eof);
}

/// What a dying Rust runtime writes before it aborts. Failures are named from it, and a backtrace
/// (`RUST_BACKTRACE`) printed after it can scroll it out of the last lines, so it is looked for in the whole
/// kept tail (16 KiB: a backtrace is a few KiB).
const FATAL_REPORTS: [&str; 2] = [OUT_OF_MEMORY_REPORT, STACK_OVERFLOW_REPORT];

/// How Rust's runtime begins its report of a failed allocation (then it aborts).
pub const OUT_OF_MEMORY_REPORT: &str = "memory allocation of";
/// What Rust's guard-page handler says of a stack overflow (then it aborts).
pub const STACK_OVERFLOW_REPORT: &str = "has overflowed its stack";

/// Copies the child's stderr to `log` (capped) and returns its last lines, led by the runtime's fatal report
/// if one scrolled out of them.
fn capture_stderr(mut stderr: impl Read, log: Option<PathBuf>) -> Vec<String> {
    let mut file = CappedLog::new(log.and_then(|p| File::create(p).ok()));
    let mut tail = VecDeque::with_capacity(TAIL_BYTES);
    let mut chunk = [0u8; 8192];
    while let Ok(n) = stderr.read(&mut chunk) {
        if n == 0 {
            break;
        }
        file.write(&chunk[..n]);
        tail.extend(&chunk[..n]);
        let excess = tail.len().saturating_sub(TAIL_BYTES);
        tail.drain(..excess);
    }
    let text = String::from_utf8_lossy(tail.make_contiguous()).into_owned();
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut last = lines[lines.len().saturating_sub(TAIL_LINES)..].to_vec();
    let fatal = lines.iter().rfind(|l| FATAL_REPORTS.iter().any(|r| l.contains(r)));
    if let Some(fatal) = fatal.filter(|f| !last.contains(f)) {
        last.insert(0, fatal.clone());
    }
    last
}

/// What a cell log says where it was cut.
fn truncated_marker() -> String {
    format!("\n[benchhost: log truncated at {} MiB]\n", LOG_CAP >> 20)
}

/// A log that keeps the first [`LOG_CAP`] bytes and then says, once, that it was cut.
struct CappedLog<W: Write> {
    out: Option<W>,
    written: u64,
    truncated: bool,
}

impl<W: Write> CappedLog<W> {
    fn new(out: Option<W>) -> Self {
        CappedLog { out, written: 0, truncated: false }
    }

    fn write(&mut self, bytes: &[u8]) {
        let Some(out) = self.out.as_mut().filter(|_| !self.truncated) else { return };
        let room = LOG_CAP.saturating_sub(self.written) as usize;
        let kept = bytes.len().min(room);
        let _ = out.write_all(&bytes[..kept]);
        self.written += kept as u64;
        // The marker goes in whenever bytes are dropped, also when the log was full to the byte before.
        if kept < bytes.len() {
            let _ = out.write_all(truncated_marker().as_bytes());
            self.truncated = true;
        }
    }
}

/// Waits for the child to exit, then, while it is still an unreaped zombie (so its pid, which is also its
/// group's id, cannot be handed to another process), kills its process group and whatever left it, and only
/// then reaps it, with its rusage.
fn reap(pid: libc::pid_t, tx: mpsc::Sender<Event>) {
    loop {
        // Safety: siginfo is plain old data, filled by the kernel.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r == 0 {
            break;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
    // Leftover grandchildren die with the cell, also those that left its process group.
    let escaped = crate::proc::reaper::sweep(pid, DRAIN_GRACE);
    crate::proc::interrupt::leave(pid);
    let mut status = 0;
    // Safety: rusage is plain old data, filled by the kernel.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            crate::proc::reaper::forget(pid);
            break;
        }
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
    let _ = tx.send(Event::Exit { status, peak_rss_kib: usage.ru_maxrss.max(0) as u64, escaped });
}

/// What a child that could not be started leaves: `why`, and nothing else.
pub fn failed_spawn(why: String) -> ChildRun {
    ChildRun {
        messages: vec![],
        end: End::SpawnFailed(why),
        stderr_tail: vec![],
        peak_rss_kib: None,
        wall: Duration::ZERO,
        escaped: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_cut_exactly_at_the_cap_still_says_it_was_cut() {
        // regression: `if n > room && room > 0` skipped the marker when a chunk ended exactly at 8 MiB.
        let mut log = CappedLog::new(Some(Vec::new()));
        for _ in 0..LOG_CAP / 8192 {
            log.write(&[b'x'; 8192]);
        }
        assert_eq!(log.out.as_ref().unwrap().len() as u64, LOG_CAP, "full, nothing dropped yet, no marker");
        log.write(b"one more line\n");
        log.write(b"and another\n");
        let text = log.out.unwrap();
        assert_eq!(&text[LOG_CAP as usize..], truncated_marker().as_bytes(), "the marker, once, after the cap");
    }

    #[test]
    fn a_chunk_that_crosses_the_cap_is_cut_and_marked() {
        let mut log = CappedLog::new(Some(Vec::new()));
        log.write(&vec![b'y'; LOG_CAP as usize - 3]);
        log.write(b"abcdef");
        let text = log.out.unwrap();
        assert!(text.ends_with(&[b"abc".as_slice(), truncated_marker().as_bytes()].concat()));
    }
}
