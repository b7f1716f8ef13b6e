//! What every rig stands on: the warehouse (an Iceberg catalog over counted storage), the tables' schemas and
//! rows (seed 000's traces, metrics_gauge and logs), the corpora and seeded tables, kept snapshots, and the table
//! operations the crate builds itself (a writer's tenant, a replace snapshot, a compaction's rewrite).

pub mod corpus;
pub mod counting;
pub mod gauge;
pub mod logs;
pub mod querier_tables;
pub mod replace;
pub mod rewrite;
pub mod series;
pub mod snapshot;
pub mod tenant;
pub mod traces;
pub mod warehouse;

#[cfg(test)]
mod pyiceberg_tests;
