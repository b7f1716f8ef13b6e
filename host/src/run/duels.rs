//! `--pairing alternate`: each non-reference arm of an iterations-style rig is measured against its reference
//! in duels, two arms in one process with their samples alternating, over several processes (the rounds), so
//! the verdict counts the variance between processes too. Each arm still gets its own record, made from its
//! side of every process it ran in, exactly as a cell of its own.

use std::collections::BTreeMap;

use anyhow::Result;

use crate::analysis::alternate::Process;
use crate::analysis::rounds;
use crate::plan::matrix::Cell;
use crate::proc::executor::{ChildRun, failed_spawn};
use crate::proc::protocol::Message;
use crate::run::evaluate::evaluate;
use crate::run::runner::{self, DuelRun, Ran, RunContext, cell_note, kept_log, phase_word, progress_bar, round_order};
use benchhost_plugin_api::ErrorKind;
use benchhost_record::sink::Sink;
use benchhost_record::{Kind, Record};

/// The samples of a sample-paired comparison: short enough that a pair falls inside one phase of the
/// machine (Tango takes 5-10 ms), long enough that a clock pair costs nothing next to them.
pub const SAMPLE_NS: u64 = 10_000_000;

/// What one process of a duel does: its warm-up per arm, the duration of one sample and the pairs to take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// Warm-up of each arm, ns.
    pub warmup_ns: u64,
    /// Target duration of one sample, ns.
    pub sample_ns: u64,
    /// Pairs of samples.
    pub pairs: u32,
}

impl Shape {
    /// A cell's plan spread over `processes`: each arm gets the plan's warm-up and measurement time in all, a
    /// share in each process, in samples of at most [`SAMPLE_NS`] (at least 10 pairs per process).
    pub fn of(plan: &crate::plan::settings::Plan, processes: u32) -> Shape {
        let processes = u64::from(processes.max(1));
        let sample_ns = plan.sample_ns.clamp(1, SAMPLE_NS);
        let measurement = plan.sample_ns.saturating_mul(u64::from(plan.samples)) / processes;
        let pairs = measurement.div_ceil(sample_ns).clamp(10, u64::from(u32::MAX)) as u32;
        Shape { warmup_ns: plan.warmup_ns / processes, sample_ns, pairs }
    }
}

/// A duel: the reference arm and the arm compared with it, as indices into the run's cells.
pub type Duel = [usize; 2];

/// The duels of a run: with `against`, each cell and its twin (cells 2i and 2i+1); otherwise every arm of a rig
/// after its first against that first one. Only iterations-style rigs (`paired(rig)`); the rest go in rounds.
pub fn duels_of(cells: &[Cell], against: bool, sample_paired: &dyn Fn(&str) -> bool) -> Vec<Duel> {
    if against {
        // The other build is the reference: the verdict is on this build, as `compare NEW OLD` is.
        return (0..cells.len() / 2)
            .map(|i| [2 * i + 1, 2 * i])
            .filter(|[a, _]| sample_paired(&cells[*a].rig))
            .collect();
    }
    let mut first: BTreeMap<&str, usize> = BTreeMap::new();
    let mut duels = Vec::new();
    for (i, cell) in cells.iter().enumerate().filter(|(_, c)| sample_paired(&c.rig)) {
        match first.get(cell.rig.as_str()) {
            Some(&reference) => duels.push([reference, i]),
            None => {
                first.insert(&cell.rig, i);
            }
        }
    }
    duels
}

/// What the duels produced: per cell of the run, its record and the record of each process it ran in (none
/// for cells in no duel), and per duel the paired samples of each process.
pub struct Dueled {
    /// Per cell, its record (its processes combined).
    pub records: Vec<Option<Record>>,
    /// Per cell, its per-process records.
    pub rounds: Vec<Vec<Record>>,
    /// Per duel, in `duels` order, each process's pairs and both arms' counters.
    pub processes: Vec<Vec<Process>>,
}

/// Runs every duel `ctx.rounds` times (round by round, the duels' order reversed every other round, the arm
/// that goes first swapped between processes), then writes each dueling cell's record, its processes
/// combined as rounds are. A duel with a failed arm is not run again.
pub fn run(cells: &[Cell], duels: &[Duel], ctx: &mut RunContext<'_>, sink: &mut Sink) -> Result<Dueled> {
    let rounds = ctx.rounds.max(1) as usize;
    let progress = progress_bar(duels.len() * rounds);
    let mut per_cell: Vec<Vec<Record>> = vec![Vec::new(); cells.len()];
    let mut processes: Vec<Vec<Process>> = vec![Vec::new(); duels.len()];
    for round in 0..rounds {
        for d in round_order(duels.len(), round) {
            let [a, b] = duels[d];
            let failed = |records: &Vec<Record>| records.last().is_some_and(|r| r.kind == Kind::Failure);
            if !failed(&per_cell[a]) && !failed(&per_cell[b]) {
                let label = format!("{} vs {} (process {}/{rounds})", cells[b].label(), cells[a].label(), round + 1);
                if let Some(signal) = crate::proc::interrupt::received() {
                    let during = format!("the run, before {label}");
                    return Err(interrupted(signal, during, sink));
                }
                progress.set_message(label.clone());
                let (records, process) = run_duel(cells, duels[d], ctx, round, &label, &progress);
                if let Some(signal) = crate::proc::interrupt::received() {
                    return Err(interrupted(signal, label, sink));
                }
                for (i, record) in [a, b].into_iter().zip(records) {
                    crate::run::output::note(&cell_note(&record, &label));
                    per_cell[i].push(record);
                }
                processes[d].extend(process);
            }
            progress.inc(1);
        }
    }
    progress.finish_and_clear();
    let dueling: std::collections::BTreeSet<usize> = duels.iter().flatten().copied().collect();
    let mut records = vec![None; cells.len()];
    for &i in &dueling {
        let record = rounds::combine(per_cell[i].clone());
        // The other build's numbers only serve the paired verdicts; its failures are reported.
        if !cells[i].against || record.kind == Kind::Failure {
            sink.keep(&record).map_err(|e| e.context(format!("cell {} ({})", cells[i].index, cells[i].label())))?;
        }
        records[i] = Some(record);
    }
    Ok(Dueled { records, rounds: per_cell, processes })
}

/// A run whose iterations-style arms duel and whose other cells run in rounds: the duels first, then the
/// rest (`runner::run`). The whole run's [`Ran`], in cell order; the rounds part alone (the paired verdicts
/// of rounds are taken over it); and the duels' samples.
pub fn run_all(cells: &[Cell], duels: &[Duel], ctx: &mut RunContext<'_>, sink: &mut Sink) -> Result<Mixed> {
    let in_duel: std::collections::BTreeSet<usize> = duels.iter().flatten().copied().collect();
    let rest: Vec<Cell> =
        cells.iter().enumerate().filter(|(i, _)| !in_duel.contains(i)).map(|(_, c)| c.clone()).collect();
    let dueled = run(cells, duels, ctx, sink)?;
    let in_rounds = runner::run(&rest, ctx, sink)?;
    let mut from_rounds = in_rounds.records.iter().zip(&in_rounds.rounds);
    let (mut records, mut rounds) = (Vec::new(), Vec::new());
    for (i, record) in dueled.records.iter().enumerate() {
        let (record, per_round) = match record {
            Some(record) => (record.clone(), dueled.rounds[i].clone()),
            None => {
                let (record, per_round) = from_rounds.next().expect("every cell not in a duel ran in rounds");
                (record.clone(), per_round.clone())
            }
        };
        records.push(record);
        rounds.push(per_round);
    }
    Ok(Mixed { ran: Ran { records, rounds }, in_rounds, dueled })
}

/// What [`run_all`] returns.
pub struct Mixed {
    /// Every cell's record and rounds, in cell order.
    pub ran: Ran,
    /// What they gave.
    pub in_rounds: Ran,
    /// What the duels gave.
    pub dueled: Dueled,
}

fn interrupted(signal: i32, during: String, sink: &Sink) -> anyhow::Error {
    let kept = format!("the records written before are kept in {}", sink.path().display());
    anyhow::Error::from(crate::proc::interrupt::Interrupted { signal, during, kept })
}

/// One process of duel `[a, b]`: each arm's record, and the process's pairs when both arms measured.
fn run_duel(
    cells: &[Cell],
    [a, b]: Duel,
    ctx: &mut RunContext<'_>,
    round: usize,
    label: &str,
    progress: &indicatif::ProgressBar,
) -> ([Record; 2], Option<Process>) {
    let name = format!("duel-{:03}-{:03}-r{round}", cells[a].index, cells[b].index);
    let before = crate::run::conditions::CpuTimes::now();
    let scratch = [0, 1].map(|s| ctx.work_dir.path().join(format!("{name}-{s}")));
    let log = ctx.work_dir.path().join(format!("{name}.log"));
    let shape = Shape::of(&cells[a].plan, ctx.rounds);
    let created = scratch.iter().try_for_each(|d| std::fs::create_dir(d).map_err(|e| (d.clone(), e)));
    let child = match created {
        Ok(()) => {
            let duel =
                DuelRun { cells: [&cells[a], &cells[b]], scratch: [&scratch[0], &scratch[1]], first: round % 2, shape };
            ctx.executor.execute_duel(duel, &log, &mut |m| {
                if let Message::Phase { phase } = m {
                    progress.set_message(format!("{label} — {}", phase_word(*phase)));
                }
            })
        }
        Err((dir, e)) => failed_spawn(format!("creating {}: {e}", dir.display())),
    };
    for dir in &scratch {
        let _ = std::fs::remove_dir_all(dir);
    }
    let log = kept_log(&log);
    let records = [0, 1].map(|s| {
        let cell = &cells[[a, b][s]];
        let descriptor = ctx.catalog.descriptor(&cell.rig).expect("cells are only made for loaded rigs");
        let mut record = evaluate(cell, descriptor, &side_of(&child, s), ctx.run_info, log.clone());
        let profile = record.plugin.as_ref().and_then(|p| p.profile.clone());
        if let Some(info) = record.cell.as_mut() {
            info.conditions = Some(crate::run::conditions::conditions(before, profile.as_deref()));
        }
        record
    });
    let measured = records.iter().all(|r| r.kind == Kind::Measurement);
    let process = measured.then(|| process_of(&child.messages));
    (records, process)
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

/// A duel's pairs and both sides' outcome counters, from its messages.
pub fn process_of(messages: &[Message]) -> Process {
    let mut process = Process::default();
    for message in messages {
        match message {
            Message::Pair { iterations, ns } => process.pairs.push((*iterations, *ns)),
            Message::Side { side, message } => {
                if let (Message::Outcome { counters, .. }, Some(slot)) = (&**message, process.counters.get_mut(*side)) {
                    *slot = counters.clone();
                }
            }
            _ => {}
        }
    }
    process
}

#[cfg(test)]
#[path = "duels_tests.rs"]
mod tests;
