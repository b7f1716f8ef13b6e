//! benchhost rigs on an Iceberg table, after seed 000's lakehouse benches and seed 004's methodology:
//! `compaction` rewrites small files into one `replace` snapshot; `querier` runs DataFusion SQL through the
//! Iceberg table provider (lookups by id, top-k, ordered scans), cold and warm. Tables live in iceberg's memory
//! catalog over its memory storage or a local directory.

pub mod compaction;
pub mod corpus;
pub mod counting;
pub mod querier;
pub mod replace;
pub mod runtime;
pub mod scan_facts;
pub mod shapes;
pub mod traces;
pub mod warehouse;

#[cfg(test)]
mod pyiceberg_tests;

benchhost_plugin_api::export_rigs![compaction::Compaction, querier::Querier];
