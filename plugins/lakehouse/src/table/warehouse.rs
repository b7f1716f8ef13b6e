//! A real Iceberg catalog over a real FileIO: the crate's memory catalog, on its in-memory storage (as seed 000
//! measured) or on a local directory (`storage = fs`), with every byte counted (see [`crate::table::counting`]).
//! Tables are written the way an ingester writes them: one Parquet file per append (ZSTD, Iceberg's default
//! codec; one row group; a bloom filter on `trace_id`), committed with `fast_append`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use iceberg::io::{LocalFsStorage, MemoryStorage};
use iceberg::memory::{MEMORY_CATALOG_WAREHOUSE, MemoryCatalog, MemoryCatalogBuilder};
use iceberg::spec::{
    DataContentType, DataFile, DataFileFormat, Literal, NullOrder, PartitionKey, PartitionSpec, SortDirection,
    SortField, SortOrder, Struct, Transform,
};
use iceberg::table::Table;
use iceberg::transaction::{ApplyTransactionAction, Transaction};
use iceberg::writer::file_writer::ParquetWriterBuilder;
use iceberg::writer::file_writer::location_generator::{DefaultFileNameGenerator, DefaultLocationGenerator};
use iceberg::writer::file_writer::rolling_writer::RollingFileWriterBuilder;
use iceberg::{Catalog, CatalogBuilder, NamespaceIdent, TableCreation, TableIdent};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use serde::Deserialize;

use crate::table::counting::{Backend, CountingFactory, CountingStorage, IoCounters};
use crate::table::traces::{self, Span};

/// Microseconds per hour: Iceberg's `hour` transform.
const HOUR_US: i64 = 3_600_000_000;

/// Where the warehouse lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Storage {
    /// iceberg's in-memory storage.
    Memory,
    /// A directory under the cell's scratch directory.
    Fs,
}

/// How a table is partitioned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Unpartitioned,
    /// `hour(timestamp)`, as seed 000's write path partitions its tables.
    Hourly,
}

/// A catalog, its namespace and the I/O counters of its storage.
pub struct Warehouse {
    pub catalog: Arc<MemoryCatalog>,
    pub namespace: NamespaceIdent,
    pub io: Arc<IoCounters>,
    /// The storage every FileIO of the catalog hands out (clones share the files).
    pub storage: CountingStorage,
    /// The warehouse's location (`memory://…` or an absolute path).
    pub location: String,
}

impl Warehouse {
    /// A new, empty warehouse. With [`Storage::Fs`] it lives in `dir`, which must exist.
    /// Must run inside the tokio runtime that will use it: iceberg captures the current runtime.
    pub async fn new(storage: Storage, dir: &Path) -> iceberg::Result<Warehouse> {
        Warehouse::with(storage, dir, IoCounters::default()).await
    }

    /// A new, empty warehouse that records the path of every file written, to be kept with
    /// [`crate::table::snapshot::keep`].
    pub async fn seeding(storage: Storage, dir: &Path) -> iceberg::Result<Warehouse> {
        Warehouse::with(storage, dir, IoCounters::recording()).await
    }

    /// A new, empty memory warehouse that records every file written, located at `dir`: its tables name their
    /// files by paths below `dir`, so a kept copy of them, placed in `dir`, is a table on disk there (a seed
    /// built in memory and placed where a directory warehouse reads it; see [`crate::table::snapshot`]).
    pub async fn seeding_at(dir: &Path) -> iceberg::Result<Warehouse> {
        let backend = Backend::Memory(MemoryStorage::new());
        Warehouse::at(backend, dir.display().to_string(), IoCounters::recording()).await
    }

    async fn with(storage: Storage, dir: &Path, io: IoCounters) -> iceberg::Result<Warehouse> {
        match storage {
            Storage::Memory => {
                Warehouse::at(Backend::Memory(MemoryStorage::new()), "memory://warehouse".to_string(), io).await
            }
            Storage::Fs => Warehouse::at(Backend::Fs(LocalFsStorage::new()), dir.display().to_string(), io).await,
        }
    }

    async fn at(backend: Backend, location: String, io: IoCounters) -> iceberg::Result<Warehouse> {
        let io = Arc::new(io);
        let storage = CountingStorage::new(backend, io.clone());
        let factory = CountingFactory::new(storage.clone());
        let props = HashMap::from([(MEMORY_CATALOG_WAREHOUSE.to_string(), location.clone())]);
        let catalog =
            MemoryCatalogBuilder::default().with_storage_factory(Arc::new(factory)).load("bench", props).await?;
        let namespace = NamespaceIdent::new("bench".to_string());
        catalog.create_namespace(&namespace, HashMap::new()).await?;
        Ok(Warehouse { catalog: Arc::new(catalog), namespace, io, storage, location })
    }

    /// A `FileIO` over the warehouse's storage (and its counters), for files beside the tables (an index).
    pub fn file_io(&self) -> iceberg::io::FileIO {
        iceberg::io::FileIOBuilder::new(Arc::new(CountingFactory::new(self.storage.clone()))).build()
    }

    /// The identifier of table `name`.
    pub fn ident(&self, name: &str) -> TableIdent {
        TableIdent::new(self.namespace.clone(), name.to_string())
    }

    /// Creates an empty traces table.
    pub async fn create(&self, name: &str, layout: Layout) -> iceberg::Result<Table> {
        self.create_ordered(name, layout, false).await
    }

    /// Creates an empty traces table that declares the sort order `(timestamp, trace_id)`, ascending, when
    /// `sorted`; every file appended to it attests that order (see [`Warehouse::append`]).
    pub async fn create_ordered(&self, name: &str, layout: Layout, sorted: bool) -> iceberg::Result<Table> {
        let schema = traces::schema()?;
        let spec = match layout {
            Layout::Unpartitioned => PartitionSpec::builder(schema.clone()).build()?,
            Layout::Hourly => PartitionSpec::builder(schema.clone())
                .add_partition_field("timestamp", "timestamp_hour", Transform::Hour)?
                .build()?,
        };
        let creation = TableCreation::builder().name(name.to_string()).schema(schema.clone()).partition_spec(spec);
        if !sorted {
            return self.catalog.create_table(&self.namespace, creation.build()).await;
        }
        let creation = creation.sort_order(ascending(&schema, &["timestamp", "trace_id"])?).build();
        self.catalog.create_table(&self.namespace, creation).await
    }

    /// Appends `spans` as one new data file and commits it: one snapshot per call, as an ingester's flush.
    /// On an hourly table every span must fall within one hour.
    pub async fn append(&self, table: &Table, spans: &[Span]) -> iceberg::Result<Table> {
        let batch = traces::to_batch(&arrow_schema(table)?, spans)
            .map_err(|e| iceberg::Error::new(iceberg::ErrorKind::DataInvalid, format!("building a batch: {e}")))?;
        let hour = spans.first().map_or(0, |s| s.timestamp_us.div_euclid(HOUR_US)) as i32;
        let hourly = !table.metadata().default_partition_spec().fields().is_empty();
        if hourly && spans.iter().any(|s| s.timestamp_us.div_euclid(HOUR_US) as i32 != hour) {
            let message = "the spans of one append fall in different hours of an hourly table";
            return Err(iceberg::Error::new(iceberg::ErrorKind::DataInvalid, message));
        }
        let files = write_file(table, batch, hour).await?;
        let tx = Transaction::new(table);
        let tx = tx.fast_append().add_data_files(files).apply(tx)?;
        tx.commit(self.catalog.as_ref()).await
    }
}

/// The sort order on the columns `names` of `schema`, each as it is, ascending, nulls first: the order an
/// ingester that sorts each commit group declares.
pub fn ascending(schema: &iceberg::spec::Schema, names: &[&str]) -> iceberg::Result<SortOrder> {
    let mut order = SortOrder::builder();
    for name in names {
        let field = schema.field_by_name(name).ok_or_else(|| {
            iceberg::Error::new(iceberg::ErrorKind::DataInvalid, format!("no column `{name}` to sort by"))
        })?;
        order.with_sort_field(
            SortField::builder()
                .source_id(field.id)
                .transform(Transform::Identity)
                .direction(SortDirection::Ascending)
                .null_order(NullOrder::First)
                .build(),
        );
    }
    order.build(schema)
}

/// The Arrow schema of a table's current schema, with the field ids its Parquet files need.
pub fn arrow_schema(table: &Table) -> iceberg::Result<SchemaRef> {
    Ok(Arc::new(iceberg::arrow::schema_to_arrow_schema(table.metadata().current_schema())?))
}

/// Writes `batch` (of [`arrow_schema`]) into one new Parquet data file of `table`, not yet committed. On an
/// hourly table the file belongs to partition `hour` (hours since the epoch); unpartitioned tables ignore it. On a table
/// that declares a sort order the file attests it (its `sort_order_id`): as an ingester that sorts each commit
/// group, the caller gives rows in that order (nothing here checks it; the querier's answers do).
pub async fn write_file(table: &Table, batch: RecordBatch, hour: i32) -> iceberg::Result<Vec<DataFile>> {
    let properties = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(1 << 20))
        .set_column_bloom_filter_enabled(ColumnPath::from("trace_id"), true)
        .build();
    let partitioned = !table.metadata().default_partition_spec().fields().is_empty();
    let value = partitioned.then(|| Literal::int(hour));
    write_partition(table, batch, value, properties, &uuid::Uuid::new_v4().to_string()).await
}

/// Writes `batch` into new data files of `table` with these writer `properties`, in the partition whose one
/// value is `value` (`None`: unpartitioned), named `{prefix}-N.parquet`; not yet committed. The files attest the
/// table's declared sort order, if it has one.
pub async fn write_partition(
    table: &Table,
    batch: RecordBatch,
    value: Option<Literal>,
    properties: WriterProperties,
    prefix: &str,
) -> iceberg::Result<Vec<DataFile>> {
    let metadata = table.metadata();
    let parquet = ParquetWriterBuilder::new(properties, metadata.current_schema().clone());
    // A fresh name prefix per file: the generator's counter starts at 0 every time.
    let names = DefaultFileNameGenerator::new(prefix.to_string(), None, DataFileFormat::Parquet);
    let rolling = RollingFileWriterBuilder::new_with_default_file_size(
        parquet,
        table.file_io().clone(),
        DefaultLocationGenerator::new(metadata)?,
        names,
    );
    let spec = metadata.default_partition_spec();
    let key = value.map(|value| {
        PartitionKey::new(spec.as_ref().clone(), metadata.current_schema().clone(), Struct::from_iter([Some(value)]))
    });
    // The rolling writer's own builders, finished here: iceberg's `DataFileWriter` never sets `sort_order_id`.
    let mut writer = rolling.build();
    writer.write(&key, &batch).await?;
    let order = metadata.default_sort_order();
    let attests = (!order.fields.is_empty()).then_some(order.order_id as i32);
    let mut files = Vec::new();
    for mut file in writer.close().await? {
        file.content(DataContentType::Data);
        if let Some(key) = &key {
            file.partition(key.data().clone()).partition_spec_id(key.spec().spec_id());
        }
        if let Some(id) = attests {
            file.sort_order_id(id);
        }
        files.push(
            file.build().map_err(|e| {
                iceberg::Error::new(iceberg::ErrorKind::DataInvalid, format!("building a data file: {e}"))
            })?,
        );
    }
    Ok(files)
}
