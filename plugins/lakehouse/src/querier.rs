//! benchhost rig `querier`: seed 000's `querier_read/*` and `declared_ordering/*`. One iteration is one SQL
//! query through DataFusion's SessionContext and iceberg-datafusion's table provider: planned, executed,
//! collected.
//!
//! `cache = warm` keeps one provider, so the table's manifest cache (the only cache on this path: iceberg
//! 0.10.1 has no Parquet footer cache, and DataFusion's file-metadata cache does not apply to Iceberg scans)
//! is primed once in setup and hit by every query. `cache = cold` loads the table from the catalog and
//! registers a new provider inside the timed region, so metadata and every manifest are read again; the
//! storage's read counter proves each query missed (or, warm, that none did). Each statement is new text.
//! Before timing, the answer is checked exactly and the scan's mechanism is recorded (see `scan_facts`); the
//! last timed answer is checked again at teardown.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::RecordBatch;
use benchhost_plugin_api::{Descriptor, Invariant, Metric, Outcome, Param, Rig, RigError, SetupContext, Unit};
use datafusion::physical_plan::collect;
use datafusion::prelude::SessionContext;
use iceberg::table::Table;
use iceberg::{Catalog, TableIdent};
use iceberg_datafusion::IcebergStaticTableProvider;
use serde::Deserialize;
use tokio::runtime::Runtime;

use crate::corpus;
use crate::runtime;
use crate::scan_facts::ScanFacts;
use crate::shapes::{Answer, Corpus, Shape};
use crate::snapshot;
use crate::warehouse::{Layout, Storage, Warehouse};

/// Whether the engine's caches hold the table's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cache {
    Warm,
    Cold,
}

/// Parameters of `querier`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    shape: Shape,
    cache: Cache,
    storage: Storage,
    workers: i64,
}

/// Sums over the timed queries.
#[derive(Debug, Default)]
struct Totals {
    queries: u64,
    planning: Duration,
    bytes_scanned: u64,
    files_read: u64,
    manifest_reads: u64,
    /// Queries whose manifest reads contradict the arm: none when cold, some when warm.
    cache_violations: u64,
}

/// The rig.
pub struct Querier {
    shape: Shape,
    cache: Cache,
    runtime: Runtime,
    warehouse: Warehouse,
    ident: TableIdent,
    ctx: SessionContext,
    facts: ScanFacts,
    expected: Answer,
    totals: Totals,
    last: Vec<RecordBatch>,
}

impl Querier {
    /// Registers a provider over the table as the catalog has it now (with a new, empty manifest cache).
    async fn register(&self) -> Result<(), RigError> {
        let table = self.warehouse.catalog.load_table(&self.ident).await?;
        let provider = IcebergStaticTableProvider::try_new_from_table(table).await?;
        self.ctx.deregister_table(self.ident.name())?;
        self.ctx.register_table(self.ident.name(), Arc::new(provider))?;
        Ok(())
    }

    /// One query: (cold: a fresh provider), plan, execute, collect. Returns the batches and the planning time.
    async fn query(
        &self,
        tag: u64,
    ) -> Result<(Vec<RecordBatch>, Duration, Arc<dyn datafusion::physical_plan::ExecutionPlan>), RigError> {
        let start = Instant::now();
        if self.cache == Cache::Cold {
            self.register().await?;
        }
        let plan = self.ctx.sql(&self.shape.sql(tag)).await?.create_physical_plan().await?;
        let planning = start.elapsed();
        let batches = collect(plan.clone(), self.ctx.task_ctx()).await?;
        Ok((batches, planning, plan))
    }
}

/// The name of the table a corpus is seeded into.
fn table_name(corpus: Corpus) -> &'static str {
    match corpus {
        Corpus::Traces => "traces",
        Corpus::Spans => "spans",
    }
}

/// Seeds the table a shape reads: one append (one file, one snapshot) per corpus file.
async fn seed(warehouse: &Warehouse, corpus: Corpus) -> Result<Table, RigError> {
    let (layout, files) = match corpus {
        Corpus::Traces => (Layout::Daily, corpus::traces_files()),
        Corpus::Spans => (Layout::Unpartitioned, corpus::sequential_files()),
    };
    let mut table = warehouse.create(table_name(corpus), layout).await?;
    for file in &files {
        table = warehouse.append(&table, file).await?;
    }
    Ok(table)
}

/// Seeds a corpus's table in a memory warehouse of its own and keeps it in `dir` (see [`snapshot`]).
async fn keep_seeded(corpus: Corpus, dir: &Path) -> Result<(), RigError> {
    let warehouse = Warehouse::seeding(Storage::Memory, dir).await?;
    let table = seed(&warehouse, corpus).await?;
    snapshot::keep(&warehouse, &table, dir).await
}

/// The arm's own table: in memory, a copy of the seed kept for this library and run (built by the first
/// instance); on disk, seeded here (its files' absolute paths are this instance's).
fn table_of(
    warehouse: &Warehouse,
    storage: Storage,
    corpus: Corpus,
    ctx: &SetupContext,
    runtime: &Runtime,
) -> Result<TableIdent, RigError> {
    let name = table_name(corpus);
    if storage == Storage::Memory {
        let kept = ctx.seed(&format!("querier-{name}"), |dir| runtime.block_on(keep_seeded(corpus, dir)))?;
        runtime.block_on(snapshot::Kept::read(&kept)?.load(warehouse, name))
    } else {
        runtime.block_on(seed(warehouse, corpus))?;
        Ok(warehouse.ident(name))
    }
}

impl Rig for Querier {
    type Params = Params;

    fn describe() -> Descriptor {
        let shapes = [
            "lookup_by_id",
            "lookup_by_id_windowed",
            "recent_first_topk",
            "oldest_first_topk",
            "ordered_full_scan",
            "trace_search_groups",
        ];
        Descriptor::iterations("querier", "DataFusion SQL over an Iceberg table: lookups, top-k, ordered scans")
            .param(Param::choice("shape", "lookup_by_id", &shapes))
            .param(
                Param::choice("cache", "warm", &["warm", "cold"]).doc("cold: a new table and manifest cache per query"),
            )
            .param(Param::choice("storage", "memory", &["memory", "fs"]).doc("iceberg's memory storage or a local dir"))
            .param(runtime::param(2))
            .metric(Metric::iter_time("query_time"))
            .metric(Metric::counter("planning_time", Unit::Nanos, "planning_ns").doc("SQL to physical plan, per query"))
            .metric(Metric::rate("rows_per_s", Unit::RowsPerSec, "rows"))
            .metric(Metric::counter("files_total", Unit::Files, "files_total").doc("data files in the snapshot"))
            .metric(Metric::counter("files_pruned", Unit::Files, "files_pruned").doc("by partition and statistics"))
            .metric(Metric::counter("files_read", Unit::Files, "files_read").doc("files fetched from, per query"))
            .metric(Metric::counter("bytes_scanned", Unit::Bytes, "bytes_scanned").doc("Parquet bytes per query"))
            .metric(
                Metric::counter("manifest_reads", Unit::Files, "manifest_reads").doc("manifest cache misses per query"),
            )
            .metric(Metric::counter("sort_kept", Unit::Ratio, "sort_kept").doc("1 when a SortExec stays in the plan"))
            .metric(
                Metric::counter("trace_rows_missed", Unit::Rows, "trace_rows_missed")
                    .doc("target spans the shape's window leaves out (its known incompleteness)"),
            )
            .invariant(Invariant::equal("rows_out", "rows"))
            .invariant(Invariant::zero("cache_violations"))
    }

    fn setup(p: Params, ctx: &SetupContext) -> Result<Self, RigError> {
        let runtime = runtime::new(p.workers, ctx)?;
        let dir = ctx.scratch_dir.join("warehouse");
        std::fs::create_dir_all(&dir)?;
        let warehouse = runtime.block_on(Warehouse::new(p.storage, &dir))?;
        let ident = table_of(&warehouse, p.storage, p.shape.corpus(), ctx, &runtime)?;
        let mut rig = Querier {
            shape: p.shape,
            cache: p.cache,
            runtime,
            warehouse,
            ident,
            ctx: SessionContext::new(),
            facts: ScanFacts::default(),
            expected: Answer { rows: 0, trace_rows_missed: 0 },
            totals: Totals::default(),
            last: Vec::new(),
        };
        // The pre-check: one query through the arm's own path, its answer checked exactly, its scan described.
        let runtime = &rig.runtime;
        let (answer, facts) = runtime.block_on(async {
            rig.register().await?;
            rig.warehouse.io.take();
            let (batches, _, plan) = rig.query(0).await?;
            let answer =
                rig.shape.check(&batches).map_err(|e| RigError::verification(format!("before timing: {e}")))?;
            let fresh = rig.warehouse.catalog.load_table(&rig.ident).await?;
            Ok::<_, RigError>((answer, ScanFacts::of(&plan, &fresh).await?))
        })?;
        rig.warehouse.io.take();
        eprintln!("querier {:?}/{:?}: {} rows; {}", p.shape, p.cache, answer.rows, facts.line());
        rig.expected = answer;
        rig.facts = facts;
        Ok(rig)
    }

    fn iterate(&mut self) -> Result<(), RigError> {
        benchhost_plugin_api::slower::spin(crate::SLOWER);
        self.totals.queries += 1;
        let (batches, planning, _) = self.runtime.block_on(self.query(self.totals.queries))?;
        let io = self.warehouse.io.take();
        let t = &mut self.totals;
        t.planning += planning;
        t.bytes_scanned += io.data_bytes_read;
        t.files_read += io.data_files_read;
        t.manifest_reads += io.metadata_reads;
        let missed = io.metadata_reads > 0;
        t.cache_violations += u64::from(missed != (self.cache == Cache::Cold));
        self.last = batches;
        Ok(())
    }

    fn teardown(self) -> Result<Outcome, RigError> {
        let t = &self.totals;
        if t.queries == 0 {
            return Err(RigError::verification("no query ran"));
        }
        let answer =
            self.shape.check(&self.last).map_err(|e| RigError::verification(format!("last timed query: {e}")))?;
        let per = |total: u64| (total + t.queries / 2) / t.queries;
        let planning_ns = (t.planning.as_nanos() / u128::from(t.queries)) as u64;
        let f = &self.facts;
        let note = format!(
            "{}; {} rows{}",
            f.line(),
            answer.rows,
            if answer.trace_rows_missed > 0 {
                format!(
                    ", incomplete by design: {} of the trace's spans lie outside the window",
                    answer.trace_rows_missed
                )
            } else {
                String::new()
            }
        );
        Ok(Outcome::new()
            .counter("rows", self.expected.rows)
            .counter("rows_out", answer.rows)
            .counter("queries", t.queries)
            .counter("planning_ns", planning_ns)
            .counter("files_total", f.files_total)
            .counter("files_pruned", f.files_total - f.files_planned)
            .counter("files_read", per(t.files_read))
            .counter("bytes_scanned", per(t.bytes_scanned))
            .counter("manifest_reads", per(t.manifest_reads))
            .counter("cache_violations", t.cache_violations)
            .counter("sort_kept", u64::from(f.sort_kept))
            .counter("trace_rows_missed", answer.trace_rows_missed)
            .note(note))
    }
}

#[cfg(test)]
#[path = "querier_tests.rs"]
mod tests;
