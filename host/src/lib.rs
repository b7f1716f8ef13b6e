//! benchhost: a benchmark harness for data systems. It loads benchmark *rigs* from native plugins
//! (`cdylib`s built against `benchhost-plugin-api`), expands the matrix of `rigs.toml` into *cells*, runs
//! every cell in its own child process (so a rig that panics, crashes or hangs costs one `failure` record,
//! not the run), and appends one versioned JSON-lines record per cell to a results stream.
//!
//! Stages share no state: `matrix` (what to run) → `runner`/`executor` (one child per cell, which runs
//! `sampler`) → `evaluate` and `stats` (numbers and checks, pure) → `sink` (records) → `report` (text).

pub mod args;
pub mod baseline;
pub mod bootstrap;
pub mod calibrate;
pub mod check;
pub mod child;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod config;
pub mod criterion_import;
pub mod delegate;
pub mod elf;
pub mod evaluate;
pub mod examples;
pub mod executor;
pub mod export;
pub mod heap;
pub mod html;
pub mod interrupt;
pub mod judging;
pub mod library;
pub mod loader;
pub mod matrix;
pub mod merge;
pub mod output;
pub mod protocol;
pub mod provenance;
pub mod reader;
pub mod reaper;
pub mod record;
pub mod report;
pub mod rounds;
pub mod run_matrix;
pub mod runner;
pub mod sampler;
pub mod scaffold;
pub mod settings;
pub mod shard;
pub mod shell;
pub mod sink;
pub mod stats;
pub mod verify;
pub mod writable;
