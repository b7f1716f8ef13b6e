//! benchhost rig `compaction`: seed 000's `compactor/rewrite_6_files`. A traces table seeded with `files`
//! separate appends is rewritten into one file and committed as one `replace` snapshot.
//!
//! Every iteration needs a freshly seeded table, so seeding happens in `prepare`, outside the timed region
//! (Criterion's `iter_batched`); each table has its own catalog and storage, so no iteration sees another's
//! files. Also untimed, as seed 000 leaves its planner untimed: the table must have at least [`THRESHOLD`]
//! live files, the seed's file-count threshold. Timed, as the seed times `execute_candidate`, the rewrite
//! ([`rewrite`]): the table loaded fresh and its live files read from its manifests, their rows read, sorted
//! by the traces' canonical key, written as one Parquet file, the row count checked, the replace committed;
//! each part's time is reported beside the whole. Checked after the timed region, for every rewritten table:
//! the same row count and order-independent checksum as seeded, exactly one live file, the one the rewrite
//! wrote, and its rows in key order.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Duration;

use arrow::array::RecordBatch;
use benchhost_plugin_api::{Descriptor, Invariant, Metric, Outcome, Param, Rig, RigError, SetupContext, Unit};
use futures::TryStreamExt;
use iceberg::{Catalog, TableIdent};
use serde::Deserialize;
use tokio::runtime::Runtime;

use crate::runtime;
use crate::table::replace;
use crate::table::rewrite::{self, Parts};
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
    /// Set by the planner: the table is a candidate.
    planned: bool,
    /// Set by the rewrite: the files it wrote.
    written: Vec<String>,
    /// On disk: the directory the table was placed in (see [`Seeds::Directories`]).
    dir: Option<usize>,
}

/// The seed's planner (untimed): the table is a candidate if it has at least [`THRESHOLD`] live files. The
/// rewrite loads it again, as the seed's executor does.
async fn plan(table: &Table) -> Result<(), RigError> {
    let loaded = table.warehouse.catalog.load_table(&table.ident).await?;
    let live = replace::live_entries(&loaded).await?.len();
    if live < THRESHOLD {
        let message = format!("{live} live files: no candidate below the threshold of {THRESHOLD}");
        return Err(RigError::invalid_params(message));
    }
    table.warehouse.io.take();
    Ok(())
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
    parts: Parts,
}

impl Totals {
    fn add(&mut self, done: &Totals) {
        self.rewrites += done.rewrites;
        self.input_files += done.input_files;
        self.output_files += done.output_files;
        self.bytes_read += done.bytes_read;
        self.bytes_written += done.bytes_written;
        self.rows += done.rows;
        self.parts.add(&done.parts);
    }
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
                    Ok(Table { warehouse, ident, seeded: self.seeded, planned: false, written: Vec::new(), dir: None })
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
            Ok(Table { warehouse, ident, seeded, planned: false, written: Vec::new(), dir: Some(n) })
        })
    }

    /// Checks every rewritten table, then frees it.
    fn check_rewritten(&mut self) -> Result<(), RigError> {
        for table in std::mem::take(&mut self.rewritten) {
            let (batches, live) = self.runtime.block_on(read_back(&table))?;
            let tally = Tally::of(&batches);
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
            if let Some(row) = traces::first_out_of_key_order(&batches) {
                return Err(RigError::verification(format!(
                    "the rewritten file is not in (timestamp, trace_id) order: row {row} comes before the row above it"
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

/// The batches of the table's current snapshot, in the order its scan reads them, and the files it reads.
async fn read_back(table: &Table) -> Result<(Vec<RecordBatch>, Vec<String>), RigError> {
    let loaded = table.warehouse.catalog.load_table(&table.ident).await?;
    let scan = loaded.scan().select_all().build()?;
    let tasks: Vec<_> = scan.plan_files().await?.try_collect().await?;
    let mut live: Vec<String> = tasks.iter().map(|t| t.data_file_path.clone()).collect();
    live.sort();
    let batches: Vec<RecordBatch> = scan.to_arrow().await?.try_collect().await?;
    Ok((batches, live))
}

/// The timed work: the planned table rewritten into one file (see [`rewrite`]).
async fn execute(table: &mut Table) -> Result<Totals, RigError> {
    if !std::mem::take(&mut table.planned) {
        return Err(RigError::new("no planned candidate: `prepare` plans each table"));
    }
    let done = rewrite::rewrite(&table.warehouse, &table.ident).await?;
    table.written = done.written;
    Ok(Totals {
        rewrites: 1,
        input_files: done.input_files,
        output_files: table.written.len() as u64,
        bytes_read: table.warehouse.io.take().data_bytes_read,
        bytes_written: done.bytes_written,
        rows: done.rows,
        parts: done.parts,
    })
}

/// The metric of one part of the rewrite: its mean time per rewrite, from counter `{name}_ns`.
fn part(name: &str, doc: &str) -> Metric {
    Metric::counter(&format!("{name}_time"), Unit::Nanos, &format!("{name}_ns")).doc(&format!("per rewrite: {doc}"))
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
            .metric(part("load", "table loaded, live files read from its manifests, scan planned"))
            .metric(part("read", "the planned files' rows read and merged"))
            .metric(part("sort", "the rows sorted by (timestamp, trace_id)"))
            .metric(part("write", "one Parquet file written"))
            .metric(part("commit", "row count checked, replace snapshot committed"))
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
            self.runtime.block_on(plan(&table))?;
            table.planned = true;
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
        let done = self.runtime.block_on(execute(&mut table))?;
        self.totals.add(&done);
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
        let per_ns = |total: Duration| per(total.as_nanos() as u64);
        Ok(Outcome::new()
            .counter("load_ns", per_ns(t.parts.load))
            .counter("read_ns", per_ns(t.parts.read))
            .counter("sort_ns", per_ns(t.parts.sort))
            .counter("write_ns", per_ns(t.parts.write))
            .counter("commit_ns", per_ns(t.parts.commit))
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
        rig.runtime.block_on(plan(&table)).unwrap();
        table.planned = true;
        rig.runtime.block_on(execute(&mut table)).unwrap();
        let loaded = rig.runtime.block_on(table.warehouse.catalog.load_table(&table.ident)).unwrap();
        let metadata_location = loaded.metadata_location().unwrap().to_string();
        Rewritten { metadata_location, written: table.written }
    }
}
