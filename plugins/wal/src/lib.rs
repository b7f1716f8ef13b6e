//! benchhost rig `wal`: seed 000's `wal/record_batch_roundtrip`. Each iteration writes the trace batch the
//! seed's fixture converts to (`seed_schemas::fixture::traces`, the seed's 27 columns) as an Arrow IPC stream
//! (ZSTD, LZ4 or uncompressed) into a fresh buffer and reads the first batch back, as SignalDB's
//! `record_batch_to_bytes` / `bytes_to_record_batch` do. Teardown checks that the batch read back equals the
//! batch written.
//!
//! Rig `wal_log` (module `durable`) measures the durability side: appends to segment files with fsync
//! none|batch|always, then a replay that must return exactly what was appended.

mod durable;
mod ipc;
pub mod log;

pub use durable::WalLog;

pub use ipc::{Compression, decode, encode};

use arrow::record_batch::RecordBatch;
use benchhost_plugin_api::{Descriptor, Invariant, Metric, Outcome, Param, Rig, RigError, SetupContext, Unit};
use serde::Deserialize;

/// The slowdown compiled in with the `slower` feature, spun once per iteration of `wal` and once per append of `wal_log` (proofs only: a second build of
/// the same tree, slower by a known amount; see `benchhost_plugin_api::slower`).
pub(crate) const SLOWER: u64 = if cfg!(feature = "slower") {
    benchhost_plugin_api::slower::rounds(option_env!("BENCHHOST_SLOWER_SPIN"))
} else {
    0
};

/// Parameters of `wal`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    rows: i64,
    compression: Compression,
}

/// The IPC round-trip rig.
pub struct Wal {
    written: RecordBatch,
    compression: Compression,
    read_back: Option<RecordBatch>,
    encoded_bytes: usize,
    input_bytes: usize,
}

impl Rig for Wal {
    type Params = Params;

    fn describe() -> Descriptor {
        Descriptor::iterations("wal", "Arrow IPC stream round trip of a SignalDB trace batch (write, then read back)")
            .param(Param::int("rows", 1000).range(1, 10_000_000).doc("spans in the batch"))
            .param(Param::choice("compression", "zstd", &["none", "lz4", "zstd"]).doc("IPC body compression"))
            .metric(Metric::iter_time("roundtrip_time").doc("one encode + decode of the batch"))
            .metric(Metric::counter("encoded_bytes", Unit::Bytes, "encoded_bytes").doc("size of the IPC stream"))
            .metric(
                Metric::rate("mb_per_s", Unit::MegabytesPerSec, "input_bytes")
                    .doc("uncompressed IPC bytes of the batch (same for every codec) per second"),
            )
            .metric(Metric::rate("rows_per_s", Unit::RowsPerSec, "rows_in"))
            .invariant(Invariant::equal("rows_out", "rows_in"))
    }

    fn setup(params: Params, _ctx: &SetupContext) -> Result<Self, RigError> {
        let rows = usize::try_from(params.rows).map_err(|_| RigError::invalid_params("rows must be positive"))?;
        let written = seed_schemas::fixture::traces(rows)?;
        // The throughput denominator is the uncompressed stream, so every codec is credited the same work.
        let input_bytes = encode(&written, Compression::None)?.len();
        Ok(Wal { written, compression: params.compression, read_back: None, encoded_bytes: 0, input_bytes })
    }

    fn iterate(&mut self) -> Result<(), RigError> {
        benchhost_plugin_api::slower::spin(SLOWER);
        let bytes = encode(&self.written, self.compression)?;
        self.encoded_bytes = bytes.len();
        self.read_back = Some(decode(&bytes)?);
        Ok(())
    }

    fn teardown(self) -> Result<Outcome, RigError> {
        let read_back = self.read_back.ok_or_else(|| RigError::verification("no round trip was run"))?;
        if read_back != self.written {
            return Err(RigError::verification("the batch read back differs from the batch written"));
        }
        Ok(Outcome::new()
            .counter("rows_in", self.written.num_rows() as u64)
            .counter("rows_out", read_back.num_rows() as u64)
            .counter("encoded_bytes", self.encoded_bytes as u64)
            .counter("input_bytes", self.input_bytes as u64))
    }
}

benchhost_plugin_api::export_rigs![Wal, WalLog];

#[cfg(test)]
mod tests {
    use super::*;
    use benchhost_plugin_api::testing;
    use serde_json::json;

    #[test]
    fn round_trip_preserves_the_batch_for_every_codec() {
        for codec in ["none", "lz4", "zstd"] {
            let report = testing::run::<Wal>(json!({"compression": codec, "rows": 1000}), 3).unwrap();
            assert_eq!(report.outcome.counters["rows_out"], 1000, "{codec}");
        }
    }

    #[test]
    fn compression_shrinks_the_stream() {
        let size =
            |codec| testing::run::<Wal>(json!({ "compression": codec }), 1).unwrap().outcome.counters["encoded_bytes"];
        let (none, zstd) = (size("none"), size("zstd"));
        assert!(zstd * 2 < none, "zstd {zstd} vs none {none}");
    }

    #[test]
    fn a_corrupted_stream_is_an_error_not_a_batch() {
        let batch = seed_schemas::fixture::traces(10).unwrap();
        let mut bytes = encode(&batch, Compression::Zstd).unwrap();
        let len = bytes.len();
        bytes.truncate(len / 2);
        assert!(decode(&bytes).is_err());
    }
}
