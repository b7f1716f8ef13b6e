//! benchhost rig `querier`: seed 000's `querier_read/*` and `declared_ordering/*`. One iteration is one query
//! through the querier's own session ([`crate::scan::session`]): the files planned from the Iceberg snapshot's
//! manifests, scanned by DataFusion's Parquet source, collected.
//!
//! What is built untimed: the tables (seeded once per library and run in memory), the session, and one query
//! whose answer is checked exactly and whose scan is described (files reached, pruned, read, bytes, sort), the
//! facts the seed prints before timing. What one iteration times: planning (the manifests read again),
//! execution and collection; under `footer_cache = cold` the footer cache is cleared first, inside the timed
//! region. What is checked: the first and the last timed answer, row by row in order for ordered shapes; every
//! timed query's scan facts are summed from its own plan.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::RecordBatch;
use benchhost_plugin_api::{Descriptor, Invariant, Metric, Outcome, Param, Rig, RigError, SetupContext, Unit};
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::prelude::SessionContext;
use iceberg::Catalog;
use iceberg::table::Table;
use serde::Deserialize;
use tokio::runtime::Runtime;

use crate::runtime;
use crate::scan::facts::{Facts, Scans};
use crate::scan::files::{self, Census};
use crate::scan::index::{Footers, Index};
use crate::scan::provider::{IcebergParquetTable, Planned};
use crate::scan::session::Config;
use crate::scan::shapes::{Answer, Corpus, Shape};
use crate::scan::store::IcebergStore;
use crate::table::querier_tables::{self, Seeded};
use crate::table::warehouse::{Storage, Warehouse};

/// Parquet footers across queries: kept, cleared before each query, or never cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FooterCache {
    Warm,
    Cold,
    Off,
}

/// Whether the spans table's files attest its declared order, and how the scan groups them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    Unattested,
    Attested,
    AttestedSplitOff,
}

/// Parameters of `querier`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    shape: Shape,
    order: Order,
    footer_cache: FooterCache,
    pruning: bool,
    storage: Storage,
    workers: i64,
}

impl Order {
    fn name(self) -> &'static str {
        match self {
            Order::Unattested => "unattested",
            Order::Attested => "attested",
            Order::AttestedSplitOff => "attested_split_off",
        }
    }
}

impl Params {
    /// A parameter that means nothing to the shape is a mistake, named with the shape.
    fn check(&self) -> Result<(), RigError> {
        let refuse = |what: String| Err(RigError::invalid_params(format!("{what} (shape = {})", self.shape.name())));
        let ordered = self.shape.corpus() == Corpus::Spans;
        if self.order != Order::Unattested && !ordered {
            return refuse(format!("order = {} applies to the ordered shapes only", self.order.name()));
        }
        Ok(())
    }
}

/// What the timed queries read, summed from each one's own plan.
#[derive(Debug, Default)]
struct Totals {
    queries: u64,
    planning: Duration,
    /// What each query's own plan scanned.
    scans: Scans,
    /// Bytes the storage served (footers included), manifests read, and files planning gave the scan.
    bytes_fetched: u64,
    manifests_read: u64,
    files_planned: u64,
}

/// The rig.
pub struct Querier {
    shape: Shape,
    footer_cache: FooterCache,
    runtime: Runtime,
    warehouse: Warehouse,
    table: Table,
    index: Option<Index>,
    ctx: SessionContext,
    /// The table registered as scanned (for `lookup_via_index`, each query registers the files the index chose).
    scanned: Arc<IcebergParquetTable>,
    config: Config,
    expected: Answer,
    facts: Facts,
    census: Census,
    ordered: bool,
    totals: Totals,
    last: Vec<RecordBatch>,
}

/// The shapes of the declared-ordering group, on the `spans` tables: the only ones an `order` applies to.
const ORDERED: [&str; 3] = ["recent_first_topk", "oldest_first_topk", "ordered_full_scan"];

/// The seed's table of what the scan did, as the report draws it: files reached, pruned and read, bytes
/// fetched and scanned, whether a sort was kept.
const MECHANISM: [&str; 10] = [
    "manifests_read",
    "manifests_pruned",
    "files_total",
    "files_planned",
    "files_reached",
    "files_pruned",
    "files_read",
    "bytes_fetched",
    "bytes_scanned",
    "sort_kept",
];

/// The table name the shape's SQL reads.
const SCANNED: &str = "scanned";

/// What one query gave: its batches, its planning time, the plan that ran and what its scan planned.
struct Queried {
    batches: Vec<RecordBatch>,
    planning: Duration,
    plan: Arc<dyn ExecutionPlan>,
    planned: Planned,
}

impl Querier {
    /// One query: (cold: the footer cache cleared), plan, execute, collect.
    async fn query(&self, tag: u64) -> Result<Queried, RigError> {
        let start = Instant::now();
        if self.footer_cache == FooterCache::Cold {
            self.ctx.runtime_env().cache_manager.get_file_metadata_cache().clear();
        }
        let scanned = match self.shape {
            Shape::LookupViaIndex => self.register_indexed().await?,
            _ => self.scanned.clone(),
        };
        let plan = self.ctx.sql(&self.shape.sql(SCANNED, tag)).await?.create_physical_plan().await?;
        let planning = start.elapsed();
        let batches = collect(plan.clone(), self.ctx.task_ctx()).await?;
        Ok(Queried { batches, planning, plan, planned: scanned.planned() })
    }

    /// Registers the table as scanned with only the files the point index names for the target; returns it.
    async fn register_indexed(&self) -> Result<Arc<IcebergParquetTable>, RigError> {
        let mut provider = IcebergParquetTable::new(self.table.clone())?;
        if let Some(index) = &self.index {
            let (files, _) = index.lookup(crate::table::corpus::TARGET).await?;
            provider = provider.only(files.into_iter().collect::<HashSet<_>>());
        }
        let provider = Arc::new(provider);
        self.ctx.deregister_table(SCANNED)?;
        self.ctx.register_table(SCANNED, provider.clone())?;
        Ok(provider)
    }
}

impl Rig for Querier {
    type Params = Params;

    fn describe() -> Descriptor {
        let shapes = [
            "lookup_by_id",
            "lookup_by_id_windowed",
            "lookup_via_index",
            "recent_first_topk",
            "oldest_first_topk",
            "ordered_full_scan",
            "trace_search_groups",
        ];
        Descriptor::iterations(
            "querier",
            "DataFusion's Parquet scan over an Iceberg snapshot's files: lookups (one via a point index), top-k, ordered scans",
        )
        .param(Param::choice("shape", "lookup_by_id", &shapes))
        .param(
            Param::choice("order", "unattested", &["unattested", "attested", "attested_split_off"])
                .doc("the spans files attest the table's (timestamp, trace_id) order; split off: not grouped by statistics")
                .only_where("shape", ORDERED),
        )
        .param(
            Param::choice("footer_cache", "warm", &["warm", "cold", "off"])
                .doc("Parquet footers kept across queries, cleared inside each timed query, or never cached"),
        )
        .param(Param::bool("pruning", true).doc("files and row groups pruned on statistics and bloom filters"))
        .param(Param::choice("storage", "memory", &["memory", "fs"]).doc("iceberg's memory storage or a local dir"))
        .param(runtime::param(2))
        .metric(Metric::iter_time("query_time"))
        .metric(Metric::counter("planning_time", Unit::Nanos, "planning_ns").doc("SQL to physical plan, manifests read"))
        .metric(Metric::rate("rows_per_s", Unit::RowsPerSec, "rows"))
        .metric(
            Metric::counter("manifests_read", Unit::Manifests, "manifests_read")
                .doc("data manifests planning read per query (counted at the storage)"),
        )
        .metric(
            Metric::counter("manifests_pruned", Unit::Manifests, "manifests_pruned")
                .doc("data manifests planning skipped on their partition summaries, per query"),
        )
        .metric(Metric::counter("files_total", Unit::Files, "files_total").doc("data files in the snapshot"))
        .metric(
            Metric::counter("files_planned", Unit::Files, "files_planned")
                .doc("data files planning gave the scan (a point index's choice included)"),
        )
        .metric(Metric::counter("files_reached", Unit::Files, "files_reached").doc("files the scan began to open"))
        .metric(
            Metric::counter("files_pruned", Unit::Files, "files_pruned")
                .doc("reached, then skipped whole on statistics (a TopK's dynamic filter included)"),
        )
        .metric(Metric::counter("files_read", Unit::Files, "files_read").doc("reached and not pruned"))
        .metric(Metric::counter("bytes_scanned", Unit::Bytes, "bytes_scanned").doc("DataFusion's bytes_scanned"))
        .metric(
            Metric::counter("bytes_fetched", Unit::Bytes, "bytes_fetched")
                .doc("Parquet bytes the storage served per query, footers included"),
        )
        .metric(Metric::share("sort_kept", "sorts_kept", "queries").doc("share of timed queries whose plan kept a sort"))
        .metric(
            Metric::counter("trace_rows_missed", Unit::Rows, "trace_rows_missed")
                .doc("target spans the shape's window leaves out (its known incompleteness)"),
        )
        .table("mechanism", &MECHANISM)
        .invariant(Invariant::equal("rows_out", "rows"))
    }

    fn setup(p: Params, ctx: &SetupContext) -> Result<Self, RigError> {
        p.check()?;
        let runtime = runtime::new(p.workers, ctx)?;
        let seeded = match (p.shape.corpus(), p.order) {
            (Corpus::Traces, _) => Seeded::Traces,
            (Corpus::Spans, Order::Unattested) => Seeded::Spans,
            (Corpus::Spans, _) => Seeded::SpansSorted,
        };
        let (warehouse, ident) = seeded.open(p.storage, ctx, &runtime)?;
        let mut config = Config::querier(usize::try_from(p.workers).unwrap_or(1));
        config.pruning = p.pruning;
        config.footer_cache = p.footer_cache != FooterCache::Off;
        config.split_by_statistics = p.order != Order::AttestedSplitOff;
        let store = IcebergStore::new(warehouse.file_io(), IcebergStore::prefix_of(&warehouse.location));
        let ctx_df = config.session(store)?;
        let table = runtime.block_on(warehouse.catalog.load_table(&ident))?;
        let index = match p.shape {
            Shape::LookupViaIndex => {
                let location = querier_tables::index_location(&table);
                Some(runtime.block_on(Index::open(&warehouse.file_io(), &location, Footers::Kept))?)
            }
            _ => None,
        };
        // What planning skips is counted against the snapshot, counted once, untimed.
        let census = runtime.block_on(files::census(&table, &crate::table::warehouse::arrow_schema(&table)?))?;
        let scanned = Arc::new(IcebergParquetTable::new(table.clone())?);
        ctx_df.register_table(SCANNED, scanned.clone())?;
        let mut rig = Querier {
            shape: p.shape,
            footer_cache: p.footer_cache,
            runtime,
            warehouse,
            table,
            index,
            ctx: ctx_df,
            scanned,
            config,
            expected: Answer { rows: 0, trace_rows_missed: None },
            facts: Facts::default(),
            census,
            ordered: false,
            totals: Totals::default(),
            last: Vec::new(),
        };
        // The pre-check: one query through the arm's own path, its answer checked exactly, its scan described
        // from its own plan (and, warm, the footers cached).
        let first = rig.runtime.block_on(rig.query(0))?;
        rig.expected =
            rig.shape.check(&first.batches).map_err(|e| RigError::verification(format!("before timing: {e}")))?;
        rig.facts = Facts::of(&first.plan);
        rig.ordered = first.planned.ordered;
        rig.warehouse.io.take();
        eprintln!(
            "querier {}/{:?}/{:?}: {} rows; {} files in {} manifests, {} files planned; {}; order declared: {}; {}",
            p.shape.name(),
            p.order,
            p.footer_cache,
            rig.expected.rows,
            rig.census.files,
            rig.census.manifests,
            first.planned.files_planned,
            rig.facts.line(p.shape.ordered()),
            rig.ordered,
            rig.config.line()
        );
        Ok(rig)
    }

    fn prepare(&mut self, _batch: u64) -> Result<(), RigError> {
        self.totals.scans.fold();
        Ok(())
    }

    fn iterate(&mut self) -> Result<(), RigError> {
        benchhost_plugin_api::slower::spin(crate::SLOWER);
        self.totals.queries += 1;
        let queried = self.runtime.block_on(self.query(self.totals.queries))?;
        let io = self.warehouse.io.take();
        self.totals.bytes_fetched += io.data_bytes_read;
        self.totals.manifests_read += io.manifests_read;
        self.totals.files_planned += queried.planned.files_planned;
        self.totals.planning += queried.planning;
        self.totals.scans.push(queried.plan);
        self.last = queried.batches;
        Ok(())
    }

    fn teardown(mut self) -> Result<Outcome, RigError> {
        self.totals.scans.fold();
        let t = &self.totals;
        if t.queries == 0 {
            return Err(RigError::verification("no query ran"));
        }
        let per = |total: u64| (total + t.queries / 2) / t.queries;
        let answer =
            self.shape.check(&self.last).map_err(|e| RigError::verification(format!("last timed query: {e}")))?;
        let planning_ns = (t.planning.as_nanos() / u128::from(t.queries)) as u64;
        let (reached, pruned) = (per(t.scans.files_reached), per(t.scans.files_pruned));
        let manifests_read = per(t.manifests_read);
        let sorts = match self.shape.ordered() {
            true => format!(", sort kept in {} of {}", t.scans.sorts_kept, t.queries),
            false => String::new(),
        };
        let mut note = format!(
            "the untimed first query: {}; per timed query: manifests read {manifests_read} of {}, files planned {} of {}, reached {reached}, pruned {pruned}, read {}, {} bytes scanned{sorts}; order declared: {}; {}; {} rows",
            self.facts.line(self.shape.ordered()),
            self.census.manifests,
            per(t.files_planned),
            self.census.files,
            reached.saturating_sub(pruned),
            per(t.scans.bytes_scanned),
            self.ordered,
            self.config.line(),
            answer.rows
        );
        if let Some(missed) = answer.trace_rows_missed.filter(|&m| m > 0) {
            note += &format!(", incomplete by design: {missed} of the trace's spans lie outside the window");
        }
        let outcome = Outcome::new()
            .counter("rows", self.expected.rows)
            .counter("rows_out", answer.rows)
            .counter("queries", t.queries)
            .counter("planning_ns", planning_ns)
            .counter("manifests_read", manifests_read)
            .counter("manifests_pruned", self.census.manifests.saturating_sub(manifests_read))
            .counter("files_total", self.census.files)
            .counter("files_planned", per(t.files_planned))
            .counter("files_reached", reached)
            .counter("files_pruned", pruned)
            .counter("files_read", reached.saturating_sub(pruned))
            .counter("bytes_scanned", per(t.scans.bytes_scanned))
            .counter("bytes_fetched", per(t.bytes_fetched))
            .note(note);
        // A statement that asks for no order has no sort to keep or elide: its share is absent, not 0.
        let outcome = match self.shape.ordered() {
            true => outcome.counter("sorts_kept", t.scans.sorts_kept),
            false => outcome,
        };
        // A shape that looks up no trace misses none, and says nothing of it (absent, not 0).
        Ok(match answer.trace_rows_missed {
            Some(missed) => outcome.counter("trace_rows_missed", missed),
            None => outcome,
        })
    }
}

#[cfg(test)]
#[path = "querier_tests.rs"]
mod tests;
