//! Which of a publish's records the table holds already: the `identity` column of the data files its records
//! could be in, each file read once per publish.
//!
//! Data files never change, so a file read once needs no second look: after a lost commit race, the check
//! reads only the files the winners added. Files are read many at once, and only their identity column (range
//! reads of the footer and one column chunk): over S3 each read is a round trip, and iceberg's own scan reads
//! as many files at once as the machine has cores.

use std::collections::{BTreeSet, HashSet};

use anyhow::{Result, anyhow};
use arrow::array::{Array, StringArray};
use futures::{StreamExt, TryStreamExt};
use iceberg::arrow::ArrowFileReader;
use iceberg::expr::Reference;
use iceberg::io::{FileIO, FileMetadata};
use iceberg::scan::FileScanTask;
use iceberg::spec::Datum;
use iceberg::table::Table;
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};

use crate::schema::IDENTITY;

/// Data files read at once: round trips to the object store, not cores.
const FILES_AT_ONCE: usize = 16;

/// The records one publish writes: their identities and where they fall (to find them in the table).
#[derive(Default)]
pub struct IncomingRecords {
    pub ids: HashSet<u128>,
    pub duplicates: usize,
    pub first_ms: u64,
    pub last_ms: u64,
    pub benches: BTreeSet<String>,
}

/// The data files one publish has read the identities of.
#[derive(Default)]
pub struct CheckedFiles {
    paths: HashSet<String>,
}

impl CheckedFiles {
    /// Which of `incoming` the table holds: the identities in the files of the partitions (months and benches) and
    /// time range they fall in, but those read before.
    pub async fn held(&mut self, table: &Table, incoming: &IncomingRecords) -> Result<HashSet<u128>> {
        let mut found = HashSet::new();
        if table.metadata().current_snapshot().is_none() || incoming.ids.is_empty() {
            return Ok(found);
        }
        let micros = |ms: u64| Datum::timestamptz_micros(ms as i64 * 1000);
        let filter = Reference::new("ts")
            .greater_than_or_equal_to(micros(incoming.first_ms))
            .and(Reference::new("ts").less_than_or_equal_to(micros(incoming.last_ms)))
            .and(Reference::new("bench").is_in(incoming.benches.iter().map(Datum::string)));
        let scan = table.scan().select([IDENTITY]).with_filter(filter).build()?;
        let tasks: Vec<FileScanTask> = scan.plan_files().await?.try_collect().await?;
        let unread: Vec<FileScanTask> =
            tasks.into_iter().filter(|task| !self.paths.contains(&task.data_file_path)).collect();
        let io = table.file_io();
        let mut reads = futures::stream::iter(unread).map(|task| identities(io, task)).buffer_unordered(FILES_AT_ONCE);
        while let Some((path, ids)) = reads.try_next().await? {
            found.extend(ids.into_iter().filter(|id| incoming.ids.contains(id)));
            self.paths.insert(path);
        }
        Ok(found)
    }
}

/// The identities in the data file of `task` (none in a file written before the column existed).
async fn identities(io: &FileIO, task: FileScanTask) -> Result<(String, Vec<u128>)> {
    let input = io.new_input(&task.data_file_path)?;
    let file = ArrowFileReader::new(FileMetadata { size: task.file_size_in_bytes }, Box::new(input.reader().await?));
    let builder = ParquetRecordBatchStreamBuilder::new(file).await?;
    let mask = ProjectionMask::columns(builder.parquet_schema(), [IDENTITY]);
    let mut batches = builder.with_projection(mask).build()?;
    let mut ids = Vec::new();
    while let Some(batch) = batches.try_next().await? {
        let Some(column) = batch.columns().first() else { break };
        let column = column.as_any().downcast_ref::<StringArray>();
        let column = column.ok_or_else(|| anyhow!("the {IDENTITY} column of {} is not text", task.data_file_path))?;
        ids.extend(column.iter().flatten().filter_map(|id| u128::from_str_radix(id, 16).ok()));
    }
    Ok((task.data_file_path, ids))
}
