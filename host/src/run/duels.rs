//! `--pairing alternate` and `concurrent`: each duel of a run (an arm against its reference, or a cell against
//! its twin on the other build) is measured over several processes, the rounds, so the verdict counts the
//! variance between processes too: two arms in one process with their samples alternating, or two processes at
//! once, one per core. Each arm still gets its own record, made from its side of every process it ran in,
//! exactly as a cell of its own.

use std::collections::BTreeSet;

use anyhow::Result;
use indicatif::ProgressBar;

use crate::analysis::decision::Threshold;
use crate::analysis::duel::{self, Estimate};
use crate::analysis::layouts;
use crate::plan::matrix::Cell;
use crate::run::context::{RunContext, cell_note, progress_bar, round_order};
use crate::run::duel_plan::{self, Duel, Mode, Shape};
use crate::run::duel_process;
use crate::run::finish::finish_cell;
use benchhost_record::sink::Sink;
use benchhost_record::{Kind, Record};

/// What the duels produced: per cell of the run, its record and the record of each process it ran in (none
/// for cells in no duel), and per duel the paired samples of each process.
#[derive(Default)]
pub struct DuelOutcome {
    /// Per cell, its record (its processes combined).
    pub records: Vec<Option<Record>>,
    /// Per cell, its per-process records.
    pub rounds: Vec<Vec<Record>>,
    /// Per duel, in `duels` order, each process's paired estimate.
    pub estimates: Vec<Vec<Estimate>>,
    /// Per duel, why it was given up for rounds: its rig's second instance failed to set up next to the first
    /// in one process (the rig's error). Its arms have no record here; they run in rounds.
    pub fell_back: Vec<Option<String>>,
}

/// Processes an alternating duel adds, at most, when the planned ones leave its answer to chance
/// ([`duel::needs_more`]), in steps of [`EXTRA_STEP`]; none when `--rounds` fixes the processes (a run-style
/// duel also stops at [`RUN_DUEL_BUDGET`]). 44 (issue 82; 8 before it): two Criterion benchmarks whose
/// processes spread by 3-4% (arrow's `true_count`, `OffsetBuffer::from_lengths`) ended `inconclusive` in 23
/// and 7 of 40 identical-source comparisons after 8 more, `true_count` still in 13 of 40 after 24 more, its
/// layouts spreading its ratio more than its processes (each two more processes a fresh layout pair now:
/// `layouts::EXTENDED_POOL`). Simulated (`benchmarks/stop_rule.py`, normal processes, sd 4.5%, 10 planned):
/// `inconclusive` 39.8% with 8 more, 5.8% with 24, 0.4% with 44, at 17.3, 26.6 and 29.0 processes on average,
/// false alarms 0.9%, 1.2% and 1.7%, +4.5% `regressed` 89.6%, 97.6% and 99.2%; 20 planned: `inconclusive`
/// 13.0%, 1.5% and 0%, false alarms 0.2-0.3%. Over layouts (`stop_rule.py layouts`, sd 3.7% between layout
/// pairs and 3.2% between processes, 20 planned): `no_change` 59% with 24 more cycling the pool's pairs, 77%
/// on fresh pairs, 93% with 44 on fresh pairs, false alarms 1.7%, 0.9% and 1.2%. A duel that decides early
/// stops as early as before.
pub const EXTRA_PROCESSES: u32 = 44;

/// Processes added to each such duel at a time (an even number: each arm goes first as often).
pub const EXTRA_STEP: u32 = 4;

/// Runs every duel in its mode's processes (`asked`, else the mode's default), round by round, the duels' order
/// reversed every other round and the arm that goes first (or the cores) swapped between processes; adds
/// processes to the alternating duels whose verdict is still undecided at `threshold` (unless `asked`, which
/// also keeps a costly duel from running fewer, [`duel_plan::processes_for`]); then
/// writes each dueling cell's record, its processes combined as rounds are. A duel with a failed arm is not
/// run again.
pub fn run(
    cells: &[Cell],
    duels: &[Duel],
    asked: Option<u32>,
    threshold: Threshold<'_>,
    ctx: &mut RunContext<'_>,
    sink: &mut Sink,
) -> Result<DuelOutcome> {
    let wanted = |d: &Duel| d.mode.processes(asked).max(1) as usize;
    let rounds = duels.iter().map(wanted).max().unwrap_or(0);
    note_one_layout(cells, duels, ctx);
    let mut so_far = DuelsSoFar {
        cells,
        duels,
        per_cell: vec![Vec::new(); cells.len()],
        per_duel: vec![Vec::new(); duels.len()],
        fell_back: vec![None; duels.len()],
        planned: duels.iter().map(wanted).collect(),
        sized: asked.is_none(),
        first_overhead: vec![None; duels.len()],
        spent: vec![std::time::Duration::ZERO; duels.len()],
        draws: layout_draws(cells, duels, ctx),
        progress: progress_bar(duels.iter().map(wanted).sum()),
    };
    for round in 0..rounds {
        for d in round_order(duels.len(), round) {
            let planned = so_far.planned[d];
            if round < planned {
                so_far.process(d, round, planned, planned, ctx, sink)?;
                so_far.progress.inc(1);
            }
        }
    }
    if asked.is_none() {
        so_far.extend(threshold, ctx, sink)?;
    }
    so_far.progress.finish_and_clear();
    let DuelsSoFar { per_cell, per_duel, fell_back, .. } = so_far;
    let kept = duels.iter().zip(&fell_back).filter(|(_, fell)| fell.is_none());
    let dueling: BTreeSet<usize> = kept.flat_map(|(d, _)| d.arms).collect();
    let mut records = vec![None; cells.len()];
    for &i in &dueling {
        // As its verdicts name it: a windowed duel whose rig ran whole runs for these parameters (a drain, an open
        // loop) ran whole runs.
        let d = duels.iter().position(|d| d.arms.contains(&i)).expect("a dueling cell is in a duel");
        let whole_runs = duels[d].mode == Mode::Windows && !per_duel[d].iter().all(|e| e.windows);
        let mode = if whole_runs { Mode::Runs.name() } else { duels[d].mode.name() };
        records[i] = Some(finish_cell(&cells[i], &per_cell[i], Some(mode), ctx, sink)?);
    }
    Ok(DuelOutcome { records, rounds: per_cell, estimates: per_duel, fell_back })
}

/// Each duel's layout pairs from pools of the run's layouts a side (fewer for a large library, so that what a
/// build keeps stays within `layouts::DISK_BUDGET`), then, for the processes an undecided duel adds, fresh
/// pairs up to `layouts::EXTENDED_POOL` a side (as many as the budget leaves, and none where a side's layouts
/// cannot be linked, only had as copied), in orders drawn from the OS's randomness: a run draws other pairs
/// than the last (its seeds are in each verdict's `method.layouts`).
fn layout_draws(cells: &[Cell], duels: &[Duel], ctx: &RunContext<'_>) -> Vec<Option<layouts::Draw>> {
    use std::hash::{BuildHasher, Hasher};
    let entropy = std::collections::hash_map::RandomState::new().build_hasher().finish();
    let mut rng = crate::stats::bootstrap::Rng::new(entropy);
    let bytes = |d: &Duel| d.arms.iter().filter_map(|&i| ctx.executor.library_bytes(&cells[i])).max().unwrap_or(0);
    let linkable = |d: &Duel| {
        let with_layouts = d.arms.iter().filter(|&&i| ctx.executor.has_layouts(&cells[i]));
        with_layouts.clone().all(|&i| ctx.executor.links_layouts(&cells[i]))
    };
    let draw = |d: &Duel, pool: usize, rng: &mut _| {
        let pool = layouts::pool_for(pool, bytes(d));
        let extended = if linkable(d) { layouts::pool_for(layouts::EXTENDED_POOL.max(pool), bytes(d)) } else { pool };
        layouts::Draw::new(pool, extended, rng)
    };
    duels.iter().map(|d| ctx.layouts.map(|pool| draw(d, pool, &mut rng))).collect()
}

/// Says once per rig, when the run asked for layouts, which of its builds has one layout only: its verdicts
/// are then of that one link of it.
fn note_one_layout(cells: &[Cell], duels: &[Duel], ctx: &RunContext<'_>) {
    if ctx.layouts.is_none() {
        return;
    }
    let mut said = BTreeSet::new();
    for duel in duels.iter().filter(|d| d.mode != duel_plan::Mode::Concurrent) {
        let [a, b] = duel.arms;
        let missing: Vec<&str> = [(b, "this build"), (a, "the other build")]
            .into_iter()
            .filter(|(i, _)| !ctx.executor.has_layouts(&cells[*i]))
            .map(|(_, which)| which)
            .collect();
        if !missing.is_empty() && said.insert(cells[b].rig.clone()) {
            eprintln!(
                "note: {}: {} kept no link to make other code layouts of (built with `cargo build`, not `benchhost \
                 build`): one layout, so its verdicts are of that link, not of the change",
                cells[b].rig,
                missing.join(" and ")
            );
        }
    }
}

/// The duels of a run while they are measured: what each cell and each duel has so far.
struct DuelsSoFar<'a> {
    cells: &'a [Cell],
    duels: &'a [Duel],
    per_cell: Vec<Vec<Record>>,
    per_duel: Vec<Vec<Estimate>>,
    fell_back: Vec<Option<String>>,
    /// Per duel, its processes before any extra ones: its mode's, or fewer when its first two were costly.
    planned: Vec<usize>,
    /// Whether an alternating duel's processes follow their cost (not when `--rounds` fixes them).
    sized: bool,
    /// Per duel, what its first process cost beyond its measuring, ns.
    first_overhead: Vec<Option<u64>>,
    /// Per duel, the wall time its processes took so far.
    spent: Vec<std::time::Duration>,
    /// Per duel, its layout pairs (`--layouts`), drawn anew for each run.
    draws: Vec<Option<layouts::Draw>>,
    progress: ProgressBar,
}

impl DuelsSoFar<'_> {
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
        if failed(&self.per_cell[a]) || failed(&self.per_cell[b]) || self.fell_back[d].is_some() {
            return Ok(());
        }
        let label = format!("{} vs {} (process {}/{of})", cells[b].label(), cells[a].label(), round + 1);
        if let Some(signal) = crate::proc::interrupt::received() {
            return Err(ctx.interrupted(signal, format!("the run, before {label}"), sink));
        }
        self.progress.set_message(label.clone());
        let arms = [&cells[a], &cells[b]];
        // Each two processes another pair of code layouts, when a side's build kept its link (one draw of a
        // link is one sample of layout, whatever the processes: see `analysis::layouts`).
        let draw = self.draws[d].as_ref().filter(|_| self.duels[d].mode != Mode::Concurrent);
        let layouts =
            [0, 1].map(|s| draw.filter(|_| ctx.executor.has_layouts(arms[s])).map(|draw| draw.seed(round, s)));
        let started = std::time::Instant::now();
        let (records, estimate, overhead_ns) = match self.duels[d].mode {
            Mode::Alternate => {
                let shape = Shape::of(&cells[a].plan, planned as u32);
                duel_process::alternate(arms, shape, layouts, ctx, round, &label, &self.progress)
            }
            Mode::Runs => {
                let shape = Shape::runs(&cells[a].plan);
                duel_process::alternate(arms, shape, layouts, ctx, round, &label, &self.progress)
            }
            Mode::Windows => {
                let shape = Shape::windows(&cells[a].plan);
                duel_process::alternate(arms, shape, layouts, ctx, round, &label, &self.progress)
            }
            Mode::Concurrent => duel_process::concurrent(arms, ctx, round),
        };
        let estimate = estimate.map(|e| duel::Estimate {
            layouts,
            pair: draw.filter(|_| layouts.iter().any(Option::is_some)).map(|draw| draw.pair_of(round)),
            // The side the process set up first: `duel_process` takes round % 2 (both at once: none).
            first: (self.duels[d].mode != Mode::Concurrent).then_some(round % 2),
            ..e
        });
        self.spent[d] += started.elapsed();
        if let Some(signal) = crate::proc::interrupt::received() {
            return Err(ctx.interrupted(signal, label, sink));
        }
        let second = [a, b][1 - round % 2];
        if round == 0 && self.duels[d].mode != Mode::Concurrent {
            let records = if second == a { &records[0] } else { &records[1] };
            if let Some(why) = cannot_share_a_process(records) {
                self.fall_back(&cells[second].rig, &why);
                return Ok(());
            }
        }
        if round < 2 && self.sized && self.duels[d].mode == Mode::Alternate {
            self.size(d, round, overhead_ns);
        }
        for (i, record) in [a, b].into_iter().zip(records) {
            crate::run::output::note(&cell_note(&record, &label));
            self.per_cell[i].push(record);
        }
        self.per_duel[d].extend(estimate);
        Ok(())
    }

    /// Plans fewer processes for duel `d` when its first two cost more beyond their measuring than
    /// [`duel_plan::processes_for`] allows, the cheaper of the two (the first may have built a seed that the
    /// others share), and says so. `overhead_ns`: that of its process `round`.
    fn size(&mut self, d: usize, round: usize, overhead_ns: u64) {
        let Some(first) = self.first_overhead[d].replace(overhead_ns).filter(|_| round == 1) else { return };
        let overhead_ns = overhead_ns.min(first);
        let fit = duel_plan::processes_for(overhead_ns) as usize;
        if fit < self.planned[d] {
            let label = self.cells[self.duels[d].arms[1]].label();
            crate::run::output::note(&format!(
                "{label}: {fit} processes, not {}: each costs {:.2} s beyond its measuring",
                self.planned[d],
                overhead_ns as f64 / 1e9
            ));
            let length = self.progress.length().unwrap_or(0);
            self.progress.set_length(length.saturating_sub((self.planned[d] - fit) as u64));
            self.planned[d] = fit;
        }
    }

    /// Gives up one process for every duel of `rig`, measured or not yet: what they measured so far is dropped
    /// (nothing of it was written), and their arms run in rounds, each in a process of its own.
    fn fall_back(&mut self, rig: &str, why: &str) {
        eprintln!(
            "note: a second instance of `{rig}` failed to set up in the process where the first had ({why}): its \
             comparisons are made in rounds instead, each arm in a process of its own"
        );
        for d in 0..self.duels.len() {
            if self.cells[self.duels[d].arms[1]].rig == rig {
                self.fell_back[d] = Some(format!("not in one process: its second instance failed to set up: {why}"));
                self.per_duel[d].clear();
                for i in self.duels[d].arms {
                    self.per_cell[i].clear();
                }
            }
        }
    }

    /// Whether run-style duel `d` may take more processes ([`more_runs_fit`]).
    fn more_runs_fit(&self, d: usize) -> bool {
        more_runs_fit(self.spent[d], self.per_duel[d].len() as u32)
    }

    /// Adds [`EXTRA_STEP`] processes at a time, up to [`EXTRA_PROCESSES`], to every alternating duel (samples,
    /// whole runs or windows) whose processes so far leave the answer on its rig's headline metric to chance
    /// (at that metric's threshold).
    fn extend(&mut self, threshold: Threshold<'_>, ctx: &mut RunContext<'_>, sink: &Sink) -> Result<()> {
        for extra in (0..EXTRA_PROCESSES as usize).step_by(EXTRA_STEP as usize) {
            let more: Vec<usize> = (0..self.duels.len())
                .filter(|&d| self.duels[d].mode != Mode::Concurrent && self.fell_back[d].is_none())
                .filter(|&d| self.duels[d].mode == Mode::Alternate || self.more_runs_fit(d))
                .filter(|&d| {
                    let Some(arm) = self.per_cell[self.duels[d].arms[1]].last() else { return false };
                    let headline = headline(ctx, &self.cells[self.duels[d].arms[1]]);
                    duel::needs_more(&self.per_duel[d], headline, threshold(arm, headline))
                })
                .collect();
            if more.is_empty() {
                break;
            }
            self.progress.inc_length((more.len() * EXTRA_STEP as usize) as u64);
            for step in extra..extra + EXTRA_STEP as usize {
                for i in round_order(more.len(), step) {
                    let planned = self.planned[more[i]];
                    let of = planned + extra + EXTRA_STEP as usize;
                    self.process(more[i], planned + step, planned, of, ctx, sink)?;
                    self.progress.inc(1);
                }
            }
        }
        Ok(())
    }
}

/// Whether [`EXTRA_STEP`] more processes of a run-style duel whose `done` processes took `spent`, each as long
/// as those, keep it within [`RUN_DUEL_BUDGET`].
pub fn more_runs_fit(spent: std::time::Duration, done: u32) -> bool {
    let done = done.max(1);
    spent / done * (done + EXTRA_STEP) <= RUN_DUEL_BUDGET
}

/// What a run-style duel may take in all for extra processes to be added: its runs are whole workloads or
/// windows of them, seconds each, and its noisier metrics (a tail latency, a spread between threads) would add
/// processes to every duel. 50 s, so that a comparison stays within a minute with what the parent adds and a
/// process slower than the average (on the project's 2-core VM: wal_log `fsync=none` ~23 s for ten processes,
/// 42 s with eight more; kafka_topology in windows ~43 s for ten, and with four more 59-60.5 s under a 60 s
/// budget, which left 4 of 8 A/A comparisons just over a minute).
pub const RUN_DUEL_BUDGET: std::time::Duration = std::time::Duration::from_secs(50);

/// The metric more processes serve: the first the cell's rig declares for it, its headline (`query_time`,
/// `records_per_s`; a writer's `sort_time` where it sorts). Its other metrics are judged on the processes that
/// took: their spread is theirs to carry (the querier's `planning_time` spreads by ~6% between processes,
/// kafka_topology's `p99_gap_us` by 20-190% between windows), and a duel run on for its noisiest metric costs
/// every comparison of the rig.
fn headline<'a>(ctx: &'a RunContext<'_>, cell: &'a Cell) -> &'a str {
    let descriptor = ctx.catalog.descriptor(&cell.rig).expect("cells are only made for loaded rigs");
    descriptor.metrics_for(&cell.params).next().map_or("", |m| m.name.as_str())
}

/// The rig's error when the arm set up second in a duel's process failed during set-up: the first instance set
/// up in the same process, so what failed may be the sharing (a fixed port, a process-wide library state).
/// Rounds, where each arm has a process of its own, then tell: the arm measures, or fails again with its
/// reason in its record.
fn cannot_share_a_process(second: &Record) -> Option<String> {
    let failure = second.failure.as_ref()?;
    (failure.phase == Some(benchhost_record::Phase::Setup)).then(|| failure.message.clone())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_run_style_duel_takes_more_processes_only_while_they_fit_its_budget() {
        assert!(more_runs_fit(Duration::from_secs(23), 10), "wal_log: 10 of 2.3 s, 4 more make 32 s");
        assert!(more_runs_fit(Duration::from_secs(33), 14), "and 4 more again make 42 s");
        assert!(!more_runs_fit(Duration::from_secs(100), 10), "kafka_topology: 10 of 10 s");
        assert!(!more_runs_fit(Duration::from_secs(45), 10), "4 more of 4.5 s would make 63 s");
        assert!(!more_runs_fit(Duration::from_secs(42), 10), "kafka_topology in windows: 4 more would make 59 s");
    }
}
