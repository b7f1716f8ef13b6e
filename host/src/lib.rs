//! benchhost: a benchmark harness for data systems. It loads benchmark *rigs* from native plugins
//! (`cdylib`s built against `benchhost-plugin-api`), expands the matrix of `rigs.toml` into *cells*, runs
//! every cell in its own child process (so a rig that panics, crashes or hangs costs one `failure` record,
//! not the run), and appends one versioned JSON-lines record per cell to a results stream
//! (`benchhost-record`).
//!
//! One folder per stage, each depending only on the ones before it (`layout_tests.rs` checks it):
//! `plan` (what to run) → `proc` (one child process, its protocol) → `plugin` (finding and opening
//! libraries) → `child` (measuring inside the child) → `run` (cells to records) → `analysis` (verdicts, pure)
//! → `report` (text, pure) → `cli` (the commands). `stats` is pure arithmetic under all of them; records and
//! results files are `benchhost-record`'s.

mod analysis;
mod child;
pub mod cli;
mod import;
mod plan;
mod plugin;
mod proc;
mod report;
mod run;
mod stats;

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod layout_tests;
