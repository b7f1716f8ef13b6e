//! `run --instructions`: each iterations-style cell's instructions per iteration, counted under Valgrind
//! beside its wall time. A deterministic second opinion: the same build and inputs count the same on every
//! run, whatever the machine's weather, though they miss what the kernel, I/O and the caches do.
//!
//! How: one process under `valgrind --tool=cachegrind --cache-sim=no` loads the plugin, sets the rig up and
//! prepares the inputs of 2m iterations, then forks twice (`child/count.rs`): one fork runs m iterations, the
//! other 2m. Both start from Cachegrind's counters as they stood at the fork, so the difference of their
//! totals is m iterations alone: load, set-up, `prepare` and the host's code cancel exactly. (Valgrind 3.19,
//! Debian's, has no Cachegrind client requests to mark a region; Callgrind has them but runs ~27x slower than
//! native where Cachegrind runs 4-5x.)

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::plan::matrix::Cell;
use crate::proc::executor::{ChildRun, End, failed_spawn};
use crate::proc::protocol::Message;
use crate::run::runner::{RunContext, kept_log};
use benchhost_record::{Cause, Failure, INSTRUCTIONS, INSTRUCTIONS_UNIT, InstructionCount, Kind, MetricValue, Record};

/// Valgrind, found on `PATH`.
#[derive(Debug, Clone)]
pub struct Valgrind {
    program: PathBuf,
    /// What `valgrind --version` says, e.g. `valgrind-3.19.0`.
    version: String,
}

/// Cachegrind without its cache and branch simulation: instructions only, 4-5x slower than native here.
const OPTIONS: [&str; 4] = ["--tool=cachegrind", "--cache-sim=no", "--branch-sim=no", "-q"];

/// Native time of the longer fork's iterations: long enough that the instructions around them are noise
/// in the difference, short enough that a count takes seconds under Valgrind.
const COUNTED_NS: f64 = 40e6;

/// How much longer than the cell's deadline a counting process may take: Valgrind's JIT slows set-up too.
pub const DEADLINE_FACTOR: u32 = 20;

impl Valgrind {
    /// Valgrind, or one line saying how to install it.
    pub fn find() -> Result<Valgrind, String> {
        let program = PathBuf::from("valgrind");
        match Command::new(&program).arg("--version").output() {
            Ok(out) if out.status.success() => {
                Ok(Valgrind { program, version: String::from_utf8_lossy(&out.stdout).trim().to_string() })
            }
            Ok(out) => Err(format!(
                "--instructions: `valgrind --version` failed ({}); reinstall Valgrind (Debian/Ubuntu: \
                 sudo apt-get install valgrind)",
                out.status
            )),
            Err(_) => Err("--instructions counts with Valgrind, which is not installed: install it \
                 (Debian/Ubuntu: sudo apt-get install valgrind; Fedora: sudo dnf install valgrind)"
                .to_string()),
        }
    }

    /// The tool as records name it.
    pub fn tool(&self) -> String {
        format!("{} {}", self.version, OPTIONS[..3].join(" "))
    }

    /// The command line that runs a program under Cachegrind, its totals written to `out`.
    pub fn wrapper(&self, out: &Path) -> Vec<OsString> {
        let mut line = vec![self.program.clone().into_os_string()];
        line.extend(OPTIONS.iter().map(OsString::from));
        line.push(format!("--cachegrind-out-file={}", out.display()).into());
        line
    }
}

/// What `run --instructions` needs through a run: Valgrind, and the iterations already counted per rig.
#[derive(Debug, Clone)]
pub struct Counting {
    valgrind: Valgrind,
    /// Per rig, the iterations its counts used, the one to prefer first: this run's newest, then the stream's.
    sized: BTreeMap<String, Vec<u64>>,
}

impl Counting {
    /// Counting with `valgrind`, sized as the counts among `previous` records (the output stream) were.
    pub fn new(valgrind: Valgrind, previous: &[Record]) -> Counting {
        let mut sized: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for record in previous.iter().rev() {
            if let Some(count) = record.cell.as_ref().and_then(|c| c.instructions.as_ref()) {
                let rig = sized.entry(record.bench.clone()).or_default();
                if !rig.contains(&count.iterations) {
                    rig.push(count.iterations);
                }
            }
        }
        Counting { valgrind, sized }
    }

    /// The iterations to count `record` of `rig` with: those of an earlier count of the rig (in this run, else
    /// the newest in the stream) when they are within a factor of 4 of what its own time asks for, so that arms
    /// compared with each other (A/A replicas, a spin, two builds) and a series from night to night count the
    /// same iterations, even where their times straddle a power of two. (A rig whose state grows with the
    /// iterations counts a little more per iteration after more of them: the harness's wal, 0.13% more at 16
    /// than at 8.)
    fn iterations(&mut self, rig: &str, record: &Record) -> u64 {
        let wanted = iterations_for(record);
        let sized = self.sized.entry(rig.to_string()).or_default();
        match sized.iter().find(|&&m| m <= wanted.saturating_mul(4) && wanted <= m.saturating_mul(4)) {
            Some(&m) => m,
            None => {
                sized.insert(0, wanted);
                wanted
            }
        }
    }
}

/// A count, as the runner asks for it.
pub struct CountRun<'a> {
    /// The cell counted.
    pub cell: &'a Cell,
    /// Its scratch directory.
    pub scratch: &'a Path,
    /// Its log.
    pub log: &'a Path,
    /// The tool's command line.
    pub wrapper: Vec<OsString>,
    /// The iterations of the shorter fork (the longer runs twice as many).
    pub iterations: u64,
}

/// The iterations of the shorter fork: a power of two near half of [`COUNTED_NS`] of the cell's time per
/// iteration (from its warm-up), so that two runs of a cell whose time moves a little count alike.
pub fn iterations_for(record: &Record) -> u64 {
    let per_iteration = record
        .cell
        .as_ref()
        .filter(|c| c.warmup_iterations > 0 && c.warmup_ns > 0)
        .map_or(1e3, |c| c.warmup_ns as f64 / c.warmup_iterations as f64);
    let wanted = (COUNTED_NS / 2.0 / per_iteration).clamp(1.0, (1u64 << 40) as f64) as u64;
    1 << (63 - wanted.leading_zeros())
}

/// Counts `cell`'s instructions per iteration and adds them to its measurement `record`: the metric, and
/// `cell.instructions` saying how (or why there is no number). A count whose process crashes or fails makes
/// the record a failure, its wall-time metrics salvaged. `name` names the count's files in the work dir.
pub fn count(cell: &Cell, record: &mut Record, ctx: &mut RunContext<'_>, name: &str) {
    let iterations_style =
        ctx.catalog.descriptor(&cell.rig).is_some_and(|d| d.style == benchhost_plugin_api::Style::Iterations);
    let Some(counting) = ctx.instructions.as_mut() else { return };
    if record.kind != Kind::Measurement || !iterations_style {
        return;
    }
    let iterations = counting.iterations(&cell.rig, record);
    let valgrind = counting.valgrind.clone();
    let work = ctx.work_dir.path().to_owned();
    let file = |suffix: &str| work.join(format!("{name}-{suffix}"));
    let (scratch, totals, log) = (file("count"), file("totals"), file("count.log"));
    let run = match std::fs::create_dir(&scratch).and_then(|()| std::fs::create_dir(&totals)) {
        Ok(()) => ctx.executor.execute_count(CountRun {
            cell,
            scratch: &scratch,
            log: &log,
            wrapper: valgrind.wrapper(&totals.join("cachegrind.%p")),
            iterations,
        }),
        Err(e) => failed_spawn(format!("creating the count's directories in {}: {e}", work.display())),
    };
    let counted = run.messages.iter().find_map(|m| match m {
        Message::Counted { threads, forks } => Some((*threads, *forks)),
        _ => None,
    });
    let forks = counted.and_then(|(_, forks)| forks);
    let read = forks.map(|pids| pids.map(|pid| total(&totals.join(format!("cachegrind.{pid}")))));
    let _ = std::fs::remove_dir_all(&scratch);
    let _ = std::fs::remove_dir_all(&totals);
    let Some((threads, _)) = counted.filter(|_| run.end == End::Exited(0)) else {
        return fail(cell, record, &run, ctx, kept_log(&log));
    };
    let _ = std::fs::remove_file(&log);
    let mut count = InstructionCount {
        tool: valgrind.tool(),
        iterations,
        totals: read.map(|t| t.into_iter().flatten().collect()).unwrap_or_default(),
        threads,
        wall_ms: run.wall.as_millis() as u64,
        unclean: None,
    };
    match count.per_iteration() {
        Ok(value) => {
            let metric =
                MetricValue { value, unit: INSTRUCTIONS_UNIT.into(), higher_is_better: false, ci95: None, n: Some(1) };
            record.metrics.insert(INSTRUCTIONS.into(), metric);
        }
        Err(why) => count.unclean = Some(why),
    }
    if let Some(info) = record.cell.as_mut() {
        info.instructions = Some(count);
    }
}

/// The instructions Cachegrind counted, from its `summary:` line.
fn total(out: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(out).ok()?;
    text.lines().find_map(|l| l.strip_prefix("summary:")).and_then(|n| n.split_whitespace().next()?.parse().ok())
}

/// Makes `record` the failure of the counting process `run`, classified as any cell's (a signal, a rig
/// error, a deadline), its message saying it happened under Valgrind, the wall-time metrics salvaged.
fn fail(cell: &Cell, record: &mut Record, run: &ChildRun, ctx: &RunContext<'_>, log: Option<String>) {
    let descriptor = ctx.catalog.descriptor(&cell.rig).expect("cells are only made for loaded rigs");
    let seen = crate::run::evaluate::evaluate(cell, descriptor, run, ctx.run_info, log.clone());
    let mut failure = seen.failure.unwrap_or_else(|| Failure {
        cause: Cause::Protocol,
        phase: None,
        message: "the counting process ended without counting".into(),
        signal: None,
        exit_code: None,
        stderr_tail: run.stderr_tail.clone(),
        log,
        salvaged: vec![],
    });
    failure.message = format!("counting instructions under Valgrind: {}", failure.message);
    failure.salvaged = vec![serde_json::json!({ "metrics": record.metrics })];
    record.kind = Kind::Failure;
    record.metrics.clear();
    record.failure = Some(failure);
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchhost_record::{CellInfo, RunInfo};

    #[test]
    fn the_iterations_are_a_power_of_two_sized_on_the_warm_up() {
        let mut record = Record::new("r", Kind::Measurement, RunInfo::for_tests(1, None), Default::default());
        let with = |ns: u64, n: u64| CellInfo { warmup_ns: ns, warmup_iterations: n, ..CellInfo::default() };
        record.cell = Some(with(1_000_000_000, 1_000_000_000)); // 1 ns: 20 ms is 2 x 10^7 iterations
        assert_eq!(iterations_for(&record), 1 << 24);
        record.cell = Some(with(1_000_000_000, 1_050_000_000)); // a little faster: the same count
        assert_eq!(iterations_for(&record), 1 << 24);
        record.cell = Some(with(1_000_000_000, 2)); // half a second each: one iteration, never zero
        assert_eq!(iterations_for(&record), 1);
    }

    #[test]
    fn arms_of_a_rig_and_nights_of_a_series_count_the_same_iterations() {
        let valgrind = Valgrind { program: "valgrind".into(), version: "valgrind-3.19.0".into() };
        let with = |ns: u64, n: u64, bench: &str| {
            let mut record = Record::new(bench, Kind::Measurement, RunInfo::for_tests(1, None), Default::default());
            record.cell = Some(CellInfo { warmup_ns: ns, warmup_iterations: n, ..CellInfo::default() });
            record
        };
        let mut last_night = with(1, 1, "wal");
        last_night.cell.as_mut().unwrap().instructions =
            Some(InstructionCount { iterations: 16, ..Default::default() });
        let mut counting = Counting::new(valgrind, &[last_night]);
        // 1.3 ms per iteration asks for 8 iterations (20 ms): last night's 16 are near enough, and are kept.
        assert_eq!(counting.iterations("wal", &with(1_300_000, 1, "wal")), 16);
        // 1 ns asks for 2^24: far from 16, so its own, which the next arm near it then shares.
        assert_eq!(counting.iterations("wal", &with(1, 1, "wal")), 1 << 24);
        assert_eq!(counting.iterations("wal", &with(1_000_000_000, 1_900_000_000, "wal")), 1 << 24);
        assert_eq!(counting.iterations("sort", &with(1_300_000, 1, "sort")), 8, "another rig sizes its own");
    }

    #[test]
    fn the_total_is_read_from_the_summary_line() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("c.out");
        std::fs::write(&out, "desc: I1 cache:\ncmd: x\nevents: Ir\nfl=a.rs\n1 5\nsummary: 120127019\n").unwrap();
        assert_eq!(total(&out), Some(120_127_019));
        assert_eq!(total(&dir.path().join("missing")), None);
    }
}
