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
use benchhost_plugin_api::abi::{RigBox, decode_error};
use benchhost_plugin_api::{Observation, Outcome, RigError, SetupContext, Style};

use crate::plugin::library;
use crate::proc::protocol::{CellTask, Message, Phase, Task};
use sampler::Measure;

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
    let mut line = String::new();
    if let Err(e) = std::io::stdin().lock().read_line(&mut line) {
        eprintln!("benchhost child: reading the task: {e}");
        return 3;
    }
    match serde_json::from_str::<Task>(&line) {
        Ok(Task::Probe { path, pin }) => match library::open(&path, pin.as_deref()) {
            Ok(opened) => out.send(&Message::Plugin { info: opened.info, sha256: Some(opened.sha256) }),
            Err(reason) => out.send(&Message::Rejected { reason }),
        },
        Ok(Task::Cell(task)) => run_cell(&task, &mut out),
        Err(e) => {
            eprintln!("benchhost child: undecodable task: {e}");
            return 3;
        }
    }
    out.send(&Message::Done);
    0
}

fn run_cell(task: &CellTask, out: &mut Protocol) {
    out.send(&Message::Phase { phase: Phase::Load });
    if let Some(Err(e)) = task.plan.memory_limit.map(heap::limit) {
        return out.error(Phase::Load, RigError::new(format!("setting the memory limit: {e}")));
    }
    let library::Opened { root, info, sha256 } = match library::open(&task.plugin_path, task.pin.as_deref()) {
        Ok(opened) => opened,
        Err(reason) => return out.error(Phase::Load, RigError::new(reason)),
    };
    let Some(style) = info.rigs.iter().find(|d| d.name == task.rig).map(|d| d.style) else {
        let message = format!("{} has no rig `{}`", task.plugin_path.display(), task.rig);
        return out.error(Phase::Load, RigError::new(message));
    };
    out.send(&Message::Plugin { info, sha256: Some(sha256) });

    out.send(&Message::Phase { phase: Phase::Setup });
    let params = serde_json::to_string(&task.params).expect("params serialize");
    let ctx = SetupContext { scratch_dir: task.scratch_dir.clone(), quick: task.quick };
    let ctx = serde_json::to_string(&ctx).expect("context serializes");
    let created =
        (root.new_rig())(RStr::from(task.rig.as_str()), RStr::from(params.as_str()), RStr::from(ctx.as_str()));
    let mut rig = match created {
        RResult::ROk(rig) => PluginRig(rig),
        RResult::RErr(err) => return out.error(Phase::Setup, decode_error(&err)),
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
    match rig.0.teardown() {
        RResult::ROk(json) => match serde_json::from_str::<Outcome>(json.as_str()) {
            Ok(outcome) => out.send(&Message::Outcome { counters: outcome.counters, note: outcome.note }),
            Err(e) => out.error(Phase::Teardown, RigError::new(format!("undecodable outcome: {e}"))),
        },
        RResult::RErr(err) => out.error(Phase::Teardown, decode_error(&err)),
    }
}

struct PluginRig(RigBox);

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
struct Protocol {
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

    fn send(&mut self, message: &Message) {
        let mut line = serde_json::to_string(message).expect("messages serialize");
        line.push('\n');
        // If the parent is gone there is nobody to tell; the parent classifies what it saw.
        let _ = self.file.write_all(line.as_bytes());
    }

    fn error(&mut self, phase: Phase, err: RigError) {
        self.send(&Message::Error { phase, kind: err.kind, message: err.message });
    }
}
