//! One process of a duel (or one pair of processes): runs it, makes each arm's record from its side as if it
//! had been a cell of its own, and the paired estimate when both arms measured.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use benchhost_plugin_api::{ErrorKind, Style};
use indicatif::ProgressBar;

use crate::analysis::duel::{self, Estimate};
use crate::plan::matrix::Cell;
use crate::proc::executor::{ChildRun, failed_spawn};
use crate::proc::protocol::Message;
use crate::run::conditions::CpuTimes;
use crate::run::context::{DuelRun, PairRun, RunContext, kept_log, show_phase};
use crate::run::duel_plan::Shape;
use benchhost_record::{Kind, Record};

/// What one process of a duel gave: each arm's record, the paired estimate when both measured, and what the
/// process cost beyond its measuring (wall time less both arms' warm-up and samples), ns.
pub type Process = ([Record; 2], Option<Estimate>, u64);

/// Both arms in one process, samples alternating; the side that goes first alternates with `round`; each side
/// loads the variant of its library `layouts` names, or its library as built.
pub fn alternate(
    arms: [&Cell; 2],
    shape: Shape,
    layouts: [Option<u64>; 2],
    ctx: &mut RunContext<'_>,
    round: usize,
    label: &str,
    progress: &ProgressBar,
) -> Process {
    let name = format!("duel-{:03}-{:03}-r{round}", arms[0].index, arms[1].index);
    let before = CpuTimes::now();
    let scratch = [0, 1].map(|s| ctx.work_dir.path().join(format!("{name}-{s}")));
    let log = ctx.work_dir.path().join(format!("{name}.log"));
    let child = match make_dirs(&scratch) {
        Ok(()) => {
            let duel = DuelRun { cells: arms, scratch: [&scratch[0], &scratch[1]], first: round % 2, shape, layouts };
            ctx.executor.execute_duel(duel, &log, &mut show_phase(label, progress))
        }
        Err(why) => failed_spawn(why),
    };
    remove_dirs(&scratch);
    let log = kept_log(&log);
    let records = [0, 1].map(|s| ctx.record_from_child(arms[s], &side_of(&child, s), before, log.clone()));
    let measured = records.iter().all(|r| r.kind == Kind::Measurement);
    let descriptor = ctx.catalog.descriptor(&arms[1].rig).expect("cells are only made for loaded rigs");
    let estimate = measured.then(|| match descriptor.style {
        Style::Iterations => {
            let (pairs, counters) = pairs_of(&child.messages);
            duel::from_pairs(descriptor, &pairs, &counters)
        }
        Style::Run => {
            let (runs, windows) = runs_of(&child.messages);
            duel::from_runs(&runs, windows)
        }
    });
    (records, estimate, overhead_ns(&child))
}

/// A duel process's wall time less what its arms spent warming up and in their samples, ns.
pub fn overhead_ns(child: &ChildRun) -> u64 {
    let measuring: u64 = child
        .messages
        .iter()
        .map(|m| match m {
            Message::Pair { ns, .. } => ns[0] + ns[1],
            Message::Side { message, .. } => match &**message {
                Message::Warmup { ns, .. } => *ns,
                _ => 0,
            },
            _ => 0,
        })
        .sum();
    (child.wall.as_nanos() as u64).saturating_sub(measuring)
}

/// Both arms at once, each in a process of its own pinned to a core of its own; the cores swap with `round`.
pub fn concurrent(arms: [&Cell; 2], ctx: &mut RunContext<'_>, round: usize) -> Process {
    let name = format!("pair-{:03}-{:03}-r{round}", arms[0].index, arms[1].index);
    let before = CpuTimes::now();
    let scratch = [0, 1].map(|s| ctx.work_dir.path().join(format!("{name}-{s}")));
    let logs = [0, 1].map(|s| ctx.work_dir.path().join(format!("{name}-{s}.log")));
    let cpus = crate::proc::cpus::allowed();
    let cpus = if round.is_multiple_of(2) { [cpus[0], cpus[1]] } else { [cpus[1], cpus[0]] };
    let children = match make_dirs(&scratch) {
        Ok(()) => {
            let pair = PairRun { cells: arms, scratch: [&scratch[0], &scratch[1]], logs: [&logs[0], &logs[1]], cpus };
            ctx.executor.execute_pair(pair)
        }
        Err(why) => [failed_spawn(why.clone()), failed_spawn(why)],
    };
    remove_dirs(&scratch);
    let records = [0, 1].map(|s| ctx.record_from_child(arms[s], &children[s], before, kept_log(&logs[s])));
    let measured = records.iter().all(|r| r.kind == Kind::Measurement);
    let estimate = measured.then(|| duel::from_records(&records[0], &records[1]));
    (records, estimate, 0)
}

fn make_dirs(dirs: &[PathBuf; 2]) -> Result<(), String> {
    dirs.iter().try_for_each(|d| std::fs::create_dir(d).map_err(|e| format!("creating {}: {e}", d.display())))
}

fn remove_dirs(dirs: &[PathBuf; 2]) {
    // The arms' scratch files go with the process, also after a crash.
    for dir in dirs {
        let _ = std::fs::remove_dir_all(Path::new(dir));
    }
}

/// What side `s` of a duel's process did, as if it had been a cell of its own: its messages unwrapped, its
/// sample of every pair, and the messages of the whole process. When the other side failed, this side fails
/// with it, naming it: the process ended before this side finished.
pub fn side_of(child: &ChildRun, s: usize) -> ChildRun {
    let mut messages = Vec::new();
    let mut partner_failed = None;
    for message in &child.messages {
        match message {
            Message::Side { side, message } if *side == s => messages.push((**message).clone()),
            Message::Side { message, .. } => {
                if let Message::Error { phase, message, .. } = &**message {
                    partner_failed = Some((*phase, message.clone()));
                }
            }
            Message::Pair { iterations, ns } => messages.push(Message::Sample { iterations: *iterations, ns: ns[s] }),
            other => messages.push(other.clone()),
        }
    }
    let failed_itself = messages.iter().any(|m| matches!(m, Message::Error { .. }));
    if let (Some((phase, why)), false) = (partner_failed, failed_itself) {
        let arm = if s == 0 { "the arm compared with it" } else { "its reference arm" };
        let message = format!("{arm}, measured in the same process, failed during {}: {why}", phase.as_str());
        let at = messages.iter().rposition(|m| matches!(m, Message::Done)).unwrap_or(messages.len());
        messages.insert(at, Message::Error { phase, kind: ErrorKind::Failed, message });
    }
    ChildRun { messages, ..child.clone() }
}

/// Each pair of a duel: iterations per sample and the two samples' nanoseconds.
type Pairs = Vec<(u64, [u64; 2])>;

/// A duel's pairs and both sides' outcome counters, from its messages.
pub fn pairs_of(messages: &[Message]) -> (Pairs, [BTreeMap<String, u64>; 2]) {
    let (mut pairs, mut counters) = (Vec::new(), [BTreeMap::new(), BTreeMap::new()]);
    for message in messages {
        match message {
            Message::Pair { iterations, ns } => pairs.push((*iterations, *ns)),
            Message::Side { side, message } => {
                if let (Message::Outcome { counters: c, .. }, Some(slot)) = (&**message, counters.get_mut(*side)) {
                    *slot = c.clone();
                }
            }
            _ => {}
        }
    }
    (pairs, counters)
}

/// Each side's runs of a run-style duel, in order: the metrics of every observation; and whether every one
/// was a window of a continuing workload (and there was one).
pub fn runs_of(messages: &[Message]) -> ([Vec<BTreeMap<String, f64>>; 2], bool) {
    let (mut runs, mut windows) = ([Vec::new(), Vec::new()], true);
    for message in messages {
        if let Message::Side { side, message } = message
            && let (Message::Observation { metrics, window, .. }, Some(slot)) = (&**message, runs.get_mut(*side))
        {
            slot.push(metrics.clone());
            windows &= *window;
        }
    }
    let windows = windows && runs.iter().all(|r| !r.is_empty());
    (runs, windows)
}

#[cfg(test)]
#[path = "duel_process_tests.rs"]
mod tests;
