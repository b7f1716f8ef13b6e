//! benchhost: a benchmark harness for data systems. It loads benchmark *rigs* from native plugins
//! (`cdylib`s built against `benchhost-plugin-api`), expands the matrix of `rigs.toml` into *cells*, runs
//! every cell in its own child process (so a rig that panics, crashes or hangs costs one `failure` record,
//! not the run), and appends one versioned JSON-lines record per cell to a results stream
//! (`benchhost-record`).
//!
//! One folder per stage; each uses only the folders before it in this list, the table of `layout_tests.rs`,
//! which also checks that no two files of a folder import each other in a circle:
//! `stats` (pure arithmetic) → `plan` (what to run: the matrix and each cell's settings) → `analysis`
//! (verdicts, pure; uses `stats`) → `report` (text, pure; uses `analysis`) → `import` (Criterion's results,
//! alone) → `proc` (one child process, its protocol, signals) → `plugin` (finding and opening libraries) →
//! `child` (measuring inside the child) → `run` (cells to records, and the verdicts of its pairing) → `cli`
//! (the commands: parse and dispatch). Records and results files are `benchhost-record`'s.
//!
//! Where each feature lives:
//! - **A run** (`benchhost run`): `cli/run_matrix.rs` dispatches; `run/schedule.rs` runs the duels, then the rest
//!   in rounds (`run/in_rounds.rs`), each cell a child (`run/child_executor.rs` → `proc/executor.rs` →
//!   `child/cell.rs`), its record made by `run/evaluate.rs` and ended by `run/finish.rs` (rounds combined,
//!   counted, written). The seam every loop shares, and tests replace, is `run/context.rs`.
//! - **A duel** (`--pairing alternate|concurrent`, `--against`): which arms duel is `run/duel_plan.rs`; the
//!   loop over processes `run/duels.rs`; one process `run/duel_process.rs` (the child's side: `child/duel.rs`);
//!   the paired estimate and its verdict `analysis/duel.rs`; the other build's plugins `plugin/against.rs`.
//! - **An instruction count** (`--instructions`): `run/valgrind.rs` (the tool), `run/count.rs` (one count and
//!   its metric), `child/count.rs` (the forks under Cachegrind), `analysis/instructions.rs` (its verdict).
//! - **A verdict**: the rule is `analysis/decision.rs`; against a baseline or the stream `analysis/compare.rs`;
//!   of interleaved rounds `analysis/rounds.rs`; of a duel `analysis/duel.rs`; a run's paired verdicts are
//!   assembled by `run/verdicts.rs` and judged (exit code, threshold) by `cli/judging.rs`.
//! - **A change point** (`benchhost trend`): the history is read by `benchhost_record::nightly`, scanned by
//!   `analysis/change_points.rs`, printed and gated by `cli/trend.rs`.

mod analysis;
mod bisect;
mod child;
pub mod cli;
mod import;
mod in_order;
mod plan;
mod plugin;
mod proc;
mod report;
mod run;
mod stats;

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod layout_scan;
#[cfg(test)]
mod layout_tests;
