//! Cells to records: one child per cell, round after round, or two arms dueling in one process; each record
//! evaluated from what its child said and written the moment the cell ends, with the provenance of the run and
//! the text it prints as it goes; then the verdicts of the run's own pairing.
//!
//! The files, leaves first (none uses a file below it; `layout_tests.rs` checks there is no circle):
//! `conditions`, `output`, `provenance`, `evaluate`, `valgrind`, `count_dir`, `duel_plan` → `context` (the
//! executor seam, the run's context, what cells gave) → `child_executor`, `count` → `finish` (the end of every
//! cell) → `duel_process` → `in_rounds`, `duels` → `schedule` → `verdicts`.

pub(crate) mod cachegrind;
pub(crate) mod child_executor;
pub(crate) mod conditions;
pub(crate) mod context;
pub(crate) mod count;
pub(crate) mod count_dir;
pub(crate) mod duel_plan;
pub(crate) mod duel_process;
pub(crate) mod duels;
pub(crate) mod evaluate;
pub(crate) mod finish;
pub(crate) mod in_rounds;
pub(crate) mod output;
pub(crate) mod provenance;
pub(crate) mod schedule;
pub(crate) mod valgrind;
pub(crate) mod verdicts;
