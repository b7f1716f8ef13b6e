//! One cell in the child: its library loaded, the rig set up, sampled by its style (iterations or
//! repetitions), and torn down, each phase announced on the channel.

use benchhost_plugin_api::{RigError, Style};

use crate::child::channel::Protocol;
use crate::child::rig::{load, set_up, tear_down};
use crate::child::{heap, sampler};
use crate::proc::protocol::{CellTask, Message, Phase};

/// Measures the cell `task`, saying on `out` what happens.
pub(crate) fn run(task: &CellTask, out: &mut Protocol) {
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
