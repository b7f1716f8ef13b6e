//! Publishing results files: read in one pass on the cores (`benchhost_record::scan`), written as compressed
//! Parquet in chunks (one file per (day, bench) partition of each chunk), committed once. Memory is one chunk
//! and one open file, whatever the files' length. On any error the files written so far are deleted: a
//! failed publish leaves neither a record in the table nor a file on disk.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, anyhow};
use arrow::array::{ArrayRef, RecordBatch, StringArray, TimestampMicrosecondArray};
use benchhost_record::scan::each_record;
use benchhost_record::{Kind, Record};
use iceberg::spec::{DataFile, DataFileFormat};
use iceberg::table::Table;
use iceberg::writer::base_writer::data_file_writer::DataFileWriterBuilder;
use iceberg::writer::file_writer::ParquetWriterBuilder;
use iceberg::writer::file_writer::location_generator::{DefaultFileNameGenerator, DefaultLocationGenerator};
use iceberg::writer::file_writer::rolling_writer::RollingFileWriterBuilder;
use iceberg::writer::partitioning::PartitioningWriter;
use iceberg::writer::partitioning::clustered_writer::ClusteredWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use tokio::sync::mpsc;

use crate::store::{VARIANT, Warehouse};

/// Records per chunk: ~64 MB of record text.
const CHUNK: usize = 32_768;

/// What a publish did.
#[derive(Debug)]
pub struct Published {
    /// Records added.
    pub records: usize,
    /// Parquet files written.
    pub files: usize,
    /// Attempts the commit took.
    pub attempts: u32,
}

/// One row of the table.
pub struct Row {
    ts_ms: u64,
    bench: String,
    kind: &'static str,
    run_id: Option<String>,
    variant: String,
    line: String,
}

impl Row {
    /// The row of `record`.
    pub fn of(record: &Record) -> Row {
        let kind = match record.kind {
            Kind::Measurement => "measurement",
            Kind::Verdict => "verdict",
            Kind::Failure => "failure",
        };
        Row {
            ts_ms: record.run.ts_ms,
            bench: record.bench.clone(),
            kind,
            run_id: record.run.id.clone(),
            variant: serde_json::to_string(&record.variant).expect("variants serialize"),
            line: record.to_line(),
        }
    }
}

/// Appends every record of `files` to `warehouse` in one commit.
pub async fn publish(warehouse: &Warehouse, files: &[PathBuf]) -> Result<Published> {
    let table = warehouse.table().await?;
    let (tx, mut rx) = mpsc::channel::<Vec<Row>>(2);
    let inputs = files.to_vec();
    let reader = tokio::task::spawn_blocking(move || read_chunks(&inputs, &tx));
    let mut written: Vec<DataFile> = Vec::new();
    let mut failed = None;
    while let Some(chunk) = rx.recv().await {
        match write_chunk(&table, chunk).await {
            Ok(files) => written.extend(files),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    drop(rx);
    let read = reader.await.map_err(|e| anyhow!("the reader stopped: {e}"));
    let outcome = match (failed, read) {
        (Some(e), _) => Err(e),
        (None, Err(e)) | (None, Ok(Err(e))) => Err(e),
        (None, Ok(Ok(records))) => match warehouse.commit(written.clone()).await {
            Ok(attempts) => return Ok(Published { records, files: written.len(), attempts }),
            Err(e) => Err(e),
        },
    };
    remove(&table, &written).await;
    outcome
}

/// Reads `files` into chunks of rows, sent as they fill; the number of records.
fn read_chunks(files: &[PathBuf], tx: &mpsc::Sender<Vec<Row>>) -> Result<usize> {
    let mut total = 0;
    let mut chunk = Vec::with_capacity(CHUNK);
    for file in files {
        each_record(
            file,
            |entry| Row::of(&entry.record),
            |row| {
                total += 1;
                chunk.push(row);
                if chunk.len() == CHUNK {
                    send(tx, std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)))?;
                }
                Ok(())
            },
        )?;
        // Each file's last chunk is written before the next file is read.
        if !chunk.is_empty() {
            send(tx, std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)))?;
        }
    }
    Ok(total)
}

fn send(tx: &mpsc::Sender<Vec<Row>>, chunk: Vec<Row>) -> Result<()> {
    tx.blocking_send(chunk).map_err(|_| anyhow!("the writer stopped"))
}

/// Writes one chunk as ZSTD-compressed Parquet files of `table`, one per (day, bench) partition.
async fn write_chunk(table: &Table, rows: Vec<Row>) -> Result<Vec<DataFile>> {
    let metadata = table.metadata();
    let schema = Arc::new(iceberg::arrow::schema_to_arrow_schema(metadata.current_schema())?);
    let columns = schema.fields().iter().map(|field| column(field.name(), &rows)).collect::<Result<Vec<ArrayRef>>>()?;
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    drop(rows);
    let names = DefaultFileNameGenerator::new(uuid::Uuid::new_v4().to_string(), None, DataFileFormat::Parquet);
    // The record text is kilobytes of JSON per row, never equal, never filtered on: a dictionary and min/max
    // statistics of it cost time and buy nothing.
    let record = ColumnPath::from("record");
    let properties = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
        .set_column_dictionary_enabled(record.clone(), false)
        .set_column_statistics_enabled(record, EnabledStatistics::None)
        .build();
    let parquet = ParquetWriterBuilder::new(properties, metadata.current_schema().clone());
    let rolling = RollingFileWriterBuilder::new_with_default_file_size(
        parquet,
        table.file_io().clone(),
        DefaultLocationGenerator::new(metadata)?,
        names,
    );
    // The splitter yields each partition of the chunk once: one open file at a time.
    let mut writer = ClusteredWriter::new(DataFileWriterBuilder::new(rolling));
    let splitter = iceberg::arrow::RecordBatchPartitionSplitter::try_new_with_computed_values(
        metadata.current_schema().clone(),
        metadata.default_partition_spec().clone(),
    )?;
    for (key, part) in splitter.split(&batch)? {
        writer.write(key, part).await?;
    }
    Ok(writer.close().await?)
}

/// The column `name` of the table for `rows`.
fn column(name: &str, rows: &[Row]) -> Result<ArrayRef> {
    let text = |f: &dyn Fn(&Row) -> Option<&str>| Arc::new(rows.iter().map(f).collect::<StringArray>()) as ArrayRef;
    Ok(match name {
        "ts" => {
            let micros = rows.iter().map(|r| r.ts_ms as i64 * 1000).collect::<Vec<_>>();
            Arc::new(TimestampMicrosecondArray::from(micros).with_timezone("+00:00"))
        }
        "bench" => text(&|r| Some(&r.bench)),
        "kind" => text(&|r| Some(r.kind)),
        "run_id" => text(&|r| r.run_id.as_deref()),
        "record" => text(&|r| Some(&r.line)),
        VARIANT => text(&|r| Some(&r.variant)),
        other => return Err(anyhow!("the records table has a column `{other}` this benchhost does not know")),
    })
}

/// Deletes files a failed publish wrote (best effort: what remains is found by a later cleanup).
async fn remove(table: &Table, files: &[DataFile]) {
    for file in files {
        let _ = table.file_io().delete(file.file_path()).await;
    }
}
