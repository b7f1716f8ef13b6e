//! benchhost rig `cache_tier`: seed 001's Flight SQL statement cache tiers. One iteration serves one request
//! for the seed's `date_bin` statement and yields the response as Arrow IPC bytes, as `DoGet` would stream
//! them: `delta_hit` crops the delta tier's dataset to the window and rebuilds batches, `object_hit` copies the
//! object tier's stored bytes, `passthrough` asks the upstream (DataFusion planning and executing the
//! statement, or its answer canned). With `cache = cold` the tier is cleared inside the timed region, so every
//! request misses, fetches from the upstream and fills the tier; the miss counter proves it.
//!
//! The request arrives analysed (statement, template and window known), as a Flight ticket would: parsing
//! SQL is not what the seed times. Allocations are counted by this plugin's own global allocator over a few
//! extra requests after the timed region, so counting costs the timed requests nothing.

pub mod alloc;
pub mod data;
pub mod tiers;
pub mod upstream;

use std::collections::HashMap;

use benchhost_plugin_api::{Descriptor, Invariant, Metric, Outcome, Param, Rig, RigError, SetupContext, Unit};
use serde::Deserialize;

use data::{Row, Window};
use tiers::{DeltaTier, ObjectTier};
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

/// Which tier serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Crop the cached dataset and rebuild Arrow batches.
    DeltaHit,
    /// Copy the cached IPC bytes.
    ObjectHit,
    /// Fetch from the upstream on every request.
    Passthrough,
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
    upstream: Upstream,
    object: ObjectTier,
    delta: DeltaTier,
    statement: String,
    template: String,
    window: Window,
    rows: usize,
    /// The upstream's answer for the window: what every response must hold.
    expected: Vec<Row>,
    requests: u64,
    hits: u64,
    misses: u64,
    last: Vec<u8>,
}

impl CacheTier {
    /// Serves one request.
    fn serve(&mut self) -> Result<Vec<u8>, RigError> {
        self.requests += 1;
        match self.tier {
            Tier::Passthrough => Ok(self.upstream.fetch(&self.statement)?),
            Tier::ObjectHit => {
                if self.cold {
                    self.object.clear();
                }
                if let Some(bytes) = self.object.get(&self.statement) {
                    self.hits += 1;
                    return Ok(bytes.to_vec());
                }
                self.misses += 1;
                let answer = self.upstream.fetch(&self.statement)?;
                self.object.put(&self.statement, answer.clone());
                Ok(answer)
            }
            Tier::DeltaHit => {
                if self.cold {
                    self.delta.clear();
                }
                let dataset = match self.delta.get(&self.template, self.window) {
                    Some(dataset) => {
                        self.hits += 1;
                        dataset
                    }
                    None => {
                        self.misses += 1;
                        let answer = self.upstream.fetch(&self.statement)?;
                        self.delta.put(&self.template, self.window, &answer)?
                    }
                };
                let batch = dataset.rebuild(self.window)?;
                Ok(data::encode(dataset.schema(), &[batch], 256 + self.rows * 32)?)
            }
        }
    }

    /// Checks a response against the upstream's answer, row by row.
    fn check(&self, response: &[u8]) -> Result<usize, RigError> {
        let (_, batches) = data::decode(response)?;
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
}

impl Rig for CacheTier {
    type Params = Params;

    fn describe() -> Descriptor {
        Descriptor::iterations(
            "cache_tier",
            "Flight SQL statement cache tiers: delta rebuild, object bytes, passthrough",
        )
        .param(Param::choice("tier", "delta_hit", &["delta_hit", "object_hit", "passthrough"]))
        .param(Param::int("rows", 1000).range(2, 10_000_000).doc("rows per response: minutes x 2 hosts (even)"))
        .param(Param::choice("cache", "warm", &["warm", "cold"]).doc("cold clears the tier in every request"))
        .param(
            Param::choice("upstream", "datafusion", &["datafusion", "canned"])
                .doc("canned replays DataFusion's answer as bytes (the seed's fake upstream)"),
        )
        .metric(Metric::iter_time("request_time"))
        .metric(Metric::rate("rows_per_s", Unit::RowsPerSec, "rows"))
        .metric(Metric::counter("allocations", Unit::Allocs, "allocations").doc("per request, plugin allocator"))
        .metric(Metric::counter("allocated_bytes", Unit::Bytes, "allocated_bytes").doc("per request"))
        .metric(Metric::counter("miss_percent", Unit::Percent, "miss_percent").doc("timed requests the tier missed"))
        .metric(Metric::counter("response_bytes", Unit::Bytes, "response_bytes").doc("IPC stream per response"))
        .invariant(Invariant::equal("rows_out", "rows"))
        .invariant(Invariant::equal("tier_misses", "expected_misses"))
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
        let engine = Engine::new(data::raw_table(2 * minutes))?;
        let (statement, extent_statement) = (upstream::statement(window), upstream::statement(extent));
        let answer = engine.answer(&statement)?;
        let extent_answer = engine.answer(&extent_statement)?;
        let expected = data::rows(&data::decode(&answer)?.1).map_err(RigError::verification)?;
        if expected.len() != p.rows as usize {
            let found = expected.len();
            return Err(RigError::verification(format!("the upstream answered {found} rows, not {}", p.rows)));
        }
        let mut object = ObjectTier::default();
        object.put(&statement, answer.clone());
        let mut delta = DeltaTier::default();
        delta.put(&upstream::template(), extent, &extent_answer)?;
        let upstream = match p.upstream {
            UpstreamKind::Datafusion => Upstream::DataFusion(engine),
            UpstreamKind::Canned => {
                Upstream::Canned(HashMap::from([(statement.clone(), answer), (extent_statement, extent_answer)]))
            }
        };
        Ok(CacheTier {
            tier: p.tier,
            cold: p.cache == Cache::Cold,
            upstream,
            object,
            delta,
            statement,
            template: upstream::template(),
            window,
            rows: p.rows as usize,
            expected,
            requests: 0,
            hits: 0,
            misses: 0,
            last: Vec::new(),
        })
    }

    fn iterate(&mut self) -> Result<(), RigError> {
        benchhost_plugin_api::slower::spin(SLOWER);
        self.last = self.serve()?;
        Ok(())
    }

    fn teardown(mut self) -> Result<Outcome, RigError> {
        if self.requests == 0 {
            return Err(RigError::verification("no request was served"));
        }
        let rows_out = self.check(&self.last)?;
        let (requests, hits, misses) = (self.requests, self.hits, self.misses);
        let (served, allocations) = alloc::count(|| (0..COUNTED_REQUESTS).try_for_each(|_| self.serve().map(drop)));
        served?;
        let expected_misses = if self.cold { requests } else { 0 };
        Ok(Outcome::new()
            .counter("rows", self.rows as u64)
            .counter("rows_out", rows_out as u64)
            .counter("requests", requests)
            .counter("tier_hits", hits)
            .counter("tier_misses", misses)
            .counter("expected_misses", expected_misses)
            .counter("miss_percent", misses * 100 / requests)
            .counter("allocations", per_request(allocations.count))
            .counter("allocated_bytes", per_request(allocations.bytes))
            .counter("response_bytes", self.last.len() as u64))
    }
}

fn per_request(total: u64) -> u64 {
    (total + COUNTED_REQUESTS / 2) / COUNTED_REQUESTS
}

benchhost_plugin_api::export_rigs![CacheTier];

#[cfg(test)]
mod tests;
