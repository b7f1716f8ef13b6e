//! Processes that outlive their cell. A cell's child runs in a process group of its own, and killing that
//! group ends everything the rig started, except what left the group: a grandchild that called `setsid()` or
//! `setpgid()` would be re-parented to PID 1 and run on past the deadline, holding the cell's pipes open.
//!
//! So a benchhost that runs cells is a child subreaper (`PR_SET_CHILD_SUBREAPER`, Linux 3.4): whatever a cell
//! leaves behind is re-parented to benchhost instead of PID 1, and [`sweep`] finds it in `/proc`, kills it,
//! reaps it, and names the processes that had left the cell's group, so the record can say so.
//!
//! Two children may run at once (discovery probes two libraries at a time; `--pairing concurrent`), so one
//! child's sweep must never take the other for an orphan. A child is started ([`spawn`]) and a sweep looks
//! at `/proc` under the same lock: a sweep sees every child of ours either registered or not yet forked,
//! never in between (where a probe's child once got a sibling's SIGKILL).

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Children this process started on purpose (cells, probes) and still waits for: never swept.
static SPAWNED: Mutex<BTreeSet<libc::pid_t>> = Mutex::new(BTreeSet::new());

fn spawned() -> MutexGuard<'static, BTreeSet<libc::pid_t>> {
    SPAWNED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes this process the reaper of its orphaned descendants. Called by the commands that run cells.
pub fn become_subreaper() {
    // Safety: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
}

/// Starts `command` as a child never swept, until [`forget`].
pub fn spawn(command: &mut Command) -> std::io::Result<Child> {
    let mut spawned = spawned();
    let child = command.spawn()?;
    spawned.insert(child.id() as libc::pid_t);
    Ok(child)
}

/// `pid` has been reaped by its owner.
pub fn forget(pid: libc::pid_t) {
    spawned().remove(&pid);
}

/// Kills the cell's process `group` and every process re-parented to us from it, reaping them, until none is
/// left or `grace` has passed. The group's leader (the cell's child, pid `group`) has exited and is not reaped
/// yet: its id cannot be reused meanwhile. Returns the processes that had left the group, as `pid N (name)`.
pub fn sweep(group: libc::pid_t, grace: Duration) -> Vec<String> {
    let until = Instant::now() + grace;
    let mut escaped = BTreeMap::new();
    loop {
        let spawned = spawned();
        // Safety: signalling a process group we created.
        unsafe { libc::killpg(group, libc::SIGKILL) };
        // Orphans in the group of another child still running are that child's.
        let adopted =
            adopted_children(&spawned).into_iter().filter(|(_, pgid, _)| *pgid == group || !spawned.contains(pgid));
        let adopted: Vec<_> = adopted.collect();
        for (pid, pgid, name) in &adopted {
            let pid = *pid;
            if *pgid != group {
                escaped.entry(pid).or_insert_with(|| format!("pid {pid} ({name})"));
            }
            // Safety: killing and reaping a process that is our child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
            }
        }
        drop(spawned);
        if (adopted.is_empty() && !has_members(group)) || Instant::now() >= until {
            return escaped.into_values().collect();
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Whether a process other than the group's (exited) leader is still in `group`.
fn has_members(group: libc::pid_t) -> bool {
    processes().any(|(pid, _, pgid, _)| pgid == group && pid != group)
}

/// Every process: (pid, parent, process group, name).
fn processes() -> impl Iterator<Item = (libc::pid_t, libc::pid_t, libc::pid_t, String)> {
    let entries = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    entries.filter_map(|e| {
        let pid = e.file_name().to_str()?.parse::<libc::pid_t>().ok()?;
        let (ppid, pgid, name) = parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)?;
        Some((pid, ppid, pgid, name))
    })
}

/// Our children that we did not start (`spawned`), nor started outside [`spawn`] in our own process group
/// (a `git` for the provenance): (pid, process group, name).
fn adopted_children(spawned: &BTreeSet<libc::pid_t>) -> Vec<(libc::pid_t, libc::pid_t, String)> {
    // Safety: getpid and getpgrp cannot fail.
    let (me, my_group) = unsafe { (libc::getpid(), libc::getpgrp()) };
    processes()
        .filter(|(pid, ppid, pgid, _)| *ppid == me && !spawned.contains(pid) && *pgid != my_group)
        .map(|(pid, _, pgid, name)| (pid, pgid, name))
        .collect()
}

/// Parent pid, process group and name from `/proc/PID/stat`: `pid (name) state ppid pgrp ...`, where the
/// name may itself hold spaces and parentheses, so the fields are read after the last `)`.
fn parse_stat(stat: &str) -> Option<(libc::pid_t, libc::pid_t, String)> {
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let name = stat.get(open + 1..close)?.to_string();
    let mut fields = stat.get(close + 1..)?.split_whitespace();
    let _state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    Some((ppid, pgid, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn a_child_started_while_another_child_is_swept_is_not_taken_for_an_orphan() {
        // regression: a sweep read the registered children, then `/proc`; a probe started in between (discovery
        // runs two at a time) was killed as an orphan, and its library reported as `crashed while loading (SIGKILL)`.
        let no_group = 2_000_000_000; // above any pid_max: the sweep's killpg finds no one
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !stop.load(Ordering::SeqCst) {
                    sweep(no_group, Duration::ZERO);
                }
            });
            let mut killed = 0;
            for _ in 0..60 {
                let mut child = spawn(Command::new("sleep").arg("5").process_group(0)).unwrap();
                std::thread::sleep(Duration::from_millis(10));
                if !matches!(child.try_wait(), Ok(None)) {
                    killed += 1;
                }
                let _ = child.kill();
                let _ = child.wait();
                forget(child.id() as libc::pid_t);
            }
            stop.store(true, Ordering::SeqCst);
            assert_eq!(killed, 0, "children killed by a sweep meant for another");
        });
    }

    #[test]
    fn stat_fields_are_read_after_the_name_whatever_it_holds() {
        let stat = "4242 (my (odd) name) S 17 4242 4242 0 -1 4194560 110 0 0 0";
        assert_eq!(parse_stat(stat), Some((17, 4242, "my (odd) name".to_string())));
        assert_eq!(parse_stat("garbage"), None);
    }
}
