//! The child process (`benchhost __child`): opens the plugin (the only place that does), and measures one cell
//! or probes one library, speaking the protocol on its original stdout.
//!
//! Before any plugin code runs, fd 1 is pointed at stderr, so whatever a rig prints goes to the cell log and can
//! never corrupt the protocol.

use std::io::BufRead;

use crate::plugin::library;
use crate::proc::protocol::{Message, Task};

mod cell;
mod channel;
mod count;
mod duel;
mod fixed;
mod heap;
mod idle;
mod rig;
pub(crate) mod sampler;

use channel::Protocol;

/// Runs the child. Returns the process exit code.
pub fn main() -> i32 {
    heap::settle();
    let mut out = match Protocol::take_stdout() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("benchhost child: cannot set up the protocol channel: {e}");
            return 3;
        }
    };
    out.send(&Message::hello());
    // Read and decoded on a thread of its own: glibc gives that thread a heap arena of its own, so the task's
    // size never shapes the main heap, where a count's rig lives (see `count.rs`).
    let task = std::thread::scope(|s| s.spawn(read_task).join().unwrap_or_else(|_| Err("panicked".into())));
    match task {
        Ok(Task::Probe { path, pin }) => match library::open(&path, pin.as_deref(), library::Load::InPlace) {
            Ok(opened) => out.send(&Message::Plugin { info: opened.info, sha256: Some(opened.sha256) }),
            Err(reason) => out.send(&Message::Rejected { reason }),
        },
        Ok(Task::Cell(task)) => cell::run(&task, &mut out),
        Ok(Task::Duel(task)) => duel::run(&task, &mut out),
        Ok(Task::Count(task)) => count::run(&task, &mut out),
        Err(e) => {
            eprintln!("benchhost child: {e}");
            return 3;
        }
    }
    out.send(&Message::Done);
    0
}

/// The task, from its line on stdin.
fn read_task() -> Result<Task, String> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).map_err(|e| format!("reading the task: {e}"))?;
    serde_json::from_str(&line).map_err(|e| format!("undecodable task: {e}"))
}
