//! benchhost rig `querier_service`: seed 000's `querier_service/*`. One iteration is one Flight `do_get` of the
//! arm's ticket to the querier service ([`crate::service::flight`]), called in process as `cache_tier` calls its
//! own, its stream consumed to the end: the ticket decoded and routed, the statement planned (the manifests
//! read again), executed and encoded as Flight data.
//!
//! What is built untimed: the three tables (seeded once per library and run), the session and the service, and
//! one `do_get` whose answer is checked exactly and whose scan is described. What is checked: the first and the
//! last timed answer, decoded, against the answer computed from the tables' generators
//! ([`crate::service::arms`]); a dropped row or a wrong average fails naming the ticket.

use std::time::Duration;

use arrow_flight::FlightData;
use arrow_flight::flight_service_server::FlightService;
use benchhost_plugin_api::{Descriptor, Invariant, Metric, Outcome, Param, Rig, RigError, SetupContext, Unit};
use futures::TryStreamExt;
use serde::Deserialize;
use tokio::runtime::Runtime;

use crate::runtime;
use crate::scan::facts::{Facts, Scans};
use crate::scan::session::Config;
use crate::service::arms::{ARMS, Answer, Arm};
use crate::service::flight::QuerierService;
use crate::service::tables;
use crate::table::warehouse::Warehouse;

/// Parameters of `querier_service`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    ticket: Arm,
    workers: i64,
}

/// What the timed requests did, summed from each one's own plan and the storage's counters.
#[derive(Debug, Default)]
struct Totals {
    requests: u64,
    planning: Duration,
    manifests_read: u64,
    bytes_fetched: u64,
    /// What each request's own plan scanned.
    scans: Scans,
    messages: u64,
}

/// The rig.
pub struct QuerierServiceRig {
    arm: Arm,
    runtime: Runtime,
    warehouse: Warehouse,
    service: QuerierService,
    ticket: arrow_flight::Ticket,
    config: Config,
    expected: Answer,
    facts: Facts,
    totals: Totals,
    last: Vec<FlightData>,
}

/// The scan's table beside the seed's numbers.
const MECHANISM: [&str; 6] =
    ["manifests_read", "files_reached", "files_pruned", "files_read", "bytes_fetched", "bytes_scanned"];

impl QuerierServiceRig {
    /// One `do_get`, its stream consumed; a Flight error names its status and the ticket.
    fn request(&self) -> Result<Vec<FlightData>, RigError> {
        let failed = |status: tonic::Status| {
            RigError::verification(format!(
                "do_get of ticket {:?} failed with status {:?}: {}",
                self.arm,
                status.code(),
                status.message()
            ))
        };
        self.runtime.block_on(async {
            let response = self.service.do_get(tonic::Request::new(self.ticket.clone())).await.map_err(failed)?;
            response.into_inner().try_collect().await.map_err(failed)
        })
    }

    /// The decoded answer, checked; a failure names the ticket.
    fn check(&self, messages: &[FlightData], when: &str) -> Result<Answer, RigError> {
        let ticket = String::from_utf8_lossy(&self.ticket.ticket).into_owned();
        let batches = arrow_flight::utils::flight_data_to_batches(messages).map_err(|e| {
            RigError::verification(format!("{when}: the answer to ticket {ticket} does not decode: {e}"))
        })?;
        self.arm.check(&batches).map_err(|e| RigError::verification(format!("{when}: ticket {ticket}: {e}")))
    }
}

impl Rig for QuerierServiceRig {
    type Params = Params;

    fn describe() -> Descriptor {
        Descriptor::iterations(
            "querier_service",
            "the querier's Flight service: do_get of a trace lookup, a search, a PromQL range or a LogQL filter",
        )
        .param(Param::choice("ticket", "find_trace", &ARMS).doc("the request the service answers (seed 000's five)"))
        .param(runtime::param(2))
        .metric(Metric::iter_time("query_time"))
        .metric(Metric::counter("planning_time", Unit::Nanos, "planning_ns").doc("statement to physical plan"))
        .metric(Metric::rate("rows_per_s", Unit::RowsPerSec, "rows"))
        .metric(
            Metric::counter("manifests_read", Unit::Manifests, "manifests_read")
                .doc("data manifests planning read per request (counted at the storage)"),
        )
        .metric(Metric::counter("files_reached", Unit::Files, "files_reached").doc("files the scans began to open"))
        .metric(
            Metric::counter("files_pruned", Unit::Files, "files_pruned")
                .doc("reached, then skipped whole on statistics or bloom filters"),
        )
        .metric(Metric::counter("files_read", Unit::Files, "files_read").doc("reached and not pruned"))
        .metric(
            Metric::counter("bytes_fetched", Unit::Bytes, "bytes_fetched")
                .doc("Parquet bytes the storage served per request, footers included"),
        )
        .metric(Metric::counter("bytes_scanned", Unit::Bytes, "bytes_scanned").doc("DataFusion's bytes_scanned"))
        .metric(
            Metric::counter("trace_rows_missed", Unit::Rows, "trace_rows_missed")
                .doc("spans of the trace the hint's window leaves out (its known incompleteness)"),
        )
        .table("mechanism", &MECHANISM)
        .invariant(Invariant::equal("rows_out", "rows"))
    }

    fn setup(p: Params, ctx: &SetupContext) -> Result<Self, RigError> {
        let runtime = runtime::new(p.workers, ctx)?;
        let config = Config::querier(usize::try_from(p.workers).unwrap_or(1));
        let opened = tables::open(&config, ctx, &runtime)?;
        let mut rig = QuerierServiceRig {
            arm: p.ticket,
            runtime,
            warehouse: opened.warehouse,
            service: QuerierService::new(opened.session),
            ticket: p.ticket.ticket().encode(),
            config,
            expected: Answer { rows: 0, trace_rows_missed: None },
            facts: Facts::default(),
            totals: Totals::default(),
            last: Vec::new(),
        };
        // The pre-check: one request through the service, its answer checked exactly, its scan described.
        let first = rig.request()?;
        rig.expected = rig.check(&first, "before timing")?;
        let served = rig.service.take_served().ok_or_else(|| RigError::new("the service served no plan"))?;
        rig.facts = Facts::of(&served.plan);
        rig.warehouse.io.take();
        eprintln!(
            "querier_service {:?}: {} rows in {} Flight messages; {}; {}",
            p.ticket,
            rig.expected.rows,
            first.len(),
            rig.facts.line(p.ticket.ordered()),
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
        self.totals.requests += 1;
        let messages = self.request()?;
        let io = self.warehouse.io.take();
        self.totals.bytes_fetched += io.data_bytes_read;
        self.totals.manifests_read += io.manifests_read;
        self.totals.messages += messages.len() as u64;
        if let Some(served) = self.service.take_served() {
            self.totals.planning += served.planning;
            self.totals.scans.push(served.plan);
        }
        self.last = messages;
        Ok(())
    }

    fn teardown(mut self) -> Result<Outcome, RigError> {
        self.totals.scans.fold();
        let t = &self.totals;
        if t.requests == 0 {
            return Err(RigError::verification("no request ran"));
        }
        let per = |total: u64| (total + t.requests / 2) / t.requests;
        let answer = self.check(&self.last, "last timed request")?;
        let (reached, pruned) = (per(t.scans.files_reached), per(t.scans.files_pruned));
        let mut note = format!(
            "the untimed first request: {}; per timed request: manifests read {}, files reached {reached}, pruned {pruned}, {} bytes fetched, \
             {} bytes scanned, {} Flight messages; {}; {} rows",
            self.facts.line(self.arm.ordered()),
            per(t.manifests_read),
            per(t.bytes_fetched),
            per(t.scans.bytes_scanned),
            per(t.messages),
            self.config.line(),
            answer.rows
        );
        if let Some(missed) = answer.trace_rows_missed.filter(|&m| m > 0) {
            note += &format!(", incomplete by design: {missed} of the trace's spans lie outside the hint");
        }
        let outcome = Outcome::new()
            .counter("rows", self.expected.rows)
            .counter("rows_out", answer.rows)
            .counter("requests", t.requests)
            .counter("planning_ns", (t.planning.as_nanos() / u128::from(t.requests)) as u64)
            .counter("manifests_read", per(t.manifests_read))
            .counter("files_reached", reached)
            .counter("files_pruned", pruned)
            .counter("files_read", reached.saturating_sub(pruned))
            .counter("bytes_fetched", per(t.bytes_fetched))
            .counter("bytes_scanned", per(t.scans.bytes_scanned))
            .note(note);
        // A ticket that looks up no trace misses none, and says nothing of it (absent, not 0).
        Ok(match answer.trace_rows_missed {
            Some(missed) => outcome.counter("trace_rows_missed", missed),
            None => outcome,
        })
    }
}

#[cfg(test)]
#[path = "querier_service_tests.rs"]
mod tests;
