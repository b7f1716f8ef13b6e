//! The data files of one publish attempt: one open Parquet file per partition, fed chunk after chunk, so that
//! a partition's records of the whole input land in one file (rolled past iceberg's target size), not in one
//! file per chunk that touched it.
//!
//! Memory stays bounded whatever the input's order: a file holds at most one row group of [`ROW_GROUP`]
//! bytes (compressed) before it goes to storage, and at most [`OPEN`] files are open: past that, those written
//! to least recently are closed. Nightly records in file order touch a month's partitions at a time. Over 1M
//! records: 469 files of ~2,100 records became 259, one per partition (each file costs a create, a footer,
//! and a read by every later check and report).

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{Result, anyhow};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use iceberg::arrow::schema_to_arrow_schema;
use iceberg::io::FileIO;
use iceberg::spec::{DataFile, DataFileFormat, Struct};
use iceberg::table::Table;
use iceberg::writer::base_writer::data_file_writer::{DataFileWriter, DataFileWriterBuilder};
use iceberg::writer::file_writer::ParquetWriterBuilder;
use iceberg::writer::file_writer::location_generator::{DefaultFileNameGenerator, DefaultLocationGenerator};
use iceberg::writer::file_writer::rolling_writer::RollingFileWriterBuilder;
use iceberg::writer::{IcebergWriter, IcebergWriterBuilder};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use tokio::task::JoinSet;

use crate::schema::IDENTITY;
use crate::table_rows::{self, Row};

/// Bytes of a row group (compressed, as parquet estimates it): what a file holds in memory before it writes
/// them out (~14,000 records).
const ROW_GROUP: usize = 4 << 20;
/// Files open at once, at most.
const OPEN: usize = 32;

type Writer = DataFileWriter<ParquetWriterBuilder, DefaultLocationGenerator, DefaultFileNameGenerator>;
type Builder = DataFileWriterBuilder<ParquetWriterBuilder, DefaultLocationGenerator, DefaultFileNameGenerator>;

/// An open file and when it was last written to (in chunks).
struct OpenWriter {
    writer: Writer,
    written: u64,
}

/// The files one attempt writes, by partition.
pub struct PartitionWriters {
    table: Table,
    /// The table's columns as arrow's, made once for every batch of every file.
    columns: SchemaRef,
    builder: Builder,
    open: HashMap<Struct, OpenWriter>,
    closed: Vec<DataFile>,
    chunks: u64,
}

impl PartitionWriters {
    /// No file yet; the files it opens are named after one new id (numbered by one counter, so a partition
    /// whose file was closed and opened again gets a new name).
    pub fn new(table: &Table) -> Result<PartitionWriters> {
        let metadata = table.metadata();
        // The record text (kilobytes of JSON) and the identity (a hash) differ from row to row and are never
        // filtered on: a dictionary and min/max statistics of them cost time and buy nothing.
        let mut properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
            .set_max_row_group_bytes(Some(ROW_GROUP));
        for unique in ["record", IDENTITY] {
            properties = properties
                .set_column_dictionary_enabled(ColumnPath::from(unique), false)
                .set_column_statistics_enabled(ColumnPath::from(unique), EnabledStatistics::None);
        }
        // Names stay short: s3s-fs keeps a file named after each object's whole key in base64, and a file name
        // has 255 bytes.
        let name = uuid::Uuid::new_v4().to_string();
        let rolling = RollingFileWriterBuilder::new_with_default_file_size(
            ParquetWriterBuilder::new(properties.build(), metadata.current_schema().clone()),
            table.file_io().clone(),
            DefaultLocationGenerator::new(metadata)?,
            DefaultFileNameGenerator::new(name, None, DataFileFormat::Parquet),
        );
        Ok(PartitionWriters {
            table: table.clone(),
            columns: Arc::new(schema_to_arrow_schema(metadata.current_schema())?),
            builder: DataFileWriterBuilder::new(rolling),
            open: HashMap::new(),
            closed: Vec::new(),
            chunks: 0,
        })
    }

    /// Writes `rows`, each to the file of its partition (opened on first use), the partitions at once on the
    /// runtime's workers.
    pub async fn write(&mut self, rows: Vec<Row>) -> Result<()> {
        self.chunks += 1;
        let mut tasks = JoinSet::new();
        for (key, rows) in table_rows::partitions(&self.table, rows)? {
            let data = key.data().clone();
            // (Building a writer opens nothing: its file is created by its first write.)
            let mut writer = match self.open.remove(&data) {
                Some(open) => open.writer,
                None => self.builder.build(Some(key)).await?,
            };
            let columns = self.columns.clone();
            tasks.spawn(async move {
                let written = write_rows(columns, &mut writer, &rows).await;
                (data, writer, written)
            });
        }
        let mut failed = None;
        while let Some(done) = tasks.join_next().await {
            match done {
                Ok((data, writer, written)) => {
                    self.open.insert(data, OpenWriter { writer, written: self.chunks });
                    failed = failed.or(written.err());
                }
                // The file it was writing is left to `gc`: its writer is gone with the task.
                Err(e) => failed = failed.or(Some(anyhow!("a partition's writer stopped: {e}"))),
            }
        }
        match failed {
            Some(e) => Err(e),
            None => self.close_least_recent().await,
        }
    }

    /// Closes every file: the data files written, or on an error none (each one is removed).
    pub async fn close(mut self) -> Result<Vec<DataFile>> {
        match self.close_all().await {
            Ok(()) => Ok(self.closed),
            Err(e) => {
                table_rows::remove(self.table.file_io(), &self.closed).await;
                Err(e)
            }
        }
    }

    /// Closes every file and removes every file written (the attempt failed).
    pub async fn abandon(mut self) {
        let _ = self.close_all().await;
        table_rows::remove(self.table.file_io(), &self.closed).await;
    }

    /// What the files are written with (to remove them again).
    pub fn io(&self) -> &FileIO {
        self.table.file_io()
    }

    /// Closes the files written to least recently while more than [`OPEN`] are open.
    async fn close_least_recent(&mut self) -> Result<()> {
        if self.open.len() <= OPEN {
            return Ok(());
        }
        let mut by_age: Vec<(u64, Struct)> =
            self.open.iter().map(|(data, open)| (open.written, data.clone())).collect();
        by_age.sort_by_key(|(written, _)| *written);
        let excess = by_age.len() - OPEN;
        let oldest = by_age.into_iter().take(excess).filter_map(|(_, data)| self.open.remove(&data)).collect();
        self.close_each(oldest).await
    }

    async fn close_all(&mut self) -> Result<()> {
        let all = self.open.drain().map(|(_, open)| open).collect();
        self.close_each(all).await
    }

    /// Closes `files` at once, keeping what each wrote; the first error, after all are closed.
    async fn close_each(&mut self, files: Vec<OpenWriter>) -> Result<()> {
        let mut tasks = JoinSet::new();
        for mut open in files {
            tasks.spawn(async move { open.writer.close().await });
        }
        let mut failed = None;
        while let Some(done) = tasks.join_next().await {
            match done.map_err(|e| anyhow!("a partition's writer stopped: {e}")) {
                Ok(Ok(files)) => self.closed.extend(files),
                Ok(Err(e)) => failed = failed.or(Some(e.into())),
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        failed.map_or(Ok(()), Err)
    }
}

/// Writes `rows` (one partition's) as one batch of the table's `columns`.
async fn write_rows(columns: SchemaRef, writer: &mut Writer, rows: &[Row]) -> Result<()> {
    let arrays =
        columns.fields().iter().map(|field| table_rows::column(field.name(), rows)).collect::<Result<Vec<_>>>()?;
    writer.write(RecordBatch::try_new(columns, arrays)?).await?;
    Ok(())
}

#[cfg(test)]
#[path = "partition_writers_tests.rs"]
mod tests;
