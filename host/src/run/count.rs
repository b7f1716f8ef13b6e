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

use crate::plan::matrix::Cell;
use crate::proc::executor::{ChildRun, End, failed_spawn};
use crate::proc::protocol::Message;
use crate::run::context::{CountRun, RunContext, kept_log};
use crate::run::count_dir::CountDir;
use crate::run::valgrind::most_iterations;
use benchhost_record::{Cause, Failure, INSTRUCTIONS, INSTRUCTIONS_UNIT, InstructionCount, Kind, MetricValue, Record};

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
    let (valgrind, near) = (counting.valgrind().clone(), counting.near(&cell.rig));
    let work = ctx.work_dir.path().to_owned();
    let file = |suffix: &str| work.join(format!("{name}-{suffix}"));
    let (totals, log) = (file("totals"), file("count.log"));
    let claimed = CountDir::claim().and_then(|scratch| std::fs::create_dir(&totals).map(|()| scratch));
    let run = match &claimed {
        Ok(scratch) => ctx.executor.execute_count(CountRun {
            cell,
            scratch: scratch.path(),
            totals: &totals,
            log: &log,
            wrapper: valgrind.wrapper(&totals),
            near,
            most: most_iterations(record),
        }),
        Err(e) => failed_spawn(format!("making the count's directories: {e}")),
    };
    drop(claimed);
    let counted = run.messages.iter().find_map(|m| match m {
        Message::Counted { threads, iterations, totals } => Some((*threads, *iterations, *totals)),
        _ => None,
    });
    let functions = counted.map_or_else(Vec::new, |(_, iterations, _)| functions_of(&totals, iterations));
    let _ = std::fs::remove_dir_all(&totals);
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
        functions,
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

/// The functions of the counted iterations, from the last pair's Cachegrind files in `totals` (none when a
/// file is missing: the count still stands on its totals).
fn functions_of(totals: &std::path::Path, iterations: u64) -> Vec<benchhost_record::FunctionCount> {
    let [short, long] =
        crate::proc::protocol::CountTask::LAST.map(|name| std::fs::read_to_string(totals.join(name)).ok());
    match (short, long) {
        (Some(short), Some(long)) => crate::run::cachegrind::per_iteration(&short, &long, iterations),
        _ => Vec::new(),
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
