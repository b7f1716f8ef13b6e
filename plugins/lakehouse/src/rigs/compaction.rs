//! benchhost rig `compaction`: seed 000's `compactor/rewrite_6_files`. A traces table seeded with `files`
//! separate appends is rewritten into one file and committed as one `replace` snapshot.
//!
//! Every iteration needs a freshly seeded table, so seeding happens in `prepare`, outside the timed region
//! (Criterion's `iter_batched`); each table has its own catalog and storage, so no iteration sees another's
//! files. Also untimed, as seed 000 leaves it untimed: loading the table and planning the rewrite (the live
//! manifest entries and the scan's file tasks; the candidate needs at least [`THRESHOLD`] files, the seed's
//! file-count threshold). Timed, the execution of the planned candidate alone: read the planned files' rows,
//! write one Parquet file, commit the replace. Checked after the timed region, for every rewritten table: the
//! same row count and order-independent checksum as seeded, exactly one live file, and it is the file the
//! rewrite wrote.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use arrow::array::RecordBatch;
use benchhost_plugin_api::{Descriptor, Invariant, Metric, Outcome, Param, Rig, RigError, SetupContext, Unit};
use futures::{StreamExt, TryStreamExt};
use iceberg::arrow::ArrowReaderBuilder;
use iceberg::scan::FileScanTask;
use iceberg::{Catalog, TableIdent};
use serde::Deserialize;
use tokio::runtime::Runtime;

use crate::runtime;
use crate::table::replace;
use crate::table::snapshot::{self, Kept};
use crate::table::traces::{self, Tally};
use crate::table::warehouse::{self, Layout, Storage, Warehouse};

/// Parameters of `compaction`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    files: i64,
    rows_per_file: i64,
    storage: Storage,
    workers: i64,
}

/// The planner's file-count threshold: a table with fewer live files is no candidate (seed 000's 3).
pub const THRESHOLD: usize = 3;

/// A seeded table waiting for its rewrite, or a rewritten one waiting for its check.
struct Table {
    warehouse: Warehouse,
    ident: TableIdent,
    seeded: Tally,
    /// Set by the planning: what the rewrite executes.
    candidate: Option<Candidate>,
    /// Set by the rewrite: the files it wrote.
    written: Vec<String>,
    /// On disk: the directory the table was placed in (see [`Seeds::Directories`]).
    dir: Option<usize>,
}

/// A planned rewrite: the table as loaded, its live entries (which the replace removes) and the scan tasks that
/// read their rows.
struct Candidate {
    loaded: iceberg::table::Table,
    old: Vec<iceberg::spec::ManifestEntryRef>,
    tasks: Vec<FileScanTask>,
}

/// Loads the table and plans its rewrite (untimed, as the seed's planner is).
async fn plan(table: &Table) -> Result<Candidate, RigError> {
    let loaded = table.warehouse.catalog.load_table(&table.ident).await?;
    let old = replace::live_entries(&loaded).await?;
    if old.len() < THRESHOLD {
        let message = format!("{} live files: no candidate below the threshold of {THRESHOLD}", old.len());
        return Err(RigError::invalid_params(message));
    }
    let tasks = loaded.scan().select_all().build()?.plan_files().await?.try_collect().await?;
    table.warehouse.io.take();
    Ok(Candidate { loaded, old, tasks })
}

/// What one rewrite did.
#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    rewrites: u64,
    input_files: u64,
    output_files: u64,
    bytes_read: u64,
    bytes_written: u64,
    rows: u64,
}

/// The rig.
pub struct Compaction {
    params: Params,
    runtime: Runtime,
    scratch: PathBuf,
    seeds: Seeds,
    /// The rows every seeded table holds.
    seeded: Tally,
    ready: VecDeque<Table>,
    rewritten: Vec<Table>,
    totals: Totals,
    checked: Tally,
    checked_expected: Tally,
    live_files_after: u64,
}

/// Where the tables come from: each a copy of a seed kept once, as seeding a table anew took 40 ms of each
/// 46 ms iteration on disk (six appends: Parquet, manifests, commits).
enum Seeds {
    /// The seed kept for this library and run, copied into a memory warehouse of its own for every table.
    Memory(Kept),
    /// Directories `warehouse-N` under the scratch directory, each seeded once at its path (its table's metadata
    /// names its files there) and written anew from that seed, on disk, for every table placed in it; `free` are
    /// the directories whose last table was checked and removed.
    Directories { kept: Vec<Kept>, free: Vec<usize> },
}

impl Compaction {
    /// A freshly seeded table: a copy of the kept seed, in memory or written into a free directory.
    fn seed(&mut self) -> Result<Table, RigError> {
        let (files, rows) = (self.params.files as usize, self.params.rows_per_file as usize);
        let (kept, free) = match &mut self.seeds {
            Seeds::Memory(kept) => {
                return self.runtime.block_on(async {
                    let warehouse = Warehouse::new(Storage::Memory, Path::new("")).await?;
                    let ident = kept.load(&warehouse, "traces").await?;
                    Ok(Table { warehouse, ident, seeded: self.seeded, candidate: None, written: Vec::new(), dir: None })
                });
            }
            Seeds::Directories { kept, free } => (kept, free),
        };
        let n = match free.pop() {
            Some(n) => n,
            None => {
                let dir = self.scratch.join(format!("warehouse-{}", kept.len()));
                let (seed, tally) = self.runtime.block_on(async {
                    let warehouse = Warehouse::seeding_at(&dir).await?;
                    let (table, tally) = seed_into(&warehouse, files, rows).await?;
                    Ok::<_, RigError>((Kept::of(&warehouse, &table).await?, tally))
                })?;
                kept.push(seed);
                self.seeded = tally;
                kept.len() - 1
            }
        };
        let dir = self.scratch.join(format!("warehouse-{n}"));
        std::fs::create_dir_all(&dir)?;
        let seeded = self.seeded;
        self.runtime.block_on(async {
            let warehouse = Warehouse::new(Storage::Fs, &dir).await?;
            let ident = kept[n].load(&warehouse, "traces").await?;
            Ok(Table { warehouse, ident, seeded, candidate: None, written: Vec::new(), dir: Some(n) })
        })
    }

    /// Checks every rewritten table, then frees it.
    fn check_rewritten(&mut self) -> Result<(), RigError> {
        for table in std::mem::take(&mut self.rewritten) {
            let (tally, live) = self.runtime.block_on(read_back(&table))?;
            if live != table.written {
                return Err(RigError::verification(format!(
                    "after the rewrite the live files are {live:?}, the rewrite wrote {:?}",
                    table.written
                )));
            }
            if tally != table.seeded {
                return Err(RigError::verification(format!(
                    "the rewrite changed the rows: {} rows with checksum {:016x} seeded, {} with {:016x} after",
                    table.seeded.rows, table.seeded.checksum, tally.rows, tally.checksum
                )));
            }
            self.live_files_after += live.len() as u64;
            self.checked.rows += tally.rows;
            self.checked.checksum = self.checked.checksum.wrapping_add(tally.checksum);
            self.checked_expected.rows += table.seeded.rows;
            self.checked_expected.checksum = self.checked_expected.checksum.wrapping_add(table.seeded.checksum);
            if let (Some(n), Seeds::Directories { free, .. }) = (table.dir, &mut self.seeds) {
                std::fs::remove_dir_all(self.scratch.join(format!("warehouse-{n}")))?;
                free.push(n);
            }
        }
        Ok(())
    }
}

/// Creates table `traces` in `warehouse` and appends `files` files of `rows` rows, one commit each: the table and
/// the tally of what was written.
async fn seed_into(
    warehouse: &Warehouse,
    files: usize,
    rows: usize,
) -> Result<(iceberg::table::Table, Tally), RigError> {
    let mut table = warehouse.create("traces", Layout::Unpartitioned).await?;
    let mut seeded = Tally::default();
    for f in 0..files {
        let spans = traces::compaction_file(f, rows);
        seeded.add(&traces::to_batch(&warehouse::arrow_schema(&table)?, &spans)?);
        table = warehouse.append(&table, &spans).await?;
    }
    Ok((table, seeded))
}

/// Seeds a table in a memory warehouse of its own and keeps it in `dir` (see [`snapshot`]); the tally of its
/// rows is kept with it, so that every copy is checked against what was seeded.
async fn keep_seeded(files: usize, rows: usize, dir: &Path) -> Result<(), RigError> {
    let warehouse = Warehouse::seeding(Storage::Memory, dir).await?;
    let (table, seeded) = seed_into(&warehouse, files, rows).await?;
    snapshot::keep(&warehouse, &table, dir).await?;
    std::fs::write(dir.join(TALLY), format!("{} {}", seeded.rows, seeded.checksum))?;
    Ok(())
}

/// The file of a kept seed holding its tally: rows, then checksum.
const TALLY: &str = "tally";

/// The seed of `params` kept for this library and run (built by the first instance that needs it), read into
/// memory with its tally.
fn kept_seed(params: &Params, ctx: &SetupContext, runtime: &Runtime) -> Result<(Kept, Tally), RigError> {
    let (files, rows) = (params.files as usize, params.rows_per_file as usize);
    let dir = ctx.seed(&format!("compaction-{files}x{rows}"), |dir| runtime.block_on(keep_seeded(files, rows, dir)))?;
    let text = std::fs::read_to_string(dir.join(TALLY))?;
    let bad = || RigError::new(format!("{}: not a tally: {text:?}", dir.join(TALLY).display()));
    let (rows, checksum) = text.split_once(' ').ok_or_else(bad)?;
    let tally = Tally { rows: rows.parse().map_err(|_| bad())?, checksum: checksum.parse().map_err(|_| bad())? };
    Ok((Kept::read(&dir)?, tally))
}

/// The rows of the table's current snapshot and the files its scan reads.
async fn read_back(table: &Table) -> Result<(Tally, Vec<String>), RigError> {
    let loaded = table.warehouse.catalog.load_table(&table.ident).await?;
    let scan = loaded.scan().select_all().build()?;
    let tasks: Vec<_> = scan.plan_files().await?.try_collect().await?;
    let mut live: Vec<String> = tasks.iter().map(|t| t.data_file_path.clone()).collect();
    live.sort();
    let batches: Vec<RecordBatch> = scan.to_arrow().await?.try_collect().await?;
    Ok((Tally::of(&batches), live))
}

/// The timed work: the planned candidate executed, its files rewritten into one, committed as a replace snapshot.
async fn rewrite(table: &mut Table) -> Result<Totals, RigError> {
    let catalog = table.warehouse.catalog.as_ref();
    let Candidate { loaded, old, tasks } =
        table.candidate.take().ok_or_else(|| RigError::new("no planned candidate: `prepare` plans each table"))?;
    let tasks = futures::stream::iter(tasks.into_iter().map(Ok)).boxed();
    let reader = ArrowReaderBuilder::new(loaded.file_io().clone(), iceberg::Runtime::current()).build();
    let batches: Vec<RecordBatch> = reader.read(tasks)?.stream().try_collect().await?;
    // The reader's batches carry no Parquet field ids; the writer matches columns by them.
    let schema = warehouse::arrow_schema(&loaded)?;
    let merged = arrow::compute::concat_batches(&schema, &batches)?;
    let rows = merged.num_rows() as u64;
    let merged = RecordBatch::try_new(schema, merged.columns().to_vec())?;
    let new = warehouse::write_file(&loaded, merged, 0).await?;
    table.written = new.iter().map(|f| f.file_path().to_string()).collect();
    table.written.sort();
    let bytes_written = new.iter().map(|f| f.file_size_in_bytes()).sum();
    let output_files = new.len() as u64;
    replace::commit(catalog, &loaded, &old, new).await?;
    let io = table.warehouse.io.take();
    Ok(Totals {
        rewrites: 1,
        input_files: old.len() as u64,
        output_files,
        bytes_read: io.data_bytes_read,
        bytes_written,
        rows,
    })
}

impl Rig for Compaction {
    type Params = Params;

    fn describe() -> Descriptor {
        Descriptor::iterations("compaction", "rewrite a traces table's small files into one, as a replace snapshot")
            .param(
                Param::int("files", 6)
                    .range(THRESHOLD as i64, 1_000)
                    .doc("separate appends seeded before each rewrite (the planner's threshold is 3)"),
            )
            .param(Param::int("rows_per_file", 100).range(1, 10_000_000))
            .param(Param::choice("storage", "memory", &["memory", "fs"]).doc("iceberg's memory storage or a local dir"))
            .param(runtime::param(0))
            .metric(Metric::iter_time("rewrite_time"))
            .metric(Metric::rate("rows_per_s", Unit::RowsPerSec, "rows"))
            .metric(Metric::counter("input_files", Unit::Files, "input_files").doc("per rewrite"))
            .metric(Metric::counter("output_files", Unit::Files, "output_files").doc("per rewrite"))
            .metric(Metric::counter("bytes_read", Unit::Bytes, "bytes_read").doc("Parquet bytes fetched per rewrite"))
            .metric(Metric::counter("bytes_written", Unit::Bytes, "bytes_written").doc("Parquet bytes per rewrite"))
            .invariant(Invariant::equal("rows_after", "rows_seeded"))
            .invariant(Invariant::equal("checksum_after", "checksum_seeded"))
            .invariant(Invariant::equal("live_files_after", "files_written"))
    }

    fn setup(params: Params, ctx: &SetupContext) -> Result<Self, RigError> {
        let runtime = runtime::new(params.workers, ctx)?;
        let (seeds, seeded) = match params.storage {
            Storage::Memory => {
                let (kept, tally) = kept_seed(&params, ctx, &runtime)?;
                (Seeds::Memory(kept), tally)
            }
            Storage::Fs => (Seeds::Directories { kept: Vec::new(), free: Vec::new() }, Tally::default()),
        };
        Ok(Compaction {
            params,
            runtime,
            scratch: ctx.scratch_dir.clone(),
            seeds,
            seeded,
            ready: VecDeque::new(),
            rewritten: Vec::new(),
            totals: Totals::default(),
            checked: Tally::default(),
            checked_expected: Tally::default(),
            live_files_after: 0,
        })
    }

    fn prepare(&mut self, batch: u64) -> Result<(), RigError> {
        self.check_rewritten()?;
        while (self.ready.len() as u64) < batch {
            let mut table = self.seed()?;
            table.candidate = Some(self.runtime.block_on(plan(&table))?);
            self.ready.push_back(table);
        }
        Ok(())
    }

    fn iterate(&mut self) -> Result<(), RigError> {
        benchhost_plugin_api::slower::spin(crate::SLOWER);
        let mut table = match self.ready.pop_front() {
            Some(table) => table,
            // Only when the host did not prepare this iteration: seeding is then timed, so refuse.
            None => return Err(RigError::new("no seeded table is ready: `prepare` was not called for this batch")),
        };
        let done = self.runtime.block_on(rewrite(&mut table))?;
        let t = &mut self.totals;
        t.rewrites += done.rewrites;
        t.input_files += done.input_files;
        t.output_files += done.output_files;
        t.bytes_read += done.bytes_read;
        t.bytes_written += done.bytes_written;
        t.rows += done.rows;
        self.rewritten.push(table);
        Ok(())
    }

    fn teardown(mut self) -> Result<Outcome, RigError> {
        self.check_rewritten()?;
        let t = self.totals;
        if t.rewrites == 0 {
            return Err(RigError::verification("no rewrite ran"));
        }
        let per = |total: u64| (total + t.rewrites / 2) / t.rewrites;
        Ok(Outcome::new()
            .counter("rows", per(t.rows))
            .counter("input_files", per(t.input_files))
            .counter("output_files", per(t.output_files))
            .counter("bytes_read", per(t.bytes_read))
            .counter("bytes_written", per(t.bytes_written))
            .counter("rewrites", t.rewrites)
            .counter("rows_after", self.checked.rows)
            .counter("rows_seeded", self.checked_expected.rows)
            .counter("checksum_after", self.checked.checksum)
            .counter("checksum_seeded", self.checked_expected.checksum)
            .counter("live_files_after", self.live_files_after)
            .counter("files_written", t.output_files))
    }
}

#[cfg(test)]
#[path = "compaction_tests.rs"]
mod tests;

/// For tests outside this module: one table seeded on a local directory and rewritten by the rig's code.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// The rewritten table's metadata file and the files the rewrite wrote.
    pub struct Rewritten {
        pub metadata_location: String,
        pub written: Vec<String>,
    }

    pub fn rewrite_one_fs_table(dir: &std::path::Path, files: i64, rows_per_file: i64) -> Rewritten {
        let params = Params { files, rows_per_file, storage: Storage::Fs, workers: 0 };
        let ctx =
            SetupContext { scratch_dir: dir.to_path_buf(), quick: true, seed_dir: None, ..SetupContext::default() };
        let mut rig = Compaction::setup(params, &ctx).unwrap();
        let mut table = rig.seed().unwrap();
        table.candidate = Some(rig.runtime.block_on(plan(&table)).unwrap());
        rig.runtime.block_on(rewrite(&mut table)).unwrap();
        let loaded = rig.runtime.block_on(table.warehouse.catalog.load_table(&table.ident)).unwrap();
        let metadata_location = loaded.metadata_location().unwrap().to_string();
        Rewritten { metadata_location, written: table.written }
    }
}
