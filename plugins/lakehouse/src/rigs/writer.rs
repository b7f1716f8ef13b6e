//! benchhost rig `writer`: seed 000's write path (`iceberg_benchmarks` and the ingest sort), on the seed's
//! `metrics_gauge` table ([`crate::table::gauge`]).
//!
//! - `op = append`: one iteration is one append with its commit, per tenant: the batches turned into the table's
//!   form (JSON attributes parsed into maps, times cast), sorted by the declared key, written as Parquet (ZSTD
//!   level 1, one file per hour partition, each attesting the order), committed with `fast_append`, and the
//!   table loaded again to confirm the snapshot landed, as the seed's writer does. `writers` tenants, each with a
//!   catalog and table of its own, append at once (a task each); the iteration ends when the last commit lands.
//!   Every tenant's catalog and empty table are built untimed, fresh for every iteration, as the seed's
//!   `iter_custom` builds them.
//! - `op = create`: one iteration creates a catalog with its namespace and the empty table: the seed's
//!   `writer/creation`. Each table is loaded back untimed and checked: its schema, partition spec, sort order
//!   and properties as created.
//! - `op = sort`: one iteration sorts one commit group (`rows` x `batches`, as the append is given it) by the
//!   declared key, in order or shuffled: the seed's ingest sort, alone.
//!
//! Checked untimed, after each batch of iterations: every tenant's snapshot holds exactly the rows appended to it
//! (count and a checksum over `value`, read back through a scan), one snapshot per commit, each batch read back
//! in key order; every created table as it was created; the newest sorted group of each batch (every iteration
//! sorts the same group) in key order with the rows it had before the sort. Each op declares the invariants of its own work only: a law over work a cell never does
//! would compare 0 with 0.

use std::collections::VecDeque;
use std::path::PathBuf;

use arrow::array::RecordBatch;
use benchhost_plugin_api::{Descriptor, Invariant, Metric, Outcome, Param, Rig, RigError, SetupContext, Unit};
use serde::Deserialize;
use tokio::runtime::Runtime;

use crate::runtime;
use crate::table::gauge::{self, Tally};
use crate::table::tenant::Tenant;
use crate::table::warehouse::Storage;

/// The most rows one iteration may hold, over all its batches and tenants (~370 bytes a row as input).
const MAX_ROWS_PER_ITERATION: i64 = 4_000_000;

/// What one iteration times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Append,
    Create,
    Sort,
}

/// The sort's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    InOrder,
    Shuffled,
}

/// Parameters of `writer`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    op: Op,
    rows: i64,
    batches: i64,
    writers: i64,
    order: Order,
    storage: Storage,
    workers: i64,
}

/// What the iterations did, summed.
#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    iterations: u64,
    data_files: u64,
    commits: u64,
    bytes_written: u64,
    rows_appended: Tally,
    rows_read_back: Tally,
    snapshots: u64,
    batches_read_back: u64,
    batches_in_key_order: u64,
    tables_loaded_back: u64,
    groups_checked: u64,
    groups_in_key_order: u64,
    rows_to_sort: u64,
    rows_sorted: u64,
}

/// The rig.
pub struct Writer {
    p: Params,
    runtime: Runtime,
    scratch: PathBuf,
    made: u64,
    /// The input batches of one commit (`batches` of `rows`), in the benchmark's form.
    input: Vec<RecordBatch>,
    /// The tally of one commit's rows.
    per_commit: Tally,
    /// `op = sort`: the group to sort (in the table's form, in order or shuffled), and the last sorted one.
    group: Option<RecordBatch>,
    last_sorted: Option<RecordBatch>,
    ready: VecDeque<Vec<Tenant>>,
    done: Vec<Tenant>,
    /// `op = create`: the tables created since the last check.
    created: Vec<Tenant>,
    totals: Totals,
}

impl Writer {
    /// A directory of its own for the next tenant on disk.
    fn next_dir(&mut self) -> Result<Option<PathBuf>, RigError> {
        self.made += 1;
        if self.p.storage == Storage::Memory {
            return Ok(None);
        }
        let dir = self.scratch.join(format!("tenant-{}", self.made));
        std::fs::create_dir_all(&dir)?;
        Ok(Some(dir))
    }

    /// Checks every tenant appended to, then frees it.
    fn check_done(&mut self) -> Result<(), RigError> {
        for tenant in std::mem::take(&mut self.done) {
            let read = self.runtime.block_on(tenant.read_back())?;
            let tally = read.tally;
            if tally != self.per_commit {
                return Err(RigError::verification(format!(
                    "tenant {}: {} rows with checksum {:016x} appended, {} rows with {:016x} read back",
                    tenant.table.identifier(),
                    self.per_commit.rows,
                    self.per_commit.checksum,
                    tally.rows,
                    tally.checksum
                )));
            }
            let t = &mut self.totals;
            t.rows_read_back.rows += tally.rows;
            t.rows_read_back.checksum = t.rows_read_back.checksum.wrapping_add(tally.checksum);
            t.snapshots += read.snapshots;
            t.batches_read_back += read.batches;
            t.batches_in_key_order += read.in_key_order;
            if let Some(dir) = &tenant.dir {
                std::fs::remove_dir_all(dir)?;
            }
        }
        Ok(())
    }

    /// Checks every table created since the last check loads back as it was created, then frees it.
    fn check_created(&mut self) -> Result<(), RigError> {
        for tenant in std::mem::take(&mut self.created) {
            self.totals.tables_loaded_back += u64::from(self.runtime.block_on(tenant.loads_back())?);
            if let Some(dir) = &tenant.dir {
                std::fs::remove_dir_all(dir)?;
            }
        }
        Ok(())
    }
}

impl Rig for Writer {
    type Params = Params;

    fn describe() -> Descriptor {
        Descriptor::iterations("writer", "Iceberg appends with their commits, writer creation, the ingest sort")
            .param(Param::choice("op", "append", &["append", "create", "sort"]).doc("what one iteration times"))
            .param(Param::int("rows", 1_000).range(1, 1_000_000).doc("rows per batch (at most 4,000,000 an iteration)"))
            .param(
                Param::int("batches", 1).range(1, 100).doc("batches per commit").only_where("op", ["append", "sort"]),
            )
            .param(Param::int("writers", 1).range(1, 64).doc("tenants appending at once").only_where("op", ["append"]))
            .param(
                Param::choice("order", "in_order", &["in_order", "shuffled"])
                    .doc("the sort's input")
                    .only_where("op", ["sort"]),
            )
            .param(Param::choice("storage", "memory", &["memory", "fs"]).doc("iceberg's memory storage or a local dir"))
            .param(runtime::param(2))
            .metric(Metric::iter_time("append_time").only_where("op", ["append"]))
            .metric(Metric::iter_time("create_time").only_where("op", ["create"]))
            .metric(Metric::iter_time("sort_time").only_where("op", ["sort"]))
            .metric(Metric::rate("rows_per_s", Unit::RowsPerSec, "rows").only_where("op", ["append", "sort"]))
            .metric(
                Metric::counter("bytes_written", Unit::Bytes, "bytes_written")
                    .doc("per iteration")
                    .only_where("op", ["append"]),
            )
            .metric(
                Metric::counter("data_files", Unit::Files, "data_files")
                    .doc("per iteration")
                    .only_where("op", ["append"]),
            )
            .metric(
                Metric::counter("commits", Unit::Commits, "commits").doc("per iteration").only_where("op", ["append"]),
            )
            .invariant(Invariant::equal("rows_read_back", "rows_appended").only_where("op", ["append"]))
            .invariant(Invariant::equal("checksum_read_back", "checksum_appended").only_where("op", ["append"]))
            .invariant(Invariant::equal("snapshots", "commits_made").only_where("op", ["append"]))
            .invariant(Invariant::equal("batches_in_key_order", "batches_read_back").only_where("op", ["append"]))
            .invariant(Invariant::equal("tables_loaded_back", "tables_created").only_where("op", ["create"]))
            .invariant(Invariant::equal("groups_in_key_order", "groups_checked").only_where("op", ["sort"]))
            .invariant(Invariant::equal("rows_sorted", "rows_to_sort").only_where("op", ["sort"]))
    }

    fn setup(p: Params, ctx: &SetupContext) -> Result<Self, RigError> {
        let runtime = runtime::new(p.workers, ctx)?;
        let rows = usize::try_from(p.rows).map_err(|_| RigError::invalid_params("rows must be positive"))?;
        let per_iteration = p.rows * p.batches * if p.op == Op::Append { p.writers } else { 1 };
        if per_iteration > MAX_ROWS_PER_ITERATION {
            return Err(RigError::invalid_params(format!(
                "rows x batches x writers = {per_iteration} rows an iteration: more than {MAX_ROWS_PER_ITERATION} \
                 (about 1.5 GB of input, held three times over while it is converted and sorted) does not fit"
            )));
        }
        let input = (0..p.batches).map(|_| gauge::rows(rows)).collect::<Result<Vec<_>, _>>()?;
        let per_commit = gauge::tally(&input);
        let mut rig = Writer {
            runtime,
            scratch: ctx.scratch_dir.clone(),
            made: 0,
            input,
            per_commit,
            group: None,
            last_sorted: None,
            ready: VecDeque::new(),
            done: Vec::new(),
            created: Vec::new(),
            totals: Totals::default(),
            p,
        };
        if rig.p.op == Op::Sort {
            // The group as the append is given it: seed 000 sorts "the same metrics batches
            // single_batch_writes appends" (inside the append the sort meets the table's form, maps and all).
            let group = arrow::compute::concat_batches(&gauge::input_schema(), &rig.input)?;
            rig.group = Some(match rig.p.order {
                Order::InOrder => group,
                Order::Shuffled => gauge::shuffled(&group)?,
            });
        }
        Ok(rig)
    }

    fn prepare(&mut self, batch: u64) -> Result<(), RigError> {
        self.check_done()?;
        self.check_created()?;
        self.check_sorted()?;
        if self.p.op != Op::Append {
            return Ok(());
        }
        while (self.ready.len() as u64) < batch {
            let mut tenants = Vec::new();
            for _ in 0..self.p.writers {
                let dir = self.next_dir()?;
                let made = self.made;
                let tenant = self.runtime.block_on(Tenant::create(self.p.storage, dir));
                tenants.push(tenant.map_err(|e| RigError { message: format!("tenant {made}: {}", e.message), ..e })?);
            }
            self.ready.push_back(tenants);
        }
        Ok(())
    }

    fn iterate(&mut self) -> Result<(), RigError> {
        benchhost_plugin_api::slower::spin(crate::SLOWER);
        self.totals.iterations += 1;
        match self.p.op {
            Op::Append => {
                let tenants = self
                    .ready
                    .pop_front()
                    .ok_or_else(|| RigError::new("no table is ready: `prepare` was not called for this batch"))?;
                let prefix = format!("i{}", self.totals.iterations);
                let written = self.runtime.block_on(async {
                    // All started together, a task each (on the runtime's workers, as the seed's `tokio::spawn`);
                    // the iteration ends when the last commit lands.
                    let tasks: Vec<_> = tenants
                        .into_iter()
                        .enumerate()
                        .map(|(t, tenant)| {
                            let (input, prefix) = (self.input.clone(), format!("{prefix}-t{t}"));
                            tokio::spawn(async move {
                                let written = tenant.append(&input, prefix).await;
                                (tenant, written)
                            })
                        })
                        .collect();
                    futures::future::try_join_all(tasks).await
                })?;
                for (tenant, outcome) in written {
                    let (files, bytes) = outcome?;
                    let t = &mut self.totals;
                    t.data_files += files;
                    t.bytes_written += bytes;
                    t.commits += 1;
                    t.rows_appended.rows += self.per_commit.rows;
                    t.rows_appended.checksum = t.rows_appended.checksum.wrapping_add(self.per_commit.checksum);
                    self.done.push(tenant);
                }
            }
            Op::Create => {
                let dir = self.next_dir()?;
                let tenant = self.runtime.block_on(Tenant::create(self.p.storage, dir))?;
                self.created.push(tenant);
            }
            Op::Sort => {
                let group = self.group.as_ref().ok_or_else(|| RigError::new("no group to sort"))?;
                self.last_sorted = Some(gauge::sorted(group)?);
            }
        }
        Ok(())
    }

    fn teardown(mut self) -> Result<Outcome, RigError> {
        self.check_done()?;
        self.check_created()?;
        self.check_sorted()?;
        let t = self.totals;
        if t.iterations == 0 {
            return Err(RigError::verification("no iteration ran"));
        }
        let per = |total: u64| (total + t.iterations / 2) / t.iterations;
        let rows = match self.p.op {
            Op::Append => self.per_commit.rows * self.p.writers as u64,
            Op::Sort => self.per_commit.rows,
            Op::Create => 0,
        };
        let note = match self.p.op {
            Op::Append => format!(
                "{} tenants x {} batches of {} rows per iteration; {} data files and {} bytes per iteration; every \
                 tenant's rows read back and checked",
                self.p.writers,
                self.p.batches,
                self.p.rows,
                per(t.data_files),
                per(t.bytes_written)
            ),
            Op::Sort => format!(
                "{} groups sorted; the newest of each batch, {} in all, checked in key order with its rows",
                t.iterations, t.groups_checked
            ),
            Op::Create => format!(
                "{} catalogs and tables created, {} loaded back as created (schema, partition spec, sort order, \
                 properties)",
                t.iterations, t.tables_loaded_back
            ),
        };
        Ok(Outcome::new()
            .counter("rows", rows)
            .counter("data_files", per(t.data_files))
            .counter("bytes_written", per(t.bytes_written))
            .counter("commits", per(t.commits))
            .counter("commits_made", t.commits)
            .counter("snapshots", t.snapshots)
            .counter("rows_appended", t.rows_appended.rows)
            .counter("rows_read_back", t.rows_read_back.rows)
            .counter("checksum_appended", t.rows_appended.checksum)
            .counter("checksum_read_back", t.rows_read_back.checksum)
            .counter("batches_read_back", t.batches_read_back)
            .counter("batches_in_key_order", t.batches_in_key_order)
            .counter("tables_created", if self.p.op == Op::Create { t.iterations } else { 0 })
            .counter("tables_loaded_back", t.tables_loaded_back)
            .counter("groups_checked", t.groups_checked)
            .counter("groups_in_key_order", t.groups_in_key_order)
            .counter("rows_to_sort", t.rows_to_sort)
            .counter("rows_sorted", t.rows_sorted)
            .note(note))
    }
}

impl Writer {
    /// Checks the newest sorted group: in key order, with the rows it had before the sort.
    fn check_sorted(&mut self) -> Result<(), RigError> {
        let Some(sorted) = self.last_sorted.take() else { return Ok(()) };
        if let Some(row) = gauge::out_of_order(&sorted) {
            return Err(RigError::verification(format!("the sorted group is out of key order at row {row}")));
        }
        let (before, after) = (gauge::tally(self.group.iter()), gauge::tally([&sorted]));
        if before != after {
            return Err(RigError::verification(format!(
                "the sort changed the rows: {} before, {} after",
                before.rows, after.rows
            )));
        }
        let t = &mut self.totals;
        t.groups_checked += 1;
        t.groups_in_key_order += 1;
        (t.rows_to_sort, t.rows_sorted) = (t.rows_to_sort + before.rows, t.rows_sorted + after.rows);
        Ok(())
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
