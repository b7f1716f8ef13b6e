//! `run --instructions`: each iterations-style cell's instructions per iteration, counted under Valgrind
//! beside its wall time. A deterministic second opinion: the same build and inputs count the same on every
//! run, whatever the machine's weather, though they miss what the kernel, I/O and the caches do.
//!
//! How (`child/count.rs`): one process under `valgrind --tool=cachegrind --cache-sim=no` loads the plugin and
//! sets the rig up, then forks pairs: one fork runs m iterations, its twin 2m. Both start from Cachegrind's
//! counters as they stood at the fork, so the difference of their totals is m iterations alone: load, set-up,
//! `prepare` and the host's code cancel exactly. (Valgrind 3.19, Debian's, has no Cachegrind client requests
//! to mark a region; Callgrind has them but runs ~27x slower than native where Cachegrind runs 4-5x.) This
//! module runs that process and turns what it counted into the record's metric, or into a failure.

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

/// Native time the m iterations of a count may take at most (from the cell's time per iteration): for
/// iterations whose time is in the kernel; CPU-bound ones reach their instructions first.
pub const NATIVE_NS: f64 = 100e6;

/// The most m may be for `record`'s time per iteration (from its warm-up): a power of two.
pub fn most_iterations(record: &Record) -> u64 {
    let per_iteration = record
        .cell
        .as_ref()
        .filter(|c| c.warmup_iterations > 0 && c.warmup_ns > 0)
        .map_or(1.0, |c| c.warmup_ns as f64 / c.warmup_iterations as f64);
    let most = (NATIVE_NS / per_iteration).clamp(1.0, (1u64 << 40) as f64) as u64;
    1 << (63 - most.leading_zeros())
}

/// How much longer than the cell's deadline a count may take: Valgrind's JIT slows set-up too.
pub const DEADLINE_FACTOR: u32 = 4;

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

    /// The command line that runs a program under Cachegrind, each process's totals written to `totals`.
    pub fn wrapper(&self, totals: &Path) -> Vec<OsString> {
        let mut line = vec![self.program.clone().into_os_string()];
        line.extend(OPTIONS.iter().map(OsString::from));
        line.push(format!("--cachegrind-out-file={}", totals.join("cachegrind.%p").display()).into());
        line
    }
}

/// What `run --instructions` needs through a run: Valgrind, and the m each rig's counts used.
#[derive(Debug, Clone)]
pub struct Counting {
    valgrind: Valgrind,
    /// Per rig, the m its counts used, the one to prefer first: this run's newest, then the stream's newest.
    sized: BTreeMap<String, Vec<u64>>,
}

impl Counting {
    /// Counting with `valgrind`, preferring the m the output stream's counts used: `previous` is (rig, m), the
    /// newest use last.
    pub fn new(valgrind: Valgrind, previous: &[(String, u64)]) -> Counting {
        let mut counting = Counting { valgrind, sized: BTreeMap::new() };
        for (rig, m) in previous {
            counting.used(rig, *m);
        }
        counting
    }

    /// Remembers that a count of `rig` used `m`, first among the ones to prefer.
    fn used(&mut self, rig: &str, m: u64) {
        let sized = self.sized.entry(rig.to_string()).or_default();
        sized.retain(|&n| n != m);
        sized.insert(0, m);
    }
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
    pub wrapper: Vec<OsString>,
    /// The m of the rig's earlier counts, to prefer (see [`crate::proc::protocol::CountTask`]).
    pub near: Vec<u64>,
    /// The most m may be.
    pub most: u64,
}

/// Counts `cell`'s instructions per iteration and adds them to its measurement `record`: the metric, and
/// `cell.instructions` saying how (or why there is no number). A count whose process crashes or fails makes
/// the record a failure, its wall-time metrics salvaged. `name` names the count's files in the work dir.
pub fn count(cell: &Cell, record: &mut Record, ctx: &mut RunContext<'_>, name: &str) {
    let iterations_style =
        ctx.catalog.descriptor(&cell.rig).is_some_and(|d| d.style == benchhost_plugin_api::Style::Iterations);
    let Some(counting) = ctx.instructions.as_ref() else { return };
    if record.kind != Kind::Measurement || !iterations_style {
        return;
    }
    let (valgrind, near) = (counting.valgrind.clone(), counting.sized.get(&cell.rig).cloned().unwrap_or_default());
    let work = ctx.work_dir.path().to_owned();
    let file = |suffix: &str| work.join(format!("{name}-{suffix}"));
    let (scratch, totals, log) = (file("count"), file("totals"), file("count.log"));
    let run = match std::fs::create_dir(&scratch).and_then(|()| std::fs::create_dir(&totals)) {
        Ok(()) => ctx.executor.execute_count(CountRun {
            cell,
            scratch: &scratch,
            totals: &totals,
            log: &log,
            wrapper: valgrind.wrapper(&totals),
            near,
            most: most_iterations(record),
        }),
        Err(e) => failed_spawn(format!("creating the count's directories in {}: {e}", work.display())),
    };
    let _ = std::fs::remove_dir_all(&scratch);
    let _ = std::fs::remove_dir_all(&totals);
    let counted = run.messages.iter().find_map(|m| match m {
        Message::Counted { threads, iterations, totals } => Some((*threads, *iterations, *totals)),
        _ => None,
    });
    let Some((threads, iterations, totals)) = counted.filter(|_| run.end == End::Exited(0)) else {
        return fail(cell, record, &run, ctx, kept_log(&log));
    };
    let _ = std::fs::remove_file(&log);
    let mut count = InstructionCount {
        tool: valgrind.tool(),
        iterations,
        totals: totals.map(Vec::from).unwrap_or_default(),
        threads,
        wall_ms: run.wall.as_millis() as u64,
        unclean: None,
    };
    match count.per_iteration() {
        Ok(value) => {
            let metric =
                MetricValue { value, unit: INSTRUCTIONS_UNIT.into(), higher_is_better: false, ci95: None, n: Some(1) };
            record.metrics.insert(INSTRUCTIONS.into(), metric);
            if let Some(counting) = ctx.instructions.as_mut() {
                counting.used(&cell.rig, iterations);
            }
        }
        Err(why) => count.unclean = Some(why),
    }
    if let Some(info) = record.cell.as_mut() {
        info.instructions = Some(count);
    }
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
    fn the_newest_m_of_a_rig_is_preferred_the_stream_s_first() {
        let valgrind = Valgrind { program: "valgrind".into(), version: "valgrind-3.19.0".into() };
        let counted = |bench: &str, m: u64| (bench.to_string(), m);
        let mut counting = Counting::new(valgrind, &[counted("wal", 8), counted("wal", 16), counted("ingest", 64)]);
        assert_eq!(counting.sized["wal"], [16, 8], "the stream's newest first");
        counting.used("wal", 4);
        counting.used("wal", 8);
        assert_eq!(counting.sized["wal"], [8, 4, 16], "this run's newest first, each once");
        assert_eq!(counting.sized["ingest"], [64]);
    }

    #[test]
    fn the_cell_s_time_bounds_m_for_iterations_spent_in_the_kernel() {
        let mut record = Record::new("r", Kind::Measurement, RunInfo::for_tests(1, None), Default::default());
        let with = |ns: u64, n: u64| CellInfo { warmup_ns: ns, warmup_iterations: n, ..CellInfo::default() };
        record.cell = Some(with(1_000_000_000, 16_000)); // 62.5 µs per iteration: 1,600 in 100 ms
        assert_eq!(most_iterations(&record), 1024);
        record.cell = Some(with(1_000_000_000, 1)); // a second each: one, never zero
        assert_eq!(most_iterations(&record), 1);
    }

    #[test]
    fn cachegrind_writes_each_process_to_a_file_named_by_its_pid() {
        let valgrind = Valgrind { program: "valgrind".into(), version: "valgrind-3.19.0".into() };
        let line = valgrind.wrapper(Path::new("/w/totals"));
        assert_eq!(line.last().unwrap(), "--cachegrind-out-file=/w/totals/cachegrind.%p");
        assert_eq!(valgrind.tool(), "valgrind-3.19.0 --tool=cachegrind --cache-sim=no --branch-sim=no");
    }
}
