//! A compaction's execution, as seed 000's `execute_candidate` runs it once its planner has chosen a table
//! (`src/compactor/src/executor.rs` and `rewriter.rs` in cedricziel/signaldb at 9e68c5d): the table loaded
//! fresh and its live files read from its manifests, their rows read, sorted by the traces' canonical key,
//! written as one Parquet file, the row count checked against the manifests', and one replace snapshot
//! committed. Each part is timed on its own, so that a rewrite's time splits where the seed's cannot.

use std::time::{Duration, Instant};

use arrow::array::RecordBatch;
use arrow::compute::{SortColumn, SortOptions};
use futures::{StreamExt, TryStreamExt};
use iceberg::arrow::ArrowReaderBuilder;
use iceberg::scan::FileScanTask;
use iceberg::{Catalog, TableIdent};

use crate::table::replace;
use crate::table::traces::SORT_KEY;
use crate::table::warehouse::{self, Warehouse};

/// The time of each part of one rewrite.
#[derive(Debug, Default, Clone, Copy)]
pub struct Parts {
    /// The table loaded, its live files read from its manifests and its scan planned.
    pub load: Duration,
    /// The planned files' rows read and merged into one batch.
    pub read: Duration,
    /// The merged rows sorted by [`SORT_KEY`].
    pub sort: Duration,
    /// One Parquet file written.
    pub write: Duration,
    /// The replace snapshot committed.
    pub commit: Duration,
}

impl Parts {
    /// Adds each part of `other` to this one's.
    pub fn add(&mut self, other: &Parts) {
        self.load += other.load;
        self.read += other.read;
        self.sort += other.sort;
        self.write += other.write;
        self.commit += other.commit;
    }
}

/// What one rewrite did.
#[derive(Debug)]
pub struct Rewritten {
    pub input_files: u64,
    /// The paths of the files written, sorted.
    pub written: Vec<String>,
    pub bytes_written: u64,
    pub rows: u64,
    pub parts: Parts,
}

/// Rewrites table `ident` of `warehouse` into one file sorted by [`SORT_KEY`], committed as one replace snapshot.
pub async fn rewrite(warehouse: &Warehouse, ident: &TableIdent) -> Result<Rewritten, iceberg::Error> {
    let mut parts = Parts::default();
    let mut clock = Instant::now();
    let mut lap = |part: &mut Duration| {
        let now = Instant::now();
        *part = now - clock;
        clock = now;
    };

    let loaded = warehouse.catalog.load_table(ident).await?;
    let old = replace::live_entries(&loaded).await?;
    let tasks: Vec<FileScanTask> = loaded.scan().select_all().build()?.plan_files().await?.try_collect().await?;
    lap(&mut parts.load);

    let tasks = futures::stream::iter(tasks.into_iter().map(Ok)).boxed();
    let reader = ArrowReaderBuilder::new(loaded.file_io().clone(), iceberg::Runtime::current()).build();
    let batches: Vec<RecordBatch> = reader.read(tasks)?.stream().try_collect().await?;
    // The reader's batches carry no Parquet field ids; the writer matches columns by them.
    let schema = warehouse::arrow_schema(&loaded)?;
    let merged = arrow::compute::concat_batches(&schema, &batches)?;
    lap(&mut parts.read);

    let sorted = sorted_by_key(&merged)?;
    lap(&mut parts.sort);

    let rows = sorted.num_rows() as u64;
    let new = warehouse::write_file(&loaded, RecordBatch::try_new(schema, sorted.columns().to_vec())?, 0).await?;
    lap(&mut parts.write);

    // As the seed's executor: every row the manifests call live must be in what was written, or nothing commits.
    let live_rows: u64 = old.iter().map(|entry| entry.data_file().record_count()).sum();
    if rows != live_rows {
        let message = format!("the manifests hold {live_rows} live rows, the rewrite wrote {rows}: not committed");
        return Err(iceberg::Error::new(iceberg::ErrorKind::DataInvalid, message));
    }
    let mut written: Vec<String> = new.iter().map(|f| f.file_path().to_string()).collect();
    written.sort();
    let bytes_written = new.iter().map(|f| f.file_size_in_bytes()).sum();
    replace::commit(warehouse.catalog.as_ref(), &loaded, &old, new).await?;
    lap(&mut parts.commit);

    Ok(Rewritten { input_files: old.len() as u64, written, bytes_written, rows, parts })
}

/// `batch`'s rows in [`SORT_KEY`] order: ascending, nulls first, as the seed's compactor sorts them.
pub fn sorted_by_key(batch: &RecordBatch) -> Result<RecordBatch, arrow::error::ArrowError> {
    let options = Some(SortOptions { descending: false, nulls_first: true });
    let columns = SORT_KEY
        .iter()
        .map(|name| {
            let values = batch.column_by_name(name).cloned().ok_or_else(|| {
                arrow::error::ArrowError::SchemaError(format!("the sort key's column `{name}` is not in the batch"))
            })?;
            Ok(SortColumn { values, options })
        })
        .collect::<Result<Vec<_>, arrow::error::ArrowError>>()?;
    let indices = arrow::compute::lexsort_to_indices(&columns, None)?;
    arrow::compute::take_record_batch(batch, &indices)
}
