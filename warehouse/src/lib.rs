//! benchhost's results warehouse, as a binary of its own (`benchhost-warehouse`; `benchhost publish` and
//! `benchhost query` run it), so that the host itself never compiles Iceberg or DataFusion.
//!
//! - `publish FILE... --warehouse DIR`: appends records to an Iceberg table behind iceberg's SQL catalog on a
//!   sqlite file ([`store`], [`publish`]).
//! - `query SQL --from FILE... | --warehouse DIR`: DataFusion SQL over two tables, `records` and `metrics`
//!   ([`tables`]).
//! - `export --warehouse DIR --out FILE [--newest K]`: the warehouse's records (or the newest K of each
//!   series) as a results stream (what `benchhost report --warehouse` reads) ([`export`]).

pub mod export;
pub mod publish;
pub mod store;
pub mod tables;
