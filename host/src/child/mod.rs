//! The child process (`benchhost __child`): opens the plugin (the only place that does), and measures one cell
//! or probes one library, speaking the protocol on its original stdout.
//!
//! Before any plugin code runs, fd 1 is pointed at stderr, so whatever a rig prints goes to the cell log and can
//! never corrupt the protocol.

use std::fs::File;
use std::io::{BufRead, Write};
use std::os::fd::FromRawFd;
use std::time::Instant;

use abi_stable::std_types::{RResult, RStr};
use benchhost_plugin_api::abi::{PluginRef, RigBox, decode_error};
use benchhost_plugin_api::{Observation, Outcome, RigError, SetupContext, Style};

use crate::plugin::library;
use crate::proc::protocol::{CellTask, Message, Phase, Task};
use sampler::Measure;

mod count;
mod duel;
mod heap;
pub(crate) mod sampler;

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
        Ok(Task::Probe { path, pin }) => match library::open(&path, pin.as_deref()) {
            Ok(opened) => out.send(&Message::Plugin { info: opened.info, sha256: Some(opened.sha256) }),
            Err(reason) => out.send(&Message::Rejected { reason }),
        },
        Ok(Task::Cell(task)) => run_cell(&task, &mut out),
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

fn run_cell(task: &CellTask, out: &mut Protocol) {
    out.send(&Message::Phase { phase: Phase::Load });
    if let Some(Err(e)) = task.cpu.map(crate::proc::cpus::pin) {
        return out.error(Phase::Load, RigError::new(format!("pinning to core {}: {e}", task.cpu.unwrap_or(0))));
    }
    if let Some(Err(e)) = task.plan.memory_limit.map(heap::limit) {
        return out.error(Phase::Load, RigError::new(format!("setting the memory limit: {e}")));
    }
    let (root, style) = match load(task, &mut |m| out.send(&m)) {
        Ok(loaded) => loaded,
        Err((phase, err)) => return out.error(phase, err),
    };
    out.send(&Message::Phase { phase: Phase::Setup });
    let mut rig = match set_up(&root, task) {
        Ok(rig) => rig,
        Err(err) => return out.error(Phase::Setup, err),
    };

    let faults_before = heap::minor_faults();
    let mut emit = |m: Message| out.send(&m);
    let measured = match style {
        Style::Iterations => sampler::iterations(&mut rig, &task.plan, &mut emit),
        Style::Run => sampler::repetitions(&mut rig, &task.plan, &mut emit),
    };
    if let (Some(before), Some(after)) = (faults_before, heap::minor_faults()) {
        out.send(&Message::PageFaults { minor: after - before });
    }
    if let Err((phase, err)) = measured {
        return out.error(phase, err);
    }

    out.send(&Message::Phase { phase: Phase::Teardown });
    match tear_down(rig) {
        Ok(message) => out.send(&message),
        Err(err) => out.error(Phase::Teardown, err),
    }
}

/// Opens `task`'s library (sending its [`Message::Plugin`]); its root module and the rig's style.
fn load(task: &CellTask, send: &mut dyn FnMut(Message)) -> Result<(PluginRef, Style), (Phase, RigError)> {
    let library::Opened { root, info, sha256 } =
        library::open(&task.plugin_path, task.pin.as_deref()).map_err(|reason| (Phase::Load, RigError::new(reason)))?;
    let Some(style) = info.rigs.iter().find(|d| d.name == task.rig).map(|d| d.style) else {
        let message = format!("{} has no rig `{}`", task.plugin_path.display(), task.rig);
        return Err((Phase::Load, RigError::new(message)));
    };
    send(Message::Plugin { info, sha256: Some(sha256) });
    Ok((root, style))
}

/// The rig of `task`, set up.
fn set_up(root: &PluginRef, task: &CellTask) -> Result<PluginRig, RigError> {
    let [params, ctx] = setup_json(task);
    create(root, &task.rig, &params, &ctx)
}

/// What `setup` is given: the parameters and the [`SetupContext`], as JSON.
fn setup_json(task: &CellTask) -> [String; 2] {
    let ctx = SetupContext { scratch_dir: task.scratch_dir.clone(), quick: task.quick };
    [
        serde_json::to_string(&task.params).expect("params serialize"),
        serde_json::to_string(&ctx).expect("context serializes"),
    ]
}

/// The rig `name` of `root`, set up with `params` and `ctx` (JSON).
fn create(root: &PluginRef, name: &str, params: &str, ctx: &str) -> Result<PluginRig, RigError> {
    let created = (root.new_rig())(RStr::from(name), RStr::from(params), RStr::from(ctx));
    match created {
        RResult::ROk(rig) => Ok(PluginRig(rig)),
        RResult::RErr(err) => Err(decode_error(&err)),
    }
}

/// Tears `rig` down; its outcome as a message.
fn tear_down(mut rig: PluginRig) -> Result<Message, RigError> {
    let json = rig.0.teardown().into_result().map_err(|e| decode_error(&e))?;
    let outcome = serde_json::from_str::<Outcome>(json.as_str())
        .map_err(|e| RigError::new(format!("undecodable outcome: {e}")))?;
    Ok(Message::Outcome { counters: outcome.counters, note: outcome.note })
}

pub(crate) struct PluginRig(RigBox);

impl Measure for PluginRig {
    fn prepare(&mut self, n: u64) -> Result<(), RigError> {
        self.0.prepare(n).into_result().map_err(|e| decode_error(&e))
    }

    fn measure(&mut self, n: u64) -> Result<u64, RigError> {
        self.0.measure(n).into_result().map_err(|e| decode_error(&e))
    }

    fn run(&mut self) -> Result<(Observation, u64), RigError> {
        let start = Instant::now();
        let json = self.0.run().into_result().map_err(|e| decode_error(&e))?;
        let ns = start.elapsed().as_nanos() as u64;
        let observation =
            serde_json::from_str(json.as_str()).map_err(|e| RigError::new(format!("undecodable observation: {e}")))?;
        Ok((observation, ns))
    }
}

/// The protocol channel: the original stdout.
pub(crate) struct Protocol {
    file: File,
}

impl Protocol {
    fn take_stdout() -> std::io::Result<Protocol> {
        // Safety: plain fd juggling before any other thread exists: keep a private copy of fd 1 for the
        // protocol, then make fd 1 a copy of fd 2 (the cell log).
        unsafe {
            let fd = libc::dup(1);
            if fd < 0 || libc::dup2(2, 1) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            Ok(Protocol { file: File::from_raw_fd(fd) })
        }
    }

    pub(crate) fn send(&mut self, message: &Message) {
        let mut line = serde_json::to_string(message).expect("messages serialize");
        line.push('\n');
        // If the parent is gone there is nobody to tell; the parent classifies what it saw.
        let _ = self.file.write_all(line.as_bytes());
    }

    pub(crate) fn error(&mut self, phase: Phase, err: RigError) {
        self.send(&Message::Error { phase, kind: err.kind, message: err.message });
    }
}
