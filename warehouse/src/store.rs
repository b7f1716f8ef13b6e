//! The warehouse: an Iceberg table `benchhost.records` behind iceberg's SQL catalog on a sqlite file, over a
//! local directory: `DIR/catalog.sqlite` and `DIR/data/`. One row per record (its time, bench, kind, run id
//! and the whole record as JSON text), partitioned by `day(ts)` and `bench`, so a trend of one rig reads few
//! files. Publishers append with `fast_append`; the SQL catalog commits by compare-and-swap on the metadata
//! location, and a publisher that lost the race reloads the table and tries again, so concurrent publishers
//! lose nothing.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use arrow::array::{ArrayRef, AsArray, RecordBatch, StringArray, TimestampMicrosecondArray};
use benchhost_record::Record;
use futures::TryStreamExt;
use iceberg::io::LocalFsStorageFactory;
use iceberg::spec::{DataFileFormat, NestedField, PartitionSpec, PrimitiveType, Schema, Transform, Type};
use iceberg::table::Table;
use iceberg::transaction::{ApplyTransactionAction, Transaction};
use iceberg::writer::base_writer::data_file_writer::DataFileWriterBuilder;
use iceberg::writer::file_writer::ParquetWriterBuilder;
use iceberg::writer::file_writer::location_generator::{DefaultFileNameGenerator, DefaultLocationGenerator};
use iceberg::writer::file_writer::rolling_writer::RollingFileWriterBuilder;
use iceberg::writer::partitioning::PartitioningWriter;
use iceberg::writer::partitioning::fanout_writer::FanoutWriter;
use iceberg::{Catalog, CatalogBuilder, ErrorKind, NamespaceIdent, TableCreation, TableIdent};
use iceberg_catalog_sql::{
    SQL_CATALOG_PROP_BIND_STYLE, SQL_CATALOG_PROP_URI, SQL_CATALOG_PROP_WAREHOUSE, SqlBindStyle, SqlCatalog,
    SqlCatalogBuilder,
};
use parquet::file::properties::WriterProperties;

const NAMESPACE: &str = "benchhost";
const TABLE: &str = "records";
/// Commits that lose the compare-and-swap are retried this many times (on top of iceberg's own retries).
const ATTEMPTS: u32 = 20;

/// An open warehouse.
pub struct Warehouse {
    catalog: SqlCatalog,
    ident: TableIdent,
}

fn schema() -> iceberg::Result<Schema> {
    let text = || Type::Primitive(PrimitiveType::String);
    Schema::builder()
        .with_fields(vec![
            NestedField::required(1, "ts", Type::Primitive(PrimitiveType::Timestamptz)).into(),
            NestedField::required(2, "bench", text()).into(),
            NestedField::required(3, "kind", text()).into(),
            NestedField::optional(4, "run_id", text()).into(),
            NestedField::required(5, "record", text()).into(),
        ])
        .build()
}

impl Warehouse {
    /// Opens the warehouse in `dir`, creating the directory, the catalog and the table on first use.
    pub async fn open(dir: &Path) -> Result<Warehouse> {
        std::fs::create_dir_all(dir.join("data")).with_context(|| format!("creating {}", dir.display()))?;
        let dir = dir.canonicalize()?;
        let props = HashMap::from([
            (SQL_CATALOG_PROP_URI.to_string(), format!("sqlite:{}?mode=rwc", dir.join("catalog.sqlite").display())),
            (SQL_CATALOG_PROP_WAREHOUSE.to_string(), dir.join("data").display().to_string()),
            (SQL_CATALOG_PROP_BIND_STYLE.to_string(), SqlBindStyle::QMark.to_string()),
        ]);
        let catalog = SqlCatalogBuilder::default()
            .with_storage_factory(Arc::new(LocalFsStorageFactory))
            .load("benchhost", props)
            .await
            .with_context(|| format!("opening the catalog in {}", dir.display()))?;
        let namespace = NamespaceIdent::new(NAMESPACE.to_string());
        let ident = TableIdent::new(namespace.clone(), TABLE.to_string());
        // Several publishers may open a new warehouse at once: creating what exists already is fine.
        if !catalog.namespace_exists(&namespace).await? {
            let _ = catalog.create_namespace(&namespace, HashMap::new()).await;
        }
        if !catalog.table_exists(&ident).await? {
            let schema = schema()?;
            let spec = PartitionSpec::builder(schema.clone())
                .add_partition_field("ts", "day", Transform::Day)?
                .add_partition_field("bench", "bench", Transform::Identity)?
                .build()?;
            let creation = TableCreation::builder().name(TABLE.to_string()).schema(schema).partition_spec(spec).build();
            if let Err(err) = catalog.create_table(&namespace, creation).await
                && !catalog.table_exists(&ident).await?
            {
                return Err(err).context("creating the records table");
            }
        }
        Ok(Warehouse { catalog, ident })
    }

    /// Appends `records` in one commit; returns how many attempts the commit took.
    pub async fn publish(&self, records: &[Record]) -> Result<u32> {
        for attempt in 1..=ATTEMPTS {
            let table = self.catalog.load_table(&self.ident).await?;
            let files = write(&table, records).await?;
            let tx = Transaction::new(&table);
            let tx = tx.fast_append().add_data_files(files).apply(tx)?;
            match tx.commit(&self.catalog).await {
                Ok(_) => return Ok(attempt),
                Err(err) if err.kind() == ErrorKind::CatalogCommitConflicts => {
                    // Lost the race: the files written stay unreferenced (orphans for a later cleanup).
                    tokio::time::sleep(Duration::from_millis(5 * u64::from(attempt))).await;
                }
                Err(err) => return Err(err).context("committing the records"),
            }
        }
        bail!("the commit lost the race {ATTEMPTS} times in a row; try again")
    }

    /// Every record in the table's current snapshot.
    pub async fn records(&self) -> Result<Vec<Record>> {
        let table = self.catalog.load_table(&self.ident).await?;
        let batches: Vec<RecordBatch> =
            table.scan().select(["record"]).build()?.to_arrow().await?.try_collect().await?;
        let mut records = Vec::new();
        for batch in &batches {
            let column = batch.column(0).as_string::<i32>();
            for line in column.iter().flatten() {
                records.push(serde_json::from_str(line).context("a stored record")?);
            }
        }
        Ok(records)
    }
}

/// Writes `records` as Parquet data files of `table`, one per (day, bench) partition.
async fn write(table: &Table, records: &[Record]) -> Result<Vec<iceberg::spec::DataFile>> {
    let metadata = table.metadata();
    let schema = Arc::new(iceberg::arrow::schema_to_arrow_schema(metadata.current_schema())?);
    let text =
        |f: &dyn Fn(&Record) -> Option<String>| Arc::new(records.iter().map(f).collect::<StringArray>()) as ArrayRef;
    let ts = records.iter().map(|r| r.run.ts_ms as i64 * 1000).collect::<Vec<_>>();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("+00:00")),
        text(&|r| Some(r.bench.clone())),
        text(&|r| serde_json::to_value(r.kind).ok().and_then(|v| v.as_str().map(str::to_owned))),
        text(&|r| r.run.id.clone()),
        text(&|r| serde_json::to_string(r).ok()),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    let names = DefaultFileNameGenerator::new(uuid::Uuid::new_v4().to_string(), None, DataFileFormat::Parquet);
    let parquet = ParquetWriterBuilder::new(WriterProperties::default(), metadata.current_schema().clone());
    let rolling = RollingFileWriterBuilder::new_with_default_file_size(
        parquet,
        table.file_io().clone(),
        DefaultLocationGenerator::new(metadata)?,
        names,
    );
    let mut fanout = FanoutWriter::new(DataFileWriterBuilder::new(rolling));
    let splitter = iceberg::arrow::RecordBatchPartitionSplitter::try_new_with_computed_values(
        metadata.current_schema().clone(),
        metadata.default_partition_spec().clone(),
    )?;
    for (key, part) in splitter.split(&batch)? {
        fanout.write(key, part).await?;
    }
    Ok(fanout.close().await?)
}
