//! `--pairing alternate`: each non-reference arm of an iterations-style rig is measured against its reference
//! in duels, two arms in one process with their samples alternating, over several processes (the rounds), so
//! the verdict counts the variance between processes too. Each arm still gets its own record, made from its
//! side of every process it ran in, exactly as a cell of its own.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use indicatif::ProgressBar;

use crate::analysis::compare::Threshold;
use crate::analysis::duel::{self, Estimate};
use crate::analysis::rounds;
use crate::plan::matrix::Cell;
use crate::run::duel_process;
use crate::run::runner::{self, Ran, RunContext, cell_note, progress_bar, round_order};
use benchhost_record::sink::Sink;
use benchhost_record::{Kind, Record};

/// How the two arms of a duel are measured side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In one process, samples alternating (iterations-style rigs).
    Alternate,
    /// In two processes at once, one per core, the cores swapped between rounds.
    Concurrent,
}

impl Mode {
    /// Processes per duel: `asked` (`--rounds`), else [`PROCESSES`] for alternating samples and
    /// [`CONCURRENT_ROUNDS`] for concurrent ones.
    pub fn processes(self, asked: Option<u32>) -> u32 {
        asked.unwrap_or(match self {
            Mode::Alternate => PROCESSES,
            Mode::Concurrent => CONCURRENT_ROUNDS,
        })
    }

    /// Its name in records and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Alternate => "alternate",
            Mode::Concurrent => "concurrent",
        }
    }
}

/// The samples of a sample-paired comparison: short enough that a pair falls inside one phase of the
/// machine (Tango takes 5-10 ms), long enough that a clock pair costs nothing next to them.
pub const SAMPLE_NS: u64 = 10_000_000;

/// Processes per duel unless `--rounds` says otherwise. Measured on the project's 2-core VM (harness rig, A/A
/// duels, 10 ms samples, the same 2 x 4 s of warm-up and measurement spread over the processes): each process
/// costs only ~20 ms beyond its share, and the spread between processes' estimates is the limit, not the pairs:
/// 0.3-1% (noop, sort, wal) and 2-3% on the 64 KiB copy, whose arms' buffers land on other pages in every
/// process, with one process in ten or twenty 5-10% off. With 6 processes 20 of 30 copy A/A duels were
/// `no_change`; with 20 and the trimmed mean over processes, |estimate| + CI90 half-width stayed within 1.7%
/// in the copy's A/A duels measured (no_change needs it within the ±3% threshold). A comparison of two arms
/// costs ~8.5 s.
pub const PROCESSES: u32 = 20;

/// Rounds of a concurrent duel unless `--rounds` says otherwise: as many as interleaved rounds have (a
/// run-style cell is seconds long; its repetitions already average inside each process).
pub const CONCURRENT_ROUNDS: u32 = 5;

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

/// A duel: the reference arm and the arm compared with it, as indices into the run's cells, and how they
/// are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Duel {
    /// Reference, then the arm compared with it.
    pub arms: [usize; 2],
    /// Side by side how.
    pub mode: Mode,
}

/// The duels of a run: with `against`, each cell and its twin (cells 2i and 2i+1); otherwise every arm of a rig
/// after its first against that first one. `mode_of(rig)` says how a rig's arms duel; a rig it gives no mode
/// to runs in rounds.
pub fn duels_of(cells: &[Cell], against: bool, mode_of: &dyn Fn(&str) -> Option<Mode>) -> Vec<Duel> {
    if against {
        // The other build is the reference: the verdict is on this build, as `compare NEW OLD` is.
        return (0..cells.len() / 2)
            .filter_map(|i| Some(Duel { arms: [2 * i + 1, 2 * i], mode: mode_of(&cells[2 * i].rig)? }))
            .collect();
    }
    let mut first: BTreeMap<&str, usize> = BTreeMap::new();
    let mut duels = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let Some(mode) = mode_of(&cell.rig) else { continue };
        match first.get(cell.rig.as_str()) {
            Some(&reference) => duels.push(Duel { arms: [reference, i], mode }),
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
    /// Per duel, in `duels` order, each process's paired estimate.
    pub estimates: Vec<Vec<Estimate>>,
}

/// Processes an alternating duel adds, at most, when the planned ones leave its answer to chance
/// ([`duel::needs_more`]), in steps of [`EXTRA_STEP`]; none when `--rounds` fixes the processes. On the
/// harness rig's 64 KiB copy a process costs ~0.42 s, so 8 more keep a comparison within ~12 s.
pub const EXTRA_PROCESSES: u32 = 8;

/// Processes added to each such duel at a time (an even number: each arm goes first as often).
pub const EXTRA_STEP: u32 = 4;

/// Runs every duel in its mode's processes (`asked`, else the mode's default), round by round, the duels' order
/// reversed every other round and the arm that goes first (or the cores) swapped between processes; adds
/// processes to the alternating duels whose interval is still too wide for `threshold` (unless `asked`); then
/// writes each dueling cell's record, its processes combined as rounds are. A duel with a failed arm is not
/// run again.
pub fn run(
    cells: &[Cell],
    duels: &[Duel],
    asked: Option<u32>,
    threshold: Threshold<'_>,
    ctx: &mut RunContext<'_>,
    sink: &mut Sink,
) -> Result<Dueled> {
    let wanted = |d: &Duel| d.mode.processes(asked).max(1) as usize;
    let rounds = duels.iter().map(wanted).max().unwrap_or(0);
    let mut duelist = Duelist {
        cells,
        duels,
        per_cell: vec![Vec::new(); cells.len()],
        per_duel: vec![Vec::new(); duels.len()],
        progress: progress_bar(duels.iter().map(wanted).sum()),
    };
    for round in 0..rounds {
        for d in round_order(duels.len(), round) {
            let planned = wanted(&duels[d]);
            if round < planned {
                duelist.process(d, round, planned, planned, ctx, sink)?;
            }
            duelist.progress.inc(1);
        }
    }
    if asked.is_none() {
        duelist.extend(threshold, ctx, sink)?;
    }
    duelist.progress.finish_and_clear();
    let Duelist { per_cell, per_duel, .. } = duelist;
    let dueling: BTreeSet<usize> = duels.iter().flat_map(|d| d.arms).collect();
    let mut records = vec![None; cells.len()];
    for &i in &dueling {
        let mut record = rounds::combine(per_cell[i].clone());
        crate::run::instructions::count(&cells[i], &mut record, ctx, &format!("cell-{:03}", cells[i].index));
        if let Some(signal) = crate::proc::interrupt::received() {
            return Err(interrupted(signal, format!("counting cell {} ({})", cells[i].index, cells[i].label()), sink));
        }
        // The other build's numbers only serve the paired verdicts; its failures are reported.
        if !cells[i].against || record.kind == Kind::Failure {
            sink.keep(&record).map_err(|e| e.context(format!("cell {} ({})", cells[i].index, cells[i].label())))?;
        }
        records[i] = Some(record);
    }
    Ok(Dueled { records, rounds: per_cell, estimates: per_duel })
}

/// The duels of a run while they are measured: what each cell and each duel has so far.
struct Duelist<'a> {
    cells: &'a [Cell],
    duels: &'a [Duel],
    per_cell: Vec<Vec<Record>>,
    per_duel: Vec<Vec<Estimate>>,
    progress: ProgressBar,
}

impl Duelist<'_> {
    /// One more process of duel `d` (its `round`, of `of` so far), shaped as one of its `planned` processes;
    /// nothing when one of its arms has failed.
    fn process(
        &mut self,
        d: usize,
        round: usize,
        planned: usize,
        of: usize,
        ctx: &mut RunContext<'_>,
        sink: &Sink,
    ) -> Result<()> {
        let (cells, [a, b]) = (self.cells, self.duels[d].arms);
        let failed = |records: &Vec<Record>| records.last().is_some_and(|r| r.kind == Kind::Failure);
        if failed(&self.per_cell[a]) || failed(&self.per_cell[b]) {
            return Ok(());
        }
        let label = format!("{} vs {} (process {}/{of})", cells[b].label(), cells[a].label(), round + 1);
        if let Some(signal) = crate::proc::interrupt::received() {
            return Err(interrupted(signal, format!("the run, before {label}"), sink));
        }
        self.progress.set_message(label.clone());
        let shape = Shape::of(&cells[a].plan, planned as u32);
        let arms = [&cells[a], &cells[b]];
        let (records, estimate) = match self.duels[d].mode {
            Mode::Alternate => duel_process::alternate(arms, shape, ctx, round, &label, &self.progress),
            Mode::Concurrent => duel_process::concurrent(arms, ctx, round),
        };
        if let Some(signal) = crate::proc::interrupt::received() {
            return Err(interrupted(signal, label, sink));
        }
        for (i, record) in [a, b].into_iter().zip(records) {
            crate::run::output::note(&cell_note(&record, &label));
            self.per_cell[i].push(record);
        }
        self.per_duel[d].extend(estimate);
        Ok(())
    }

    /// Adds [`EXTRA_STEP`] processes at a time, up to [`EXTRA_PROCESSES`], to every alternating duel whose
    /// processes so far leave its answer to chance (each metric judged at its own threshold).
    fn extend(&mut self, threshold: Threshold<'_>, ctx: &mut RunContext<'_>, sink: &Sink) -> Result<()> {
        let planned = Mode::Alternate.processes(None) as usize;
        for extra in (0..EXTRA_PROCESSES as usize).step_by(EXTRA_STEP as usize) {
            let more: Vec<usize> = (0..self.duels.len())
                .filter(|&d| self.duels[d].mode == Mode::Alternate)
                .filter(|&d| {
                    let Some(arm) = self.per_cell[self.duels[d].arms[1]].last() else { return false };
                    duel::needs_more(&self.per_duel[d], &|metric: &str| threshold(arm, metric))
                })
                .collect();
            if more.is_empty() {
                break;
            }
            self.progress.inc_length((more.len() * EXTRA_STEP as usize) as u64);
            let of = planned + extra + EXTRA_STEP as usize;
            for round in planned + extra..of {
                for i in round_order(more.len(), round) {
                    self.process(more[i], round, planned, of, ctx, sink)?;
                    self.progress.inc(1);
                }
            }
        }
        Ok(())
    }
}

/// A run whose iterations-style arms duel and whose other cells run in rounds: the duels first, then the
/// rest (`runner::run`). The whole run's [`Ran`], in cell order; the rounds part alone (the paired verdicts
/// of rounds are taken over it); and the duels' samples.
pub fn run_all(
    cells: &[Cell],
    duels: &[Duel],
    asked: Option<u32>,
    threshold: Threshold<'_>,
    ctx: &mut RunContext<'_>,
    sink: &mut Sink,
) -> Result<Mixed> {
    let in_duel: BTreeSet<usize> = duels.iter().flat_map(|d| d.arms).collect();
    let rest: Vec<Cell> =
        cells.iter().enumerate().filter(|(i, _)| !in_duel.contains(i)).map(|(_, c)| c.clone()).collect();
    let dueled = run(cells, duels, asked, threshold, ctx, sink)?;
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
    /// What the cells that ran in rounds gave, alone (their paired verdicts are taken over it).
    pub in_rounds: Ran,
    /// What the duels gave.
    pub dueled: Dueled,
}

fn interrupted(signal: i32, during: String, sink: &Sink) -> anyhow::Error {
    let kept = format!("the records written before are kept in {}", sink.path().display());
    anyhow::Error::from(crate::proc::interrupt::Interrupted { signal, during, kept })
}

#[cfg(test)]
#[path = "duels_tests.rs"]
mod tests;
