//! Which arms duel and how: the pairing mode of a rig's arms, the duels of a run (each arm against its
//! reference, or each cell against its twin on the other build), and the shape of one duel process. Plans
//! only; `duels.rs` runs them.

use crate::plan::matrix::Cell;

/// How the two arms of a duel are measured side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In one process, samples alternating (iterations-style rigs).
    Alternate,
    /// In one process, whole runs alternating, A B B A ... (run-style rigs).
    Runs,
    /// In one process, short windows of both arms' continuing workloads alternating, A B B A ... (run-style
    /// rigs that declare `windows`).
    Windows,
    /// In two processes at once, one per core, the cores swapped between rounds.
    Concurrent,
}

impl Mode {
    /// Processes per duel: `asked` (`--rounds`), else [`PROCESSES`] for alternating samples and
    /// [`CONCURRENT_ROUNDS`] for concurrent ones.
    pub fn processes(self, asked: Option<u32>) -> u32 {
        asked.unwrap_or(match self {
            Mode::Alternate => PROCESSES,
            Mode::Runs | Mode::Windows => RUN_PROCESSES,
            Mode::Concurrent => CONCURRENT_ROUNDS,
        })
    }

    /// Its name in records and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Alternate => "alternate",
            Mode::Runs => "alternate_runs",
            Mode::Windows => "alternate_windows",
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

/// Processes per duel (or rounds) of a paired run under `--quick`, a smoke run: two in each order of the arms,
/// and none added while the verdict is undecided. Its intervals are wide (Student's t with 3 degrees of
/// freedom); it says the comparison runs, not what it decides.
pub const QUICK_PROCESSES: u32 = 4;

/// The least processes of an alternating duel whose processes are costly (see [`processes_for`]).
pub const LEAST_PROCESSES: u32 = 10;

/// What an alternating duel's processes may cost beyond their measuring, in all: spawning, the libraries'
/// private copies, both arms' set-ups and teardowns. On the project's 2-core VM a harness process costs ~0.02 s
/// of that, a compaction one ~0.25 s, a querier one (two DataFusion set-ups, two 151 MB copies) ~0.7 s: 20 of
/// those made a querier comparison 42 s where it measures 8 s.
pub const OVERHEAD_BUDGET_NS: u64 = 5_000_000_000;

/// Processes of an alternating duel (without `--rounds`) whose processes cost `overhead_ns` each beyond their
/// measuring: [`PROCESSES`] while they fit in [`OVERHEAD_BUDGET_NS`], fewer for costlier ones, down to
/// [`LEAST_PROCESSES`]. The count depends on the cost alone, never on what was measured, so the interval stays
/// honest; it is only wider, and a duel whose verdict is left undecided gets more processes as any other does.
///
/// Always even, so that each arm is loaded, set up and measured first in as many processes as the other: which
/// goes first matters. Over the A/A comparisons of `results/rigs-proof.json` (AMD VM), the arm loaded and set up
/// first measured 1.4% slower in cache_tier's processes with the DataFusion origin (mean log ratio -0.69% in
/// processes where side 0 went first, +0.74% where side 1 did; 40 comparisons) and 1.0% in the querier's cold
/// lookup, and with an odd count (compaction's duels, sized at 0.3-0.38 s a process, ran 13 to 16: odd in 22 of
/// 40) one order had one process more: a bias of the order's effect over the processes, the same way every time.
pub fn processes_for(overhead_ns: u64) -> u32 {
    let fit = (OVERHEAD_BUDGET_NS / overhead_ns.max(1)).clamp(u64::from(LEAST_PROCESSES), u64::from(PROCESSES));
    (fit & !1) as u32
}

/// Processes of a run-style duel unless `--rounds` says otherwise, as [`LEAST_PROCESSES`] of an alternating
/// one, and like them more while the answer is left to chance. Measured on the project's 2-core VM (A/A of
/// byte-identical libraries, the estimates of 12 processes each): the spread between processes is all the
/// runs' own (wal_log `fsync=none`: 7.4% a run, 2.5% a process of ~8 pairs; kafka_topology at 10 µs: 2.4-3.3% a
/// run, 2.2-2.6% a process of 2 pairs); what 6 processes lacked was degrees of freedom: the trimmed mean keeps
/// 4 of them, t = 3.18, and wal_log's CI95 read +-4-6% (`inconclusive` 3 of 3) where 12 processes read +-1.2%.
pub const RUN_PROCESSES: u32 = LEAST_PROCESSES;

/// Time each process of a run-style duel spends on its pairs of runs (whole A B B A blocks, at least one).
pub const RUN_BUDGET_NS: u64 = 2_000_000_000;

/// One window of a windowed duel ([`Mode::Windows`]). Measured on the project's 2-core VM (kafka_topology at
/// 10 µs, one 20 s run's consumption in 100 ms bins, 3 runs): adjacent windows of one workload, taken as an
/// A/A pair, differ by 4.6-6.3% at 100 ms, 3.2-4.2% at 200 ms and 2.6-3.0% at 500 ms, so the error of a mean
/// over a given time is about the same from 100 to 500 ms (0.5-0.65% per 20 s), while whole 2 s runs in A B B
/// A differ by 3.8% a pair of 5 s: 1.7% per 20 s. A slow phase of the machine (seconds long) falls on both
/// arms of a window pair.
pub const WINDOW_NS: u64 = 250_000_000;

/// Time each process of a windowed duel spends on its pairs of windows.
pub const WINDOW_BUDGET_NS: u64 = 2_000_000_000;

/// Pairs of runs in one process of a run-style duel, at most.
pub const RUN_PAIRS: u32 = 64;

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
    /// A run-style duel's window of each arm's continuing workload (`SetupContext::window_ns`); `None`: whole
    /// runs.
    pub window_ns: Option<u64>,
}

impl Shape {
    /// A cell's plan spread over `processes`: each arm gets the plan's warm-up and measurement time in all, a
    /// share in each process, in samples of at most [`SAMPLE_NS`] (at least 10 pairs per process).
    pub fn of(plan: &crate::plan::settings::Plan, processes: u32) -> Shape {
        let processes = u64::from(processes.max(1));
        let sample_ns = plan.sample_ns.clamp(1, SAMPLE_NS);
        let measurement = plan.sample_ns.saturating_mul(u64::from(plan.samples)) / processes;
        let pairs = measurement.div_ceil(sample_ns).clamp(10, u64::from(u32::MAX)) as u32;
        Shape { warmup_ns: plan.warmup_ns / processes, sample_ns, pairs, window_ns: None }
    }

    /// A run-style duel's process: pairs of runs for [`RUN_BUDGET_NS`] or the plan's measurement time if
    /// shorter (`sample_ns` is that budget), at most [`RUN_PAIRS`], and no warm-up run: a process's first run
    /// is balanced by the order (A B B A, the arm that goes first swapped between processes), and a warm-up
    /// run of each arm did not make it less different (kafka_topology: the first run of a process read 1.8%
    /// below the mean without one, 1.0% with one, the same within the noise) while it made each kafka process
    /// 15 s instead of 10.
    pub fn runs(plan: &crate::plan::settings::Plan) -> Shape {
        let measurement = plan.sample_ns.saturating_mul(u64::from(plan.samples));
        Shape { warmup_ns: 0, sample_ns: measurement.min(RUN_BUDGET_NS), pairs: RUN_PAIRS, window_ns: None }
    }

    /// A windowed duel's process ([`Mode::Windows`]): one window of each arm to start both workloads, not
    /// counted, then pairs of [`WINDOW_NS`] windows for [`WINDOW_BUDGET_NS`] or the plan's measurement time if
    /// shorter (whole A B B A blocks, at least one), the windows shorter too when two pairs would not fit in it
    /// (`--quick`).
    pub fn windows(plan: &crate::plan::settings::Plan) -> Shape {
        let measurement = plan.sample_ns.saturating_mul(u64::from(plan.samples));
        let sample_ns = measurement.min(WINDOW_BUDGET_NS);
        Shape { warmup_ns: 0, sample_ns, pairs: u32::MAX, window_ns: Some(WINDOW_NS.min(sample_ns / 4).max(1)) }
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

/// The duels of a run: each of its comparisons `pairs` (`[reference, arm]` indices into `cells`: a cell and its
/// twin, or two arms of a rig) whose rig `mode_of` gives a mode; a rig it gives none runs in rounds.
pub fn duels_of(cells: &[Cell], pairs: &[[usize; 2]], mode_of: &dyn Fn(&str) -> Option<Mode>) -> Vec<Duel> {
    pairs.iter().filter_map(|&arms| Some(Duel { arms, mode: mode_of(&cells[arms[1]].rig)? })).collect()
}

#[cfg(test)]
#[path = "duel_plan_tests.rs"]
mod tests;
