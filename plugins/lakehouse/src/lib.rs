//! benchhost rigs on an Iceberg table, after seed 000's lakehouse benches and seed 004's methodology:
//! `compaction` rewrites small files into one `replace` snapshot; `querier` runs DataFusion SQL over the
//! snapshot's files with DataFusion's own Parquet scan (lookups by id, one via a point index, top-k, ordered
//! scans over attested and unattested orders), the footer cache warm, cold or off; `trace_index` looks traces
//! up in a bloom-filtered Parquet index; `writer` appends to seed 000's metrics_gauge table. Tables live in
//! iceberg's memory catalog over its memory storage or a local directory.
//!
//! The tree: `rigs/` (one file per rig), `table/` (what every rig stands on), `scan/` (the querier's scan over
//! DataFusion) and `service/` (the querier service's Flight routing and query languages).

pub mod rigs;
pub mod runtime;
pub mod scan;
pub mod service;
pub mod table;

/// The slowdown compiled in with the `slower` feature, spun once per iteration (a rewrite, a query) (proofs only: a second build of
/// the same tree, slower by a known amount; see `benchhost_plugin_api::slower`).
pub(crate) const SLOWER: u64 = if cfg!(feature = "slower") {
    benchhost_plugin_api::slower::rounds(option_env!("BENCHHOST_SLOWER_SPIN"))
} else {
    0
};

benchhost_plugin_api::export_rigs![
    rigs::compaction::Compaction,
    rigs::querier::Querier,
    rigs::querier_service::QuerierServiceRig,
    rigs::trace_index::TraceIndex,
    rigs::writer::Writer
];
