//! Cells to records: one child per cell, round after round, each record evaluated from what its child said and
//! written the moment the cell ends, with the provenance of the run and the text it prints as it goes.

pub(crate) mod conditions;
pub(crate) mod duel_process;
pub(crate) mod duels;
pub(crate) mod evaluate;
pub(crate) mod instructions;
pub(crate) mod output;
pub(crate) mod provenance;
pub(crate) mod runner;
