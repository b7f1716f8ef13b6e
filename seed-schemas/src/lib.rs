//! Seed 000's Arrow schemas, defined once for the rigs that share them: `ingest` converts OTLP requests to them,
//! `wal` round-trips the trace batch, the lakehouse `writer` appends gauge rows. Each follows SignalDB's own
//! definition (`src/common/src/flight/schema.rs` for the trace and log batches, `schemas.toml`'s
//! `metrics_gauge` and `metrics_sum` for the metric rows): names, types, nullability and order. [`fixture`]
//! builds the batches the seed's own fixtures convert to.

pub mod fixture;
pub mod logs;
pub mod metrics;
pub mod traces;
