//! A point index: which data files hold a trace, kept as Parquet beside the table, as seed 000's
//! `trace_lookup_by_id_via_index` and `trace_index_scaling` keep theirs. Entries (trace id, file) are sorted by
//! trace id and sharded by the id's first hex digit, one Parquet file per shard, in row groups of
//! [`ROWS_PER_GROUP`] with min/max statistics and a bloom filter on the trace id. A lookup reads one shard:
//! the row groups whose range holds the id and whose bloom filter may hold it, and nothing else. The shards'
//! footers are either read once, when the index opens, as a server keeps them ([`Footers::Kept`]), or by each
//! lookup, the footer of the one shard it needs, as seed 000's `trace_index_scaling` times it
//! ([`Footers::PerLookup`]).

use std::ops::Range;
use std::sync::Arc;

use arrow::array::{Array, AsArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use bytes::Bytes;
use futures::TryStreamExt;
use futures::future::BoxFuture;
use iceberg::io::FileIO;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::arrow::async_reader::{AsyncFileReader, ParquetRecordBatchStreamBuilder};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use parquet::file::properties::WriterProperties;
use parquet::file::statistics::Statistics;
use parquet::schema::types::ColumnPath;

/// Entries per row group: a lookup reads one of them.
pub const ROWS_PER_GROUP: usize = 4096;
/// Shards, by a trace id's first hex digit.
const SHARDS: usize = 16;
/// Tail bytes a lookup fetches to find its shard's footer: the footers of a million-trace index fit.
const FOOTER_HINT: usize = 64 << 10;

/// An index, open: each shard's location, and its footer when they are kept.
pub struct Index {
    file_io: FileIO,
    shards: Vec<Option<Shard>>,
}

struct Shard {
    location: String,
    size: u64,
    /// The footer, parsed; `None` when each lookup reads it.
    metadata: Option<ArrowReaderMetadata>,
}

/// Where a lookup finds its shard's footer (`trace_index`'s `footers` parameter spells it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Footers {
    /// Read and parsed once, when the index opens.
    Kept,
    /// Read by each lookup (its size, then its tail), for the one shard it needs.
    PerLookup,
}

/// What one lookup read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Looked {
    /// Row groups of the shard.
    pub row_groups: u64,
    /// Those the bloom filter was consulted for (their range holds the id).
    pub bloom_checked: u64,
    /// Those read.
    pub read: u64,
    /// Footers the lookup read: 1 with [`Footers::PerLookup`], 0 with kept footers.
    pub footers_read: u64,
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("trace_id", DataType::Utf8, false),
        Field::new("file", DataType::Utf8, false),
    ]))
}

fn shard_of(trace_id: &str) -> usize {
    trace_id.chars().next().and_then(|c| c.to_digit(16)).unwrap_or(0) as usize
}

impl Index {
    /// Writes the index of `entries` (trace id, file) under `location` (a directory of the warehouse) and opens it.
    pub async fn write(
        file_io: &FileIO,
        location: &str,
        mut entries: Vec<(String, String)>,
        footers: Footers,
    ) -> iceberg::Result<Index> {
        entries.sort();
        entries.dedup();
        let mut shards: Vec<Vec<(String, String)>> = vec![Vec::new(); SHARDS];
        for entry in entries {
            shards[shard_of(&entry.0)].push(entry);
        }
        let properties = WriterProperties::builder()
            .set_max_row_group_row_count(Some(ROWS_PER_GROUP))
            .set_column_bloom_filter_enabled(ColumnPath::from("trace_id"), true)
            .build();
        for (i, rows) in shards.iter().enumerate().filter(|(_, rows)| !rows.is_empty()) {
            let batch = RecordBatch::try_new(
                schema(),
                vec![
                    Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0.as_str()))),
                    Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1.as_str()))),
                ],
            )
            .map_err(invalid)?;
            let mut buffer = Vec::new();
            let mut writer = ArrowWriter::try_new(&mut buffer, schema(), Some(properties.clone())).map_err(invalid)?;
            writer.write(&batch).map_err(invalid)?;
            writer.close().map_err(invalid)?;
            file_io.new_output(shard_location(location, i))?.write(Bytes::from(buffer)).await?;
        }
        Index::open(file_io, location, footers).await
    }

    /// Opens the index under `location`: finds its shards, and reads each one's footer if they are kept.
    pub async fn open(file_io: &FileIO, location: &str, footers: Footers) -> iceberg::Result<Index> {
        let mut shards = Vec::new();
        for i in 0..SHARDS {
            let location = shard_location(location, i);
            let input = file_io.new_input(&location)?;
            if !input.exists().await? {
                shards.push(None);
                continue;
            }
            let size = input.metadata().await?.size;
            let metadata = match footers {
                Footers::Kept => Some(read_footer(input, size).await?),
                Footers::PerLookup => None,
            };
            shards.push(Some(Shard { location, size, metadata }));
        }
        Ok(Index { file_io: file_io.clone(), shards })
    }

    /// The index's size in bytes, every shard.
    pub fn size(&self) -> u64 {
        self.shards.iter().flatten().map(|s| s.size).sum()
    }

    /// The files that hold `trace_id`, sorted, and what the lookup read.
    pub async fn lookup(&self, trace_id: &str) -> iceberg::Result<(Vec<String>, Looked)> {
        let Some(shard) = &self.shards[shard_of(trace_id)] else { return Ok((Vec::new(), Looked::default())) };
        let (metadata, size, footers_read) = match &shard.metadata {
            Some(kept) => (kept.clone(), shard.size, 0),
            None => {
                let file = self.file_io.new_input(&shard.location)?;
                let size = file.metadata().await?.size;
                (read_footer(file, size).await?, size, 1)
            }
        };
        let reader = || -> iceberg::Result<ShardReader> {
            let file = self.file_io.new_input(&shard.location)?;
            Ok(ShardReader { file, size, metadata: Some(metadata.metadata().clone()) })
        };
        let mut builder = ParquetRecordBatchStreamBuilder::new_with_metadata(reader()?, metadata.clone());
        let groups = metadata.metadata().row_groups();
        let mut looked = Looked { row_groups: groups.len() as u64, footers_read, ..Looked::default() };
        let mut chosen = Vec::new();
        for (i, group) in groups.iter().enumerate() {
            let in_range = match group.column(0).statistics() {
                Some(Statistics::ByteArray(s)) => match (s.min_opt(), s.max_opt()) {
                    (Some(min), Some(max)) => min.data() <= trace_id.as_bytes() && trace_id.as_bytes() <= max.data(),
                    _ => true,
                },
                _ => true,
            };
            if !in_range {
                continue;
            }
            looked.bloom_checked += 1;
            let bloom = builder.get_row_group_column_bloom_filter(i, 0).await.map_err(invalid)?;
            if bloom.is_none_or(|b| b.check(trace_id)) {
                chosen.push(i);
            }
        }
        looked.read = chosen.len() as u64;
        if chosen.is_empty() {
            return Ok((Vec::new(), looked));
        }
        let builder = ParquetRecordBatchStreamBuilder::new_with_metadata(reader()?, metadata.clone());
        let batches: Vec<RecordBatch> =
            builder.with_row_groups(chosen).build().map_err(invalid)?.try_collect().await.map_err(invalid)?;
        let mut files: Vec<String> = batches
            .iter()
            .flat_map(|b| {
                let (ids, files) = (b.column(0).as_string::<i32>(), b.column(1).as_string::<i32>());
                (0..b.num_rows())
                    .filter(|&r| ids.is_valid(r) && ids.value(r) == trace_id)
                    .map(|r| files.value(r).to_string())
                    .collect::<Vec<_>>()
            })
            .collect();
        files.sort();
        Ok((files, looked))
    }
}

/// A shard's footer, parsed: its tail read (a guess of [`FOOTER_HINT`] bytes, then the rest if the footer is
/// longer), as a Parquet reader opens a file whose size it knows.
async fn read_footer(file: iceberg::io::InputFile, size: u64) -> iceberg::Result<ArrowReaderMetadata> {
    let mut reader = ShardReader { file, size, metadata: None };
    let metadata = ParquetMetaDataReader::new()
        .with_prefetch_hint(Some(FOOTER_HINT))
        .load_and_finish(&mut reader, size)
        .await
        .map_err(invalid)?;
    ArrowReaderMetadata::try_new(Arc::new(metadata), ArrowReaderOptions::new()).map_err(invalid)
}

fn shard_location(location: &str, shard: usize) -> String {
    format!("{location}/trace-index-{shard:x}.parquet")
}

fn invalid(e: impl std::fmt::Display) -> iceberg::Error {
    iceberg::Error::new(iceberg::ErrorKind::DataInvalid, format!("the trace index: {e}"))
}

/// A shard read through the warehouse's `FileIO`; its footer, once known.
struct ShardReader {
    file: iceberg::io::InputFile,
    size: u64,
    metadata: Option<Arc<ParquetMetaData>>,
}

impl AsyncFileReader for ShardReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        Box::pin(async move {
            let end = range.end.min(self.size);
            let reader = self.file.reader().await.map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))?;
            reader.read(range.start..end).await.map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))
        })
    }

    fn get_metadata<'a>(
        &'a mut self,
        _: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        let known = self.metadata.clone();
        Box::pin(
            async move { known.ok_or_else(|| parquet::errors::ParquetError::General("no footer read yet".into())) },
        )
    }
}
