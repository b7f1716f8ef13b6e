//! The five rigs, one file each, read top to bottom as the seed describes its benchmark: what is built untimed,
//! what one iteration times, what is checked.

pub mod compaction;
pub mod querier;
pub mod querier_service;
pub mod trace_index;
pub mod writer;
