//! Runs the cells of a matrix one after another, each in its own child process, and writes each cell's
//! record the moment the cell ends, so a later crash or a Ctrl-C loses nothing already measured.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::analysis::rounds;
use crate::plan::matrix::{Catalog, Cell};
use crate::plugin::loader::Loader;
use crate::proc::executor::{ChildRun, failed_spawn, run_child, run_child_under};
use crate::proc::protocol::{CellTask, CountTask, DuelTask, Message, Phase, Task};
use crate::run::evaluate::evaluate;
use crate::run::instructions::{CountRun, Counting};
use benchhost_record::sink::Sink;
use benchhost_record::{Kind, Record, RunInfo};

/// Runs one cell somewhere and reports what happened. The seam that lets tests run a whole matrix without
/// processes or clocks.
pub trait Executor {
    /// Runs `cell` with `scratch` as its scratch directory and `log` as its log file.
    fn execute(&mut self, cell: &Cell, scratch: &Path, log: &Path, on_message: &mut dyn FnMut(&Message)) -> ChildRun;
    /// Runs two arms of one rig in one process, samples alternating (`--pairing alternate`).
    fn execute_duel(&mut self, duel: DuelRun<'_>, log: &Path, on_message: &mut dyn FnMut(&Message)) -> ChildRun;
    /// Runs two cells at once, each in its own process pinned to its own core (`--pairing concurrent`).
    fn execute_pair(&mut self, pair: PairRun<'_>) -> [ChildRun; 2];
    /// Runs a cell's instruction count under its tool (`--instructions`).
    fn execute_count(&mut self, count: CountRun<'_>) -> ChildRun;
}

/// Two cells run at once, as the runner asks for them.
pub struct PairRun<'a> {
    /// The two arms, the reference first.
    pub cells: [&'a Cell; 2],
    /// Their scratch directories.
    pub scratch: [&'a Path; 2],
    /// Their logs.
    pub logs: [&'a Path; 2],
    /// The core each is pinned to.
    pub cpus: [usize; 2],
}

/// One process of a duel, as the runner asks for it.
pub struct DuelRun<'a> {
    /// The two arms, the reference first.
    pub cells: [&'a Cell; 2],
    /// Their scratch directories.
    pub scratch: [&'a Path; 2],
    /// Which arm goes first in this process.
    pub first: usize,
    /// Warm-up per arm, sample duration and pairs.
    pub shape: crate::run::duels::Shape,
}

/// The real executor: `benchhost __child` per cell.
pub struct ChildExecutor<'a> {
    /// The benchhost binary to re-execute.
    pub exe: PathBuf,
    /// Where the rigs come from.
    pub loader: &'a Loader,
    /// Where the twins' rigs come from (`run --against DIR`).
    pub against: Option<&'a Loader>,
    /// `--quick`.
    pub quick: bool,
}

impl Executor for ChildExecutor<'_> {
    fn execute(&mut self, cell: &Cell, scratch: &Path, log: &Path, on_message: &mut dyn FnMut(&Message)) -> ChildRun {
        let task = Task::Cell(self.task(cell, scratch));
        run_child(&self.exe, &task, cell.deadline, Some(log), on_message)
    }

    fn execute_pair(&mut self, pair: PairRun<'_>) -> [ChildRun; 2] {
        let tasks = [0, 1]
            .map(|s| Task::Cell(CellTask { cpu: Some(pair.cpus[s]), ..self.task(pair.cells[s], pair.scratch[s]) }));
        let exe = &self.exe;
        std::thread::scope(|scope| {
            let run = |s: usize| {
                let (task, deadline, log) = (&tasks[s], pair.cells[s].deadline, pair.logs[s]);
                scope.spawn(move || run_child(exe, task, deadline, Some(log), &mut |_| {}))
            };
            let (a, b) = (run(0), run(1));
            [a, b].map(|h| h.join().unwrap_or_else(|_| failed_spawn("the thread watching the child panicked".into())))
        })
    }

    fn execute_count(&mut self, count: CountRun<'_>) -> ChildRun {
        let cell = self.task(count.cell, count.scratch);
        let task = Task::Count(CountTask { cell, totals: count.totals.to_owned(), near: count.near, most: count.most });
        let deadline = count.cell.deadline.saturating_mul(crate::run::instructions::DEADLINE_FACTOR);
        run_child_under(&count.wrapper, &self.exe, &task, deadline, Some(count.log), &mut |_| {})
    }

    fn execute_duel(&mut self, duel: DuelRun<'_>, log: &Path, on_message: &mut dyn FnMut(&Message)) -> ChildRun {
        let [a, b] = duel.cells;
        let task = Task::Duel(Box::new(DuelTask {
            sides: [self.task(a, duel.scratch[0]), self.task(b, duel.scratch[1])],
            first: duel.first,
            warmup_ns: duel.shape.warmup_ns,
            sample_ns: duel.shape.sample_ns,
            pairs: duel.shape.pairs,
        }));
        run_child(&self.exe, &task, a.deadline.max(b.deadline), Some(log), on_message)
    }
}

impl ChildExecutor<'_> {
    fn task(&self, cell: &Cell, scratch: &Path) -> CellTask {
        let loader = if cell.against { self.against.expect("twins only exist with --against") } else { self.loader };
        let (plugin, _) = loader.rig(&cell.rig).expect("cells are only made for loaded rigs");
        CellTask {
            plugin_path: plugin.path.clone(),
            pin: plugin.pin.clone(),
            rig: cell.rig.clone(),
            params: cell.params.clone(),
            plan: cell.plan,
            scratch_dir: scratch.to_owned(),
            quick: self.quick,
            cpu: None,
        }
    }
}

/// What a run produced: one record per cell (rounds combined), and every round's own record per cell.
pub struct Ran {
    /// One record per cell, in cell order.
    pub records: Vec<Record>,
    /// Per cell, the record of each round it ran.
    pub rounds: Vec<Vec<Record>>,
}

/// A scratch directory of the run's own, made with a random name and mode 0700 (never a predictable path in a
/// shared `/tmp` that another user could have planted a symlink at). Cells' scratch directories and logs live
/// in it; it is removed when the run ends, unless it holds the logs that failure records point at.
pub struct WorkDir(PathBuf);

impl WorkDir {
    /// A new directory `$TMPDIR/benchhost-{label}-XXXXXX`.
    pub fn new(label: &str) -> Result<WorkDir> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix(&format!("benchhost-{label}-"))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        Ok(WorkDir(dir.keep()))
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        // Only when empty: the logs of failed cells stay for their records to point at.
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// What every cell of a run shares: where rigs are described, how a cell runs, the provenance its records
/// carry, where its scratch files go, and how many rounds there are.
pub struct RunContext<'a> {
    /// The rigs' descriptors.
    pub catalog: &'a dyn Catalog,
    /// Runs one cell.
    pub executor: &'a mut dyn Executor,
    /// Provenance of the records.
    pub run_info: &'a RunInfo,
    /// Scratch directories and logs.
    pub work_dir: WorkDir,
    /// Every cell runs once per round.
    pub rounds: u32,
    /// Count each iterations-style cell's instructions too (`--instructions`).
    pub instructions: Option<Counting>,
}

/// Runs `cells` for `ctx.rounds` rounds (every cell once per round, the order reversed every other round: A B,
/// B A, A B ...), appending each cell's record to `sink` when its last round ends. A cell that failed is not run
/// again. The returned records are in cell order.
pub fn run(cells: &[Cell], ctx: &mut RunContext<'_>, sink: &mut Sink) -> Result<Ran> {
    let rounds = ctx.rounds.max(1) as usize;
    let progress = progress_bar(cells.len() * rounds);
    let mut per_cell: Vec<Vec<Record>> = vec![Vec::new(); cells.len()];
    let mut records = vec![None; cells.len()];
    let mut written = 0;
    let interrupted = |signal, during: String, written: usize, sink: &Sink| {
        progress.finish_and_clear();
        let kept = format!("the {written} records written before are kept in {}", sink.path().display());
        anyhow::Error::from(crate::proc::interrupt::Interrupted { signal, during, kept })
    };
    for round in 0..rounds {
        for i in round_order(cells.len(), round) {
            let (cell, done) = (&cells[i], &mut per_cell[i]);
            if !done.last().is_some_and(|r| r.kind == Kind::Failure) {
                let label = match rounds {
                    1 => cell.label(),
                    _ => format!("{} (round {}/{rounds})", cell.label(), round + 1),
                };
                if let Some(signal) = crate::proc::interrupt::received() {
                    let during = format!("the run, before cell {} ({label})", cell.index);
                    return Err(interrupted(signal, during, written, sink));
                }
                let record = run_cell(cell, ctx, round, &label, &progress);
                // A signal during the cell: the child is dead and its files are gone; its record would be half a
                // measurement, so none is written.
                if let Some(signal) = crate::proc::interrupt::received() {
                    return Err(interrupted(signal, format!("cell {} ({label})", cell.index), written, sink));
                }
                crate::run::output::note(&cell_note(&record, &label));
                done.push(record);
            }
            progress.inc(1);
            if round + 1 < rounds {
                continue;
            }
            let mut record = if done.len() == 1 { done[0].clone() } else { rounds::combine(done.clone()) };
            crate::run::instructions::count(cell, &mut record, ctx, &format!("cell-{:03}", cell.index));
            if let Some(signal) = crate::proc::interrupt::received() {
                return Err(interrupted(
                    signal,
                    format!("counting cell {} ({})", cell.index, cell.label()),
                    written,
                    sink,
                ));
            }
            // The other build's numbers only serve the paired verdicts; its failures are reported.
            if !cell.against || record.kind == Kind::Failure {
                sink.keep(&record).map_err(|e| {
                    progress.finish_and_clear();
                    e.context(format!("cell {} ({})", cell.index, cell.label()))
                })?;
                written += 1;
            }
            records[i] = Some(record);
        }
    }
    progress.finish_and_clear();
    let records = records.into_iter().map(|r| r.expect("every cell ends in the last round")).collect();
    Ok(Ran { records, rounds: per_cell })
}

/// The order of the cells in `round`: as listed in even rounds, reversed in odd ones. A fixed order would give
/// every arm the same neighbours and the same place in the round on every round, so anything that depends on
/// position (the machine warming up after a long cell, a cache another process left behind) would read as a
/// difference between arms; reversing turns it into noise the paired CI sees, and cancels a linear drift over
/// each pair of rounds.
pub fn round_order(cells: usize, round: usize) -> Vec<usize> {
    if round.is_multiple_of(2) { (0..cells).collect() } else { (0..cells).rev().collect() }
}

/// One child for one cell (in `round`); its record.
fn run_cell(cell: &Cell, ctx: &mut RunContext<'_>, round: usize, label: &str, progress: &ProgressBar) -> Record {
    progress.set_message(label.to_string());
    let name = match ctx.rounds {
        0 | 1 => format!("cell-{:03}", cell.index),
        _ => format!("cell-{:03}-r{round}", cell.index),
    };
    let before = crate::run::conditions::CpuTimes::now();
    let scratch = ctx.work_dir.path().join(&name);
    let log = ctx.work_dir.path().join(format!("{name}.log"));
    let child = match std::fs::create_dir(&scratch) {
        Ok(()) => ctx.executor.execute(cell, &scratch, &log, &mut |m| {
            if let Message::Phase { phase } = m {
                progress.set_message(format!("{label} — {}", phase_word(*phase)));
            }
        }),
        Err(e) => failed_spawn(format!("creating {}: {e}", scratch.display())),
    };
    // The cell's scratch files go with it, also after a crash; an interrupted cell's log goes too.
    let _ = std::fs::remove_dir_all(&scratch);
    record_of(cell, &child, ctx, before, kept_log(&log))
}

/// The record of what `child` did for `cell`, with the conditions it ran in since `before`.
pub(crate) fn record_of(
    cell: &Cell,
    child: &ChildRun,
    ctx: &RunContext<'_>,
    before: Option<crate::run::conditions::CpuTimes>,
    log: Option<String>,
) -> Record {
    let descriptor = ctx.catalog.descriptor(&cell.rig).expect("cells are only made for loaded rigs");
    let mut record = evaluate(cell, descriptor, child, ctx.run_info, log);
    let profile = record.plugin.as_ref().and_then(|p| p.profile.clone());
    if let Some(info) = record.cell.as_mut() {
        info.conditions = Some(crate::run::conditions::conditions(before, profile.as_deref()));
    }
    record
}

/// The log of a cell that ended, kept (its path, for a failure record to point at) when the child wrote
/// something to it and the run was not interrupted; otherwise removed.
pub(crate) fn kept_log(log: &Path) -> Option<String> {
    let interrupted = crate::proc::interrupt::received().is_some();
    let keep = !interrupted && std::fs::metadata(log).map(|m| m.len() > 0).unwrap_or(false);
    if !keep {
        let _ = std::fs::remove_file(log);
    }
    keep.then(|| log.display().to_string())
}

/// `-v`: one line on a cell that ended.
pub(crate) fn cell_note(record: &Record, label: &str) -> String {
    let wall = record.cell.as_ref().map_or(0, |c| c.wall_ms);
    match &record.failure {
        Some(f) => {
            let log = f.log.as_deref().map(|l| format!(" (log: {l})")).unwrap_or_default();
            format!("{label}: FAILED ({}) after {wall} ms: {}{log}", f.cause, f.message)
        }
        None => format!("{label}: measured in {wall} ms"),
    }
}

pub(crate) fn phase_word(phase: Phase) -> &'static str {
    match phase {
        Phase::Load => "loading",
        Phase::Setup => "setup",
        Phase::Warmup => "warm-up",
        Phase::Measure => "measuring",
        Phase::Teardown => "teardown",
    }
}

pub(crate) fn progress_bar(cells: usize) -> ProgressBar {
    // Progress goes to stderr, whenever a person watches it: also when stdout is piped (`run | tee`).
    if crate::run::output::quiet() || !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(cells as u64), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::new(cells as u64);
    let style = ProgressStyle::with_template("[{pos}/{len}] {elapsed_precise} {msg}").expect("valid template");
    bar.set_style(style);
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

#[cfg(test)]
mod tests {
    use super::round_order;

    #[test]
    fn rounds_alternate_between_forward_and_reverse_order() {
        assert_eq!(round_order(3, 0), [0, 1, 2]);
        assert_eq!(round_order(3, 1), [2, 1, 0]);
        assert_eq!(round_order(3, 2), [0, 1, 2]);
        // Over any two consecutive rounds, every cell runs once in each half of the pair's positions.
        let mut positions = [0usize; 3];
        for round in [4, 5] {
            for (position, cell) in round_order(3, round).into_iter().enumerate() {
                positions[cell] += position;
            }
        }
        assert_eq!(positions, [2, 2, 2], "each cell's positions sum to the same total over a pair of rounds");
        assert!(round_order(0, 1).is_empty());
    }

    #[test]
    fn work_dirs_are_private_unpredictable_and_kept_only_while_they_hold_logs() {
        use std::os::unix::fs::PermissionsExt;
        let (a, b) = (super::WorkDir::new("t").unwrap(), super::WorkDir::new("t").unwrap());
        assert_ne!(a.path(), b.path(), "a random name: nothing at a predictable path to plant a symlink at");
        assert_eq!(std::fs::metadata(a.path()).unwrap().permissions().mode() & 0o777, 0o700);
        let (empty, with_log) = (a.path().to_owned(), b.path().to_owned());
        std::fs::write(with_log.join("cell-000.log"), "a failed cell's log").unwrap();
        drop((a, b));
        assert!(!empty.exists(), "an empty work dir goes with the run");
        assert!(with_log.join("cell-000.log").exists(), "a log a failure record points at stays");
        std::fs::remove_dir_all(with_log).unwrap();
    }
}
