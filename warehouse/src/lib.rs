//! benchhost's results warehouse, as a binary of its own (`benchhost-warehouse`; `benchhost publish` and
//! `benchhost query` run it), so that the host itself never compiles Iceberg or DataFusion.
//!
//! - `publish FILE... --warehouse DIR|URI [--storage s3://BUCKET/PREFIX]`: appends records to an Iceberg table
//!   behind iceberg's SQL catalog, on sqlite in a directory or on PostgreSQL with data on S3 ([`location`],
//!   [`store`], [`schema`], [`publish`]), each record once.
//! - `query SQL --from FILE... | --warehouse DIR`: DataFusion SQL over two tables, `records` and `metrics`
//!   ([`tables`]).
//! - `export --warehouse DIR --out FILE [--newest K]`: the warehouse's records (or the newest K of each
//!   series) as a results stream (what `benchhost report --warehouse` reads) ([`export`]).
//! - `gc --warehouse DIR|URI [--older-than 1h]`: removes data files no snapshot references ([`gc`]).

mod catalog;
mod catalog_lock;
mod checked_commit;
pub mod export;
pub mod gc;
pub mod location;
mod partition_writers;
pub mod publish;
pub mod read_only;
pub mod rest;
pub mod schema;
pub mod store;
mod table_identities;
mod table_rows;
pub mod tables;
