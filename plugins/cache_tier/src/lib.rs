//! benchhost rig `cache_tier`: seed 001's Flight SQL statement cache tiers. One iteration is one `DoGet` of a
//! statement ticket, called on the cache's `FlightSqlService` in this process (no socket: the seed's benchmark
//! calls `DoGetStatement` in process too, and a loopback gRPC hop would add its own cost to every tier), its
//! stream of Flight data consumed to the end. The ticket carries the statement text and the cache routes it by
//! its own rules (`routing`): the arm's statement is the seed's for its tier, and a statement served by
//! another tier than the arm names is a failure. `delta_hit` crops the delta tier's time-series dataset to the
//! window and rebuilds batches, `object_hit` streams the object tier's stored Flight data, `passthrough`
//! fetches the upstream's batches (DataFusion planning and executing the statement, or its answer canned) and
//! encodes them. With `cache = cold` the tiers are purged inside the timed region, so every request misses,
//! fetches from the upstream and fills its tier; the `x-cache-result` header of each response proves it.
//!
//! Allocations are counted by this plugin's own global allocator over a few extra requests after the timed
//! region, so counting costs the timed requests nothing.

pub mod alloc;
pub mod data;
pub mod dataset;
pub mod routing;
pub mod service;
pub mod tiers;
pub mod upstream;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_flight::flight_service_server::FlightService;
use arrow_flight::{FlightData, Ticket};
use benchhost_plugin_api::{Descriptor, Invariant, Metric, Outcome, Param, Rig, RigError, SetupContext, Unit};
use futures::TryStreamExt;
use serde::Deserialize;
use tokio::runtime::Runtime;

use data::{Row, Window};
use service::CacheService;
use upstream::{Engine, Upstream};

/// The slowdown compiled in with the `slower` feature, spun once per request (proofs only: a second build of
/// the same tree, slower by a known amount; see `benchhost_plugin_api::slower`).
pub(crate) const SLOWER: u64 = if cfg!(feature = "slower") {
    benchhost_plugin_api::slower::rounds(option_env!("BENCHHOST_SLOWER_SPIN"))
} else {
    0
};

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

/// Requests served with allocation counting on, after the timed region.
const COUNTED_REQUESTS: u64 = 8;

/// The arm: which tier its statement is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// The seed's `date_bin` statement over a window inside the delta tier's extent.
    DeltaHit,
    /// The seed's `SELECT * FROM cpu`, answered from the object tier's stored Flight data.
    ObjectHit,
    /// The seed's `SELECT now(), * FROM cpu`: nondeterministic, fetched on every request.
    Passthrough,
}

impl Tier {
    /// The tier the cache's `x-cache-result` header names for this arm's statement.
    fn served_by(self) -> &'static str {
        match self {
            Tier::DeltaHit => "delta",
            Tier::ObjectHit => "object",
            Tier::Passthrough => "passthrough",
        }
    }
}

/// Whether the tier keeps what it holds between requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cache {
    /// Primed in setup.
    Warm,
    /// Cleared at the start of every request.
    Cold,
}

/// What answers the tiers' misses and the passthrough arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpstreamKind {
    /// DataFusion plans and executes every statement.
    Datafusion,
    /// DataFusion's answers, recorded in setup and replayed as bytes (the seed's fake upstream).
    Canned,
}

/// Parameters of `cache_tier`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    tier: Tier,
    rows: i64,
    cache: Cache,
    upstream: UpstreamKind,
}

/// The rig.
pub struct CacheTier {
    tier: Tier,
    cold: bool,
    runtime: Runtime,
    service: Arc<CacheService>,
    statement: String,
    ticket: Ticket,
    rows: usize,
    /// The upstream's answer to the statement: what every response must hold.
    expected: Vec<Row>,
    requests: u64,
    hits: u64,
    misses: u64,
    /// Requests answered with the status the arm expects ([`CacheTier::expected_status`]).
    as_expected: u64,
    last: Vec<FlightData>,
}

impl CacheTier {
    /// Sends one `DoGet` of the arm's ticket and consumes its stream; an error names the Flight status and the
    /// statement, or the tier that served where the arm names another.
    fn request(&mut self) -> Result<Vec<FlightData>, RigError> {
        self.requests += 1;
        if self.cold {
            self.service.purge();
        }
        let statement = &self.statement;
        let expected = self.expected_status();
        let failed = |status: tonic::Status| {
            RigError::verification(format!(
                "DoGet failed with status {:?}: {} (ticket statement `{statement}`)",
                status.code(),
                status.message()
            ))
        };
        let (messages, by_the_arms_tier, hit, miss, as_expected) = self.runtime.block_on(async {
            let response = self.service.do_get(tonic::Request::new(self.ticket.clone())).await.map_err(failed)?;
            let (tier, status) = service::result_of(&response).unwrap_or(("none", "none"));
            let by_the_arms_tier = tier == self.tier.served_by();
            let (hit, miss, as_expected) = (status == "hit", status == "miss", status == expected);
            let messages: Vec<FlightData> = response.into_inner().try_collect().await.map_err(failed)?;
            Ok::<_, RigError>((messages, by_the_arms_tier, hit, miss, as_expected))
        })?;
        if !by_the_arms_tier {
            return Err(RigError::verification(format!(
                "the cache did not serve `{statement}` from the {} tier that arm {:?} names",
                self.tier.served_by(),
                self.tier
            )));
        }
        self.hits += u64::from(hit);
        self.misses += u64::from(miss);
        self.as_expected += u64::from(as_expected);
        Ok(messages)
    }

    /// The status every response of the arm must carry: a fetch through (passthrough), a miss (cold: the tiers
    /// purged before every request) or a hit (warm).
    fn expected_status(&self) -> &'static str {
        match (self.tier, self.cold) {
            (Tier::Passthrough, _) => "fetched",
            (_, true) => "miss",
            (_, false) => "hit",
        }
    }

    /// Checks a response against the upstream's answer, row by row.
    fn check(&self, response: &[FlightData]) -> Result<usize, RigError> {
        let batches = arrow_flight::utils::flight_data_to_batches(response)
            .map_err(|e| RigError::verification(format!("the response does not decode: {e}")))?;
        let rows = data::rows(&batches).map_err(RigError::verification)?;
        if let Some(i) = (0..rows.len().max(self.expected.len())).find(|&i| rows.get(i) != self.expected.get(i)) {
            return Err(RigError::verification(format!(
                "{:?} response row {i} is {:?}, the upstream answered {:?} ({} rows against {})",
                self.tier,
                rows.get(i),
                self.expected.get(i),
                rows.len(),
                self.expected.len()
            )));
        }
        Ok(rows.len())
    }

    /// The same arm asking `statement` instead of its own (tests: a statement the cache routes elsewhere).
    #[cfg(test)]
    fn asking(mut self, statement: &str) -> Self {
        self.statement = statement.to_string();
        self.ticket = service::ticket(statement);
        self
    }
}

impl Rig for CacheTier {
    type Params = Params;

    fn describe() -> Descriptor {
        Descriptor::iterations(
            "cache_tier",
            "Flight SQL statement cache tiers through DoGet: delta rebuild, object bytes, passthrough",
        )
        .param(Param::choice("tier", "delta_hit", &["delta_hit", "object_hit", "passthrough"]))
        .param(Param::int("rows", 1000).range(2, 10_000_000).doc("rows per response: minutes x 2 hosts (even)"))
        .param(Param::choice("cache", "warm", &["warm", "cold"]).doc("cold purges the tiers in every request"))
        .param(
            Param::choice("upstream", "datafusion", &["datafusion", "canned"])
                .doc("canned hands over DataFusion's answer again (the seed's fake upstream)"),
        )
        .metric(Metric::iter_time("request_time"))
        .metric(Metric::rate("rows_per_s", Unit::RowsPerSec, "rows"))
        .metric(Metric::counter("allocations", Unit::Allocs, "allocations").doc("per request, plugin allocator"))
        .metric(Metric::counter("allocated_bytes", Unit::Bytes, "allocated_bytes").doc("per request"))
        .metric(Metric::counter("miss_percent", Unit::Percent, "miss_percent").doc("timed requests the tier missed"))
        .metric(Metric::counter("response_bytes", Unit::Bytes, "response_bytes").doc("Flight data per response"))
        .invariant(Invariant::equal("rows_out", "rows"))
        .invariant(Invariant::equal("status_as_expected", "requests"))
    }

    fn setup(p: Params, _: &SetupContext) -> Result<Self, RigError> {
        if p.rows < 2 || p.rows % 2 != 0 {
            return Err(RigError::invalid_params(format!("rows = {} is not minutes x 2 hosts", p.rows)));
        }
        if p.tier == Tier::Passthrough && p.cache == Cache::Cold {
            return Err(RigError::invalid_params("passthrough never caches, so `cache = cold` means nothing for it"));
        }
        let minutes = p.rows / 2;
        // The delta tier holds twice the window, so a hit really crops.
        let (window, extent) = (Window::minutes(minutes / 2, minutes), Window::minutes(0, 2 * minutes));
        let statement = match p.tier {
            Tier::DeltaHit => upstream::delta_statement(window),
            Tier::ObjectHit => upstream::object_statement(p.rows as usize),
            Tier::Passthrough => upstream::passthrough_statement(),
        };
        // The delta tier is primed with the extent, the object tier with the statement itself.
        let prime = if p.tier == Tier::DeltaHit { upstream::delta_statement(extent) } else { statement.clone() };
        let runtime = tokio::runtime::Builder::new_current_thread().build()?;
        let engine = Engine::new(minutes)?;
        let (answer, primed) = runtime.block_on(async {
            Ok::<_, datafusion::error::DataFusionError>((
                engine.answer(&statement).await?,
                engine.answer(&prime).await?,
            ))
        })?;
        let expected = data::rows(&answer.batches).map_err(RigError::verification)?;
        if expected.len() != p.rows as usize {
            let found = expected.len();
            return Err(RigError::verification(format!("the upstream answered {found} rows, not {}", p.rows)));
        }
        let upstream = match p.upstream {
            UpstreamKind::Datafusion => Upstream::DataFusion(engine),
            UpstreamKind::Canned => {
                Upstream::Canned(HashMap::from([(statement.clone(), answer), (prime.clone(), primed)]))
            }
        };
        let mut rig = CacheTier {
            tier: p.tier,
            cold: false,
            runtime,
            service: Arc::new(CacheService::new(upstream)),
            ticket: service::ticket(&prime),
            statement: prime,
            rows: p.rows as usize,
            expected,
            requests: 0,
            hits: 0,
            misses: 0,
            as_expected: 0,
            last: Vec::new(),
        };
        if p.tier != Tier::Passthrough {
            rig.request()?;
        }
        rig.ticket = service::ticket(&statement);
        rig.statement = statement;
        // The primed cache serves the first timed request, so its answer is checked before any is timed.
        let first = rig.request()?;
        rig.check(&first)?;
        (rig.requests, rig.hits, rig.misses, rig.as_expected, rig.cold) = (0, 0, 0, 0, p.cache == Cache::Cold);
        Ok(rig)
    }

    fn iterate(&mut self) -> Result<(), RigError> {
        benchhost_plugin_api::slower::spin(SLOWER);
        self.last = self.request()?;
        Ok(())
    }

    fn teardown(mut self) -> Result<Outcome, RigError> {
        if self.requests == 0 {
            return Err(RigError::verification("no request was served"));
        }
        let rows_out = self.check(&self.last)?;
        let (requests, hits, misses, as_expected) = (self.requests, self.hits, self.misses, self.as_expected);
        let (served, allocations) = alloc::count(|| (0..COUNTED_REQUESTS).try_for_each(|_| self.request().map(drop)));
        served?;
        let response_bytes: usize = self.last.iter().map(|m| m.data_header.len() + m.data_body.len()).sum();
        Ok(Outcome::new()
            .counter("rows", self.rows as u64)
            .counter("rows_out", rows_out as u64)
            .counter("requests", requests)
            .counter("tier_hits", hits)
            .counter("tier_misses", misses)
            .counter("status_as_expected", as_expected)
            .counter("miss_percent", misses * 100 / requests)
            .counter("allocations", per_request(allocations.count))
            .counter("allocated_bytes", per_request(allocations.bytes))
            .counter("response_bytes", response_bytes as u64))
    }
}

fn per_request(total: u64) -> u64 {
    (total + COUNTED_REQUESTS / 2) / COUNTED_REQUESTS
}

benchhost_plugin_api::export_rigs![CacheTier];

#[cfg(test)]
mod tests;
