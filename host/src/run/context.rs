//! What every loop of a run shares: the executor seam (how one cell, duel process, pair or count is run), the
//! run's context (descriptors, provenance, scratch space, rounds, counting), what cells gave, and the small
//! steps every loop takes around a child: its record, its log, its line under `-v`, its progress bar.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::plan::matrix::{Catalog, Cell};
use crate::proc::executor::ChildRun;
use crate::proc::protocol::{Message, Phase};
use crate::run::conditions::{self, CpuTimes};
use crate::run::duel_plan::Shape;
use crate::run::evaluate::evaluate;
use crate::run::valgrind::Counting;
use benchhost_record::sink::Sink;
use benchhost_record::{Record, RunInfo};

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
    /// Whether `cell`'s library can be had in other code layouts (its build kept its link: `benchhost build`).
    fn has_layouts(&self, _cell: &Cell) -> bool {
        false
    }
    /// Whether layouts of `cell`'s library not made yet can be linked (its link is at hand, not only layouts
    /// copied without it).
    fn links_layouts(&self, _cell: &Cell) -> bool {
        false
    }
    /// The size of `cell`'s library, which bounds how many layouts of it a comparison draws from.
    fn library_bytes(&self, _cell: &Cell) -> Option<u64> {
        None
    }
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
    pub shape: Shape,
    /// Each arm's code layout in this process: the seed of the variant of its library it loads, or its
    /// library as built.
    pub layouts: [Option<u64>; 2],
}

/// A count, as the runner asks for it.
pub struct CountRun<'a> {
    /// The cell counted.
    pub cell: &'a Cell,
    /// Its scratch directory.
    pub scratch: &'a Path,
    /// Where Cachegrind writes each process's totals.
    pub totals: &'a Path,
    /// Its log.
    pub log: &'a Path,
    /// The tool's command line.
    pub wrapper: Vec<std::ffi::OsString>,
    /// The m of the rig's earlier counts, to prefer (see [`crate::proc::protocol::CountTask`]).
    pub near: Vec<u64>,
    /// The most m may be.
    pub most: u64,
}

/// What cells gave: one record per cell (rounds combined), and every round's own record per cell.
pub struct Outcome {
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
    /// Records this run has written so far, for the message of an interrupted run.
    pub written: usize,
    /// Code layouts in duels: `None` each arm's library as built in every process (`--layouts 1`), else the
    /// layouts a side draws its pairs from, each pair in two processes ([`crate::analysis::layouts::Draw`]).
    pub layouts: Option<usize>,
}

impl RunContext<'_> {
    /// The record of what `child` did for `cell`, with the conditions it ran in since `before`.
    pub fn record_from_child(
        &self,
        cell: &Cell,
        child: &ChildRun,
        before: Option<CpuTimes>,
        log: Option<String>,
    ) -> Record {
        let descriptor = self.catalog.descriptor(&cell.rig).expect("cells are only made for loaded rigs");
        let mut record = evaluate(cell, descriptor, child, self.run_info, log);
        let profile = record.plugin.as_ref().and_then(|p| p.profile.clone());
        if let Some(info) = record.cell.as_mut() {
            let mut conditions = conditions::conditions(before, profile.as_deref());
            conditions.idle_arm_cpu_percent = child.messages.iter().find_map(|m| match m {
                Message::IdleCpu { busy_ns, during_ns } if *during_ns > 0 => {
                    Some((*busy_ns as f64 * 100.0 / *during_ns as f64 * 100.0).round() / 100.0)
                }
                _ => None,
            });
            info.conditions = Some(conditions);
        }
        record
    }

    /// The error of a run stopped by `signal` during `during`, saying what it kept in `sink`.
    pub fn interrupted(&self, signal: i32, during: String, sink: &Sink) -> anyhow::Error {
        let (records, are) = if self.written == 1 { ("record", "is") } else { ("records", "are") };
        let kept = format!("the {} {records} written before {are} kept in {}", self.written, sink.path().display());
        anyhow::Error::from(crate::proc::interrupt::Interrupted { signal, during, kept })
    }
}

/// The order of the cells in `round`: as listed in even rounds, reversed in odd ones. A fixed order would give
/// every arm the same neighbours and the same place in the round on every round, so anything that depends on
/// position (the machine warming up after a long cell, a cache another process left behind) would read as a
/// difference between arms; reversing turns it into noise the paired CI sees, and cancels a linear drift over
/// each pair of rounds.
pub fn round_order(cells: usize, round: usize) -> Vec<usize> {
    if round.is_multiple_of(2) { (0..cells).collect() } else { (0..cells).rev().collect() }
}

/// The log of a cell that ended, kept (its path, for a failure record to point at) when the child wrote
/// something to it and the run was not interrupted; otherwise removed.
pub fn kept_log(log: &Path) -> Option<String> {
    let interrupted = crate::proc::interrupt::received().is_some();
    let keep = !interrupted && std::fs::metadata(log).map(|m| m.len() > 0).unwrap_or(false);
    if !keep {
        let _ = std::fs::remove_file(log);
    }
    keep.then(|| log.display().to_string())
}

/// `-v`: one line on a cell that ended.
pub fn cell_note(record: &Record, label: &str) -> String {
    let wall = record.cell.as_ref().map_or(0, |c| c.wall_ms);
    match &record.failure {
        Some(f) => {
            let log = f.log.as_deref().map(|l| format!(" (log: {l})")).unwrap_or_default();
            format!("{label}: FAILED ({}) after {wall} ms: {}{log}", f.cause, f.message)
        }
        None => format!("{label}: measured in {wall} ms"),
    }
}

/// A handler of a child's messages that shows its phase after `label` on the progress bar.
pub fn show_phase<'a>(label: &'a str, progress: &'a ProgressBar) -> impl FnMut(&Message) + 'a {
    move |message| {
        if let Message::Phase { phase } = message {
            progress.set_message(format!("{label} — {}", phase_label(*phase)));
        }
    }
}

fn phase_label(phase: Phase) -> &'static str {
    match phase {
        Phase::Load => "loading",
        Phase::Setup => "setup",
        Phase::Warmup => "warm-up",
        Phase::Measure => "measuring",
        Phase::Teardown => "teardown",
    }
}

/// A progress bar of `steps` on stderr, hidden under `-q` or when nobody watches.
pub fn progress_bar(steps: usize) -> ProgressBar {
    // Progress goes to stderr, whenever a person watches it: also when stdout is piped (`run | tee`).
    if crate::run::output::quiet() || !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::new(steps as u64);
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
