//! benchhost rig `trace_index`: seed 000's `trace_index_scaling/*`. A point lookup in a prefix-sharded,
//! bloom-filtered Parquet index of trace id to data file ([`crate::scan::index`]), at 10k, 100k and 1M traces;
//! the seed reads about 0.7 ms flat across them.
//!
//! Built untimed: the index (trace `n` is in file `n / 1000`), written through the warehouse's storage, and
//! opened (its shards found). One iteration is one lookup of one of 64 known traces spread over the index, in
//! turn: by default, as the seed times it, the lookup opens what it needs (its shard's size and footer, then
//! the bloom filters and the row group); with `footers = kept` the footers were read when the index opened, as a
//! server keeps them, and the lookup is a probe of a warm index. Its answer, the trace's file, is checked on
//! every lookup.

use benchhost_plugin_api::{Descriptor, Metric, Outcome, Param, Rig, RigError, SetupContext, Unit};
use serde::Deserialize;
use tokio::runtime::Runtime;

use crate::runtime;
use crate::scan::index::{Footers, Index, Looked};
use crate::table::corpus;
use crate::table::warehouse::{Storage, Warehouse};

/// Parameters of `trace_index`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    traces: i64,
    footers: Footers,
    storage: Storage,
    workers: i64,
}

/// The rig.
pub struct TraceIndex {
    traces: u64,
    runtime: Runtime,
    warehouse: Warehouse,
    index: Index,
    lookups: u64,
    row_groups_read: u64,
    bloom_checked: u64,
    footers_read: u64,
    bytes_fetched: u64,
}

/// The file trace `n` of the index is in.
fn file_of(n: u64) -> String {
    format!("traces/data/{:06}.parquet", n / 1000)
}

/// The trace the `i`th lookup asks for: 64 known traces spread over the index, in turn.
fn trace_of(i: u64, traces: u64) -> u64 {
    ((i % 64) * traces / 64 + 7) % traces
}

impl TraceIndex {
    /// Looks trace `n` up and checks the answer: what the lookup read.
    async fn lookup(&self, n: u64) -> Result<Looked, RigError> {
        let (files, looked) = self.index.lookup(&corpus::spread_id(n)).await?;
        if files != [file_of(n)] {
            return Err(RigError::verification(format!("trace {n}: the index answered {files:?}, not {}", file_of(n))));
        }
        Ok(looked)
    }
}

impl Rig for TraceIndex {
    type Params = Params;

    fn describe() -> Descriptor {
        Descriptor::iterations("trace_index", "a point lookup in a prefix-sharded, bloom-filtered Parquet trace index")
            .param(Param::int("traces", 10_000).allowed([10_000, 100_000, 1_000_000]).doc("trace ids indexed"))
            .param(
                Param::choice("footers", "per_lookup", &["per_lookup", "kept"])
                    .doc("each lookup reads its shard's footer (the seed's), or all were read when the index opened"),
            )
            .param(Param::choice("storage", "memory", &["memory", "fs"]).doc("iceberg's memory storage or a local dir"))
            .param(runtime::param(0))
            .metric(Metric::iter_time("lookup_time"))
            .metric(
                Metric::counter("row_groups_read", Unit::RowGroups, "row_groups_read")
                    .doc("row groups read per lookup"),
            )
            .metric(
                Metric::counter("bloom_checked", Unit::RowGroups, "bloom_checked")
                    .doc("bloom filters consulted per lookup (row groups whose range holds the id)"),
            )
            .metric(Metric::counter("footers_read", Unit::Files, "footers_read").doc("shard footers read per lookup"))
            .metric(
                Metric::counter("bytes_fetched", Unit::Bytes, "bytes_fetched")
                    .doc("index bytes the storage served per lookup: footer, bloom filters, row group"),
            )
            .metric(Metric::counter("index_bytes", Unit::Bytes, "index_bytes").doc("the index's size"))
    }

    fn setup(p: Params, ctx: &SetupContext) -> Result<Self, RigError> {
        let runtime = runtime::new(p.workers, ctx)?;
        let dir = ctx.scratch_dir.join("warehouse");
        std::fs::create_dir_all(&dir)?;
        let warehouse = runtime.block_on(Warehouse::new(p.storage, &dir))?;
        let traces = u64::try_from(p.traces).map_err(|_| RigError::invalid_params("traces must be positive"))?;
        let entries = (0..traces).map(|n| (corpus::spread_id(n), file_of(n))).collect();
        let location = format!("{}/trace-index", warehouse.location);
        let index = runtime.block_on(Index::write(&warehouse.file_io(), &location, entries, p.footers))?;
        let rig = TraceIndex {
            traces,
            runtime,
            warehouse,
            index,
            lookups: 0,
            row_groups_read: 0,
            bloom_checked: 0,
            footers_read: 0,
            bytes_fetched: 0,
        };
        rig.runtime.block_on(rig.lookup(trace_of(0, traces)))?;
        rig.warehouse.io.take();
        Ok(rig)
    }

    fn iterate(&mut self) -> Result<(), RigError> {
        benchhost_plugin_api::slower::spin(crate::SLOWER);
        self.lookups += 1;
        let looked = self.runtime.block_on(self.lookup(trace_of(self.lookups, self.traces)))?;
        self.row_groups_read += looked.read;
        self.bloom_checked += looked.bloom_checked;
        self.footers_read += looked.footers_read;
        self.bytes_fetched += self.warehouse.io.take().data_bytes_read;
        Ok(())
    }

    fn teardown(self) -> Result<Outcome, RigError> {
        if self.lookups == 0 {
            return Err(RigError::verification("no lookup ran"));
        }
        let per = |total: u64| (total + self.lookups / 2) / self.lookups;
        let size = self.index.size();
        Ok(Outcome::new()
            .counter("lookups", self.lookups)
            .counter("row_groups_read", per(self.row_groups_read))
            .counter("bloom_checked", per(self.bloom_checked))
            .counter("footers_read", per(self.footers_read))
            .counter("bytes_fetched", per(self.bytes_fetched))
            .counter("index_bytes", size)
            .note(format!("{} traces in {size} bytes of index; every lookup's file checked", self.traces)))
    }
}

#[cfg(test)]
mod tests {
    use benchhost_plugin_api::testing;
    use serde_json::json;

    use super::*;

    #[test]
    fn every_lookup_finds_its_trace_reading_one_row_group_and_its_footer_unless_kept() {
        for (footers, footers_read) in [("per_lookup", 1), ("kept", 0)] {
            let params = json!({"traces": 10_000, "footers": footers, "storage": "memory"});
            let outcome = testing::run::<TraceIndex>(params, 70).unwrap().outcome;
            let c = &outcome.counters;
            assert_eq!(c["lookups"], 70);
            assert_eq!(c["row_groups_read"], 1, "{footers}: one row group per lookup: {c:?}");
            assert_eq!(c["footers_read"], footers_read, "{footers}: {c:?}");
            assert!(c["bytes_fetched"] > 0 && c["bytes_fetched"] < c["index_bytes"], "{footers}: {c:?}");
            assert!(c["bloom_checked"] >= 1, "{c:?}");
            assert!(c["index_bytes"] > 100_000, "{c:?}");
        }
    }
}
