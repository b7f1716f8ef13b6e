//! The querier's tables, seeded as seed 000 seeds them, and the point indexes beside them:
//! - `traces`: hour partitions (as seed 000's write path), the target trace written three times
//!   ([`crate::table::corpus::traces_files`]), and its index of trace id to data file;
//! - `spans`: 60 sequential files through the plain write path: no file attests an order;
//! - `spans_sorted`: the same files, written sorted into a table that declares `(timestamp, trace_id)`, each
//!   file attesting it (seed 000's ingest path).
//!
//! Each table is seeded once per library and run ([`crate::table::snapshot`]): copied into each instance's memory
//! warehouse, or, on disk, read in place by every instance.

use std::path::Path;

use benchhost_plugin_api::{RigError, SetupContext};
use iceberg::TableIdent;
use iceberg::table::Table;
use tokio::runtime::Runtime;

use crate::scan::index::{Footers, Index};
use crate::scan::store::IcebergStore;
use crate::table::corpus;
use crate::table::snapshot;
use crate::table::warehouse::{Layout, Storage, Warehouse};

/// A table the querier reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seeded {
    Traces,
    Spans,
    SpansSorted,
}

impl Seeded {
    /// The table's name.
    pub fn name(self) -> &'static str {
        match self {
            Seeded::Traces => "traces",
            Seeded::Spans => "spans",
            Seeded::SpansSorted => "spans_sorted",
        }
    }

    /// Seeds the table: one append (one file, one snapshot) per corpus file.
    async fn seed(self, warehouse: &Warehouse) -> Result<Table, RigError> {
        let (layout, files, sorted) = match self {
            Seeded::Traces => (Layout::Hourly, corpus::traces_files(), false),
            Seeded::Spans => (Layout::Unpartitioned, corpus::sequential_files(), false),
            // The sequential files are in (timestamp, trace_id) order already: sorting them is the ingester's.
            Seeded::SpansSorted => (Layout::Unpartitioned, corpus::sequential_files(), true),
        };
        let mut table = warehouse.create_ordered(self.name(), layout, sorted).await?;
        for file in &files {
            table = warehouse.append(&table, file).await?;
        }
        if self == Seeded::Traces {
            write_index(warehouse, &table).await?;
        }
        Ok(table)
    }

    /// A warehouse holding the table: in memory, a copy of the seed kept for this library and run (built by the
    /// first instance); on disk, the seed's own files, seeded in memory at the place they are kept (the first
    /// instance) and read there by every instance: the querier never writes to its table.
    pub fn open(
        self,
        storage: Storage,
        ctx: &SetupContext,
        runtime: &Runtime,
    ) -> Result<(Warehouse, TableIdent), RigError> {
        match storage {
            Storage::Memory => {
                let kept = self.kept(ctx, runtime)?;
                let warehouse = runtime.block_on(Warehouse::new(Storage::Memory, Path::new("")))?;
                let ident = runtime.block_on(snapshot::Kept::read(&kept)?.load(&warehouse, self.name()))?;
                Ok((warehouse, ident))
            }
            Storage::Fs => {
                let key = format!("querier-{}-on-disk", self.name());
                let place = snapshot::place(&ctx.seed_path(&key));
                let kept = ctx.seed(&key, |dir| runtime.block_on(self.keep(dir, Some(&place))))?;
                let warehouse = runtime.block_on(Warehouse::new(Storage::Fs, &place))?;
                let ident = runtime.block_on(snapshot::register_in_place(&warehouse, &kept, self.name()))?;
                Ok((warehouse, ident))
            }
        }
    }

    /// The directory holding the table's memory seed for this library and run, seeded by the first caller.
    pub fn kept(self, ctx: &SetupContext, runtime: &Runtime) -> Result<std::path::PathBuf, RigError> {
        ctx.seed(&format!("querier-{}", self.name()), |dir| runtime.block_on(self.keep(dir, None)))
    }

    /// Seeds the table in a memory warehouse of its own (located at `place`, if given) and keeps it (and its
    /// index) in `dir`.
    async fn keep(self, dir: &Path, place: Option<&Path>) -> Result<(), RigError> {
        let warehouse = match place {
            Some(place) => Warehouse::seeding_at(place).await?,
            None => Warehouse::seeding(Storage::Memory, dir).await?,
        };
        let table = self.seed(&warehouse).await?;
        snapshot::keep(&warehouse, &table, dir).await
    }
}

/// Where a table's point index lives: beside its data, under the table's location.
pub fn index_location(table: &Table) -> String {
    format!("{}/index", table.metadata().location())
}

/// Writes the index of `table`'s data files: every trace id of every file, to the file's object path.
async fn write_index(warehouse: &Warehouse, table: &Table) -> Result<(), RigError> {
    let schema = crate::table::warehouse::arrow_schema(table)?;
    let mut entries = Vec::new();
    for planned in crate::scan::files::plan(table, &schema).await? {
        let path = planned.file.path().to_string();
        let location = format!("{}{path}", IcebergStore::prefix_of(&warehouse.location));
        let bytes = table.file_io().new_input(&location)?.read().await?;
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
            .map_err(|e| RigError::new(format!("reading {location} for the index: {e}")))?
            .build()
            .map_err(|e| RigError::new(format!("reading {location} for the index: {e}")))?;
        for batch in reader {
            let batch = batch.map_err(|e| RigError::new(format!("reading {location} for the index: {e}")))?;
            entries.extend(crate::table::traces::from_batch(&batch).into_iter().map(|s| (s.trace_id, path.clone())));
        }
    }
    Index::write(&warehouse.file_io(), &index_location(table), entries, Footers::Kept).await?;
    Ok(())
}
