//! benchhost rig `kafka_topology`: seed 003's consumer-topology benchmark on librdkafka. `perthread` runs one
//! consumer per thread; `split` runs one consumer whose partition queues are split off to threads. Both
//! arms share one drain loop and one feed, and differ only in the topology.
//!
//! By default the rig starts librdkafka's mock cluster in process; `broker = "host:port"` (or
//! `bootstrap_servers`) runs the same code against a real cluster. Each repetition is one run: untimed
//! prefill, then every thread is timed from its first record to the end of its `duration_s` window while
//! the feed keeps every partition's backlog below the mock's retention limit. A run whose consumers caught
//! up with the feed, or drained the whole backlog, measured the feed or the emptying, not the consumers'
//! ceiling: it fails instead of reporting a number. `duration_s = 0` drains exactly `messages` records and
//! checks that every one was consumed once. `rate` > 0 is an open loop instead (`paced`): `rate` x
//! `duration_s` records produced at their intended times, each one's latency from then to its consumption.
//! In a duel (`SetupContext::window_ns`) a live feed's runs are windows of one continuing feed instead
//! (`window.rs`).

mod cluster;
mod drain;
mod feed;
mod paced;
mod spin;
mod topology;
mod window;

use std::time::{Duration, Instant};

use benchhost_plugin_api::open_loop::{self, Schedule};
use benchhost_plugin_api::{
    Descriptor, Invariant, Metric, Observation, OnlyWhere, Outcome, Param, Rig, RigError, SetupContext, Unit,
};
use serde::Deserialize;

use crate::cluster::Cluster;
use crate::drain::{Exit, Limits, ThreadReport};
use crate::feed::Feed;
use crate::spin::Spin;
use crate::topology::{ConsumerSettings, Mode};
use crate::window::Session;

/// The slowdown compiled in with the `slower` feature, spun once per record consumed, after its `work_us` (proofs only: a second build of
/// the same tree, slower by a known amount; see `benchhost_plugin_api::slower`).
pub(crate) const SLOWER: u64 = if cfg!(feature = "slower") {
    benchhost_plugin_api::slower::rounds(option_env!("BENCHHOST_SLOWER_SPIN"))
} else {
    0
};

/// Backlog bound per partition, in bytes of payload plus record overhead: under the mock cluster's 5 MiB per
/// partition (with the overhead below overstated), so no record is dropped by retention before it is consumed.
const BACKLOG_BYTES: u64 = 4 << 20;

/// The open-loop cells (`rate` > 0), whose rate and window the cell sets.
fn open_loop_cells() -> OnlyWhere {
    OnlyWhere::except("rate", [0.0])
}

/// The drain cells (`duration_s` = 0), which consume the backlog they were given, no more and no less.
fn drain_cells() -> OnlyWhere {
    OnlyWhere::new("duration_s", [0.0])
}
/// Per-record overhead assumed in the backlog bound (record headers, batch framing).
const RECORD_OVERHEAD: u64 = 100;
/// Share of a thread's window it may spend caught up with the feed before the run is rejected.
const STARVED_LIMIT: f64 = 0.05;

/// Parameters of `kafka_topology`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    mode: Mode,
    partitions: i64,
    threads: i64,
    payload_bytes: i64,
    work_us: i64,
    queued_min_messages: i64,
    duration_s: f64,
    messages: i64,
    timeout_s: f64,
    broker: String,
    brokers: i64,
    fetch_wait_max_ms: i64,
    broker_down_ms: i64,
    rate: f64,
}

/// The rig.
pub struct KafkaTopology {
    cluster: Cluster,
    settings: ConsumerSettings,
    mode: Mode,
    threads: usize,
    partitions: usize,
    payload_bytes: usize,
    messages: u64,
    window: Option<Duration>,
    timeout: Duration,
    broker_down: Duration,
    spin: Spin,
    schedule: Option<Schedule>,
    runs: u64,
    /// A duel's window (`SetupContext::window_ns`), for a live feed: each run is a window of one session.
    duel_window: Option<Duration>,
    session: Option<Session>,
}

impl Rig for KafkaTopology {
    type Params = Params;

    fn describe() -> Descriptor {
        let descriptor = Descriptor::run(
            "kafka_topology",
            "Kafka consumer topologies on librdkafka: one consumer per thread vs split partition queues",
        )
        .windows()
        .param(Param::choice("mode", "perthread", &["perthread", "split"]).doc("consumer topology"))
        .param(Param::int("partitions", 16).range(1, 4096))
        .param(Param::int("threads", 4).range(1, 1024))
        .param(Param::int("payload_bytes", 256).range(1, 1 << 20))
        // 10 µs, the seed's shape, by default: with no work the consumers outrun any producer sharing the machine,
        // so the default 2 s live window would measure the producer and fail its own check.
        .param(
            Param::int("work_us", 10)
                .range(0, 1_000_000)
                .doc("busy work per record: a fixed spin of this many µs on the reference machine"),
        )
        .param(
            Param::int("queued_min_messages", 100_000)
                .range(1, 10_000_000)
                .doc("librdkafka prefetch depth, same in both modes"),
        )
        .param(
            Param::float("duration_s", 2.0)
                .range(0, 3600)
                .doc("window per thread from its first record; 0 drains `messages` exactly"),
        )
        .param(
            Param::int("messages", 100_000_000)
                .range(1, i64::MAX)
                .doc("records produced per run at most (exactly, when draining)"),
        )
        .param(Param::float("timeout_s", 120.0).range(0.1, 86_400).doc("deadline of one run"))
        .param(
            Param::string("broker", "mock")
                .alias("bootstrap_servers")
                .doc("`mock` (embedded librdkafka mock cluster) or bootstrap servers"),
        )
        .param(Param::int("brokers", 1).allowed([1, 3]).doc("brokers of the mock cluster"))
        .param(
            Param::int("fetch_wait_max_ms", 10)
                .range(0, 60_000)
                .doc("fetch.wait.max.ms; brokers that hold every fetch need it small"),
        )
        .param(Param::int("broker_down_ms", 0).range(0, 600_000).doc(
            "mock only: take broker 1 down this long during each run (a third into the window, or as a drain starts)",
        ))
        // What the open loop's rate fixes (`rate` x `duration_s` records at `rate`), and what a drain's backlog
        // fixes (every record it was given): checks of the cell there, given no verdict.
        .metric(
            Metric::observed("records_per_s", Unit::RecordsPerSec, true)
                .doc("sum over threads of records / own window")
                .fixed_where(open_loop_cells()),
        )
        .metric(
            Metric::observed("mb_per_s", Unit::MegabytesPerSec, true)
                .doc("payload bytes, 10^6, over the same windows")
                .fixed_where(open_loop_cells()),
        )
        .metric(
            Metric::observed("consumed", Unit::Records, true).fixed_where(open_loop_cells()).fixed_where(drain_cells()),
        )
        .metric(
            Metric::observed("elapsed_s", Unit::Seconds, false)
                .doc("mean window of the threads")
                .fixed_where(open_loop_cells()),
        )
        .metric(
            Metric::observed("p99_gap_us", Unit::Micros, false)
                .doc("99th percentile gap between consecutive records of a thread"),
        )
        .metric(
            Metric::observed("thread_shortfall_pct", Unit::Percent, false)
                .doc("how far the slowest thread's records/s fell short of the fastest's, in percent of it (0-100)"),
        )
        .param(Param::float("rate", 0.0).range(0, 1e9).doc(
            "records per second, open loop: `rate` x `duration_s` records, each one's latency from its intended \
             production to its consumption; 0 = saturate the consumers",
        ))
        .metric(
            Metric::observed("p50_e2e_us", Unit::Micros, false)
                .doc("open loop: from a record's intended production until a consumer has processed it"),
        )
        .metric(Metric::observed("p99_e2e_us", Unit::Micros, false))
        .metric(Metric::observed("p999_e2e_us", Unit::Micros, false))
        .invariant(Invariant::equal("consumed", "expected"))
        // Laws between two counts of what was consumed, so that a run that consumed nothing cannot pass them:
        // no record came twice, and (split) none came through the consumer's main queue.
        .invariant(Invariant::equal("new_offsets", "consumed"))
        .invariant(Invariant::equal("polled", "consumed").only_where("mode", ["split"]));
        let mut descriptor = open_loop::declare(descriptor, "e2e");
        // The open loop's achieved rate is the rate it was asked for, or the run failed: a check, not a verdict.
        descriptor
            .metrics
            .iter_mut()
            .filter(|m| m.name == "achieved_per_s")
            .for_each(|m| m.fixed_where.push(open_loop_cells()));
        descriptor
    }

    fn setup(p: Params, ctx: &SetupContext) -> Result<Self, RigError> {
        let positive = |v: i64, name: &str| {
            usize::try_from(v).map_err(|_| RigError::invalid_params(format!("{name} must be positive")))
        };
        let schedule = (p.rate > 0.0).then(|| Schedule::per_second(p.rate)).transpose()?;
        if schedule.is_some() && (p.duration_s <= 0.0 || (p.payload_bytes as usize) < paced::STAMP_BYTES) {
            return Err(RigError::invalid_params(format!(
                "rate needs duration_s > 0 (how long to produce) and payload_bytes >= {} (the stamp)",
                paced::STAMP_BYTES
            )));
        }
        let cluster = Cluster::start(&p.broker, p.brokers as i32)?;
        let topic = format!("bench-p{}-b{}", p.partitions, p.payload_bytes);
        cluster.ensure_topic(&topic, p.partitions as i32)?;
        let settings = ConsumerSettings {
            bootstrap: cluster.bootstrap(),
            topic,
            queued_min_messages: p.queued_min_messages as u64,
            fetch_wait_max_ms: p.fetch_wait_max_ms as u64,
        };
        Ok(KafkaTopology {
            cluster,
            settings,
            mode: p.mode,
            threads: positive(p.threads, "threads")?,
            partitions: positive(p.partitions, "partitions")?,
            payload_bytes: positive(p.payload_bytes, "payload_bytes")?,
            messages: p.messages as u64,
            window: (p.duration_s > 0.0).then(|| Duration::from_secs_f64(p.duration_s)),
            timeout: Duration::from_secs_f64(p.timeout_s),
            broker_down: Duration::from_millis(p.broker_down_ms as u64),
            spin: Spin::of_micros(p.work_us as u64),
            // A drain has a fixed amount to consume, an open loop its schedule, an outage its moment: those run
            // whole runs in a duel too.
            duel_window: ctx
                .window_ns
                .filter(|_| p.duration_s > 0.0 && schedule.is_none() && p.broker_down_ms == 0)
                .map(Duration::from_nanos),
            schedule,
            runs: 0,
            session: None,
        })
    }

    fn run(&mut self) -> Result<Observation, RigError> {
        self.runs += 1;
        let high = (BACKLOG_BYTES / (self.payload_bytes as u64 + RECORD_OVERHEAD)).max(1);
        if let Some(length) = self.duel_window {
            return self.window(length, high);
        }
        // Open loop: one zeroed marker per partition before timing gives the start offsets, then the paced
        // records, as many as the schedule has in the window.
        let paced = self.schedule.zip(self.window).map(|(s, w)| (s, (s.rate() * w.as_secs_f64()).round() as u64));
        let messages = if paced.is_some() { self.partitions as u64 } else { self.messages };
        let (bootstrap, topic) = (&self.settings.bootstrap, &self.settings.topic);
        let mut feed = Feed::new(bootstrap, topic, self.partitions, messages, self.payload_bytes, high, self.schedule)?;
        let starts = feed.prefill(self.timeout)?;
        let note = self.note(high, paced.map(|(s, ops)| (s.rate(), ops)), feed.all_sent());
        let shared = feed.shared().clone();
        let windowed = paced.is_none() && self.window.is_some();
        let limits = Limits { window: self.window.filter(|_| windowed), deadline: Instant::now() + self.timeout };
        let (cluster, broker_down, window, timeout) = (&self.cluster, self.broker_down, self.window, self.timeout);
        let mut fault = Ok(());
        let (reports, fed) = std::thread::scope(|s| {
            let feeder = s.spawn(|| match paced {
                Some((schedule, ops)) => feed.pace(&schedule, ops, timeout).map(Some),
                None => feed.feed(timeout).map(|()| None),
            });
            let consumers = topology::Consumers {
                mode: self.mode,
                threads: self.threads,
                settings: &self.settings,
                starts: &starts,
                shared: &shared,
                spin: self.spin,
                limits,
            };
            let reports = topology::consume(&consumers, || {
                if !broker_down.is_zero() {
                    // A third into the window; in a drain, as the consumers start (one fetch can carry a whole
                    // small partition, so a later outage could miss the consumption entirely).
                    std::thread::sleep(window.map_or(Duration::ZERO, |w| w / 3));
                    fault = cluster.set_broker(1, false).and_then(|()| {
                        std::thread::sleep(broker_down);
                        cluster.set_broker(1, true)
                    });
                }
            });
            shared.stop.store(true, std::sync::atomic::Ordering::Relaxed);
            (reports, feeder.join().expect("the feed does not panic"))
        });
        fault?;
        let issued = fed?;
        let reports = reports?;
        let observation = observe(&reports, &shared, windowed)?.note(note);
        match paced.zip(issued) {
            Some(((schedule, _), issued)) => {
                let run = paced::latencies(&schedule, &issued, &reports)?;
                Ok(run.metrics(observation, "e2e"))
            }
            None => Ok(observation),
        }
    }

    fn teardown(self) -> Result<Outcome, RigError> {
        Ok(Outcome::new().counter("runs", self.runs))
    }
}

impl KafkaTopology {
    /// How the run was fed and timed: open loop at `paced` (rate, records), a live feed, or a drain.
    fn note(&self, high: u64, paced: Option<(f64, u64)>, all_sent: bool) -> String {
        match (paced, self.window) {
            (Some((rate, ops)), _) => format!(
                "open loop: {ops} records produced at {rate}/s, round-robin over the partitions, never held back by the consumers; each one's latency from its intended production until a consumer has processed it"
            ),
            (None, Some(w)) => format!(
                "live feed: a producer keeps each partition at most {high} records ahead of its consumer ({}); each thread is timed over its own {:.2} s window from its first record",
                match self.cluster {
                    Cluster::Mock(_) => "the mock cluster keeps ~5 MiB per partition",
                    Cluster::Remote(_) => "4 MiB a partition, the bound set for the mock cluster's retention",
                },
                w.as_secs_f64()
            ),
            (None, None) if all_sent => format!(
                "drain: all {} records produced before timing; each thread is timed from its first record until its partitions are empty",
                self.messages
            ),
            (None, None) => format!(
                "drain: {} records, fed live at most {high} records ahead per partition; each thread is timed from its first record until its partitions are empty",
                self.messages
            ),
        }
    }
}

/// Metrics and counters of one run, or the reason it measured something other than the consumers.
fn observe(reports: &[ThreadReport], shared: &feed::Shared, windowed: bool) -> Result<Observation, RigError> {
    use std::sync::atomic::Ordering::Relaxed;
    let active: Vec<&ThreadReport> = reports.iter().filter(|r| r.exit != Exit::Idle && r.consumed > 0).collect();
    if let Some((t, r)) = reports.iter().enumerate().find(|(_, r)| r.exit == Exit::Timeout) {
        let consumed: u64 = reports.iter().map(|r| r.consumed).sum();
        return Err(RigError::new(format!(
            "the run hit its deadline: thread {t} stopped after {:.1} s with {consumed} records consumed in all{}",
            r.elapsed.as_secs_f64(),
            errors_suffix(reports)
        )));
    }
    if windowed && let Some((t, r)) = reports.iter().enumerate().find(|(_, r)| r.exit == Exit::Drained) {
        return Err(RigError::verification(format!(
            "thread {t} drained the whole backlog {:.2} s into its window: the rate would measure emptying, not the ceiling; raise `messages` or shorten `duration_s`",
            r.elapsed.as_secs_f64()
        )));
    }
    if windowed
        && let Some((t, r)) =
            active.iter().enumerate().find(|(_, r)| r.starved.as_secs_f64() > STARVED_LIMIT * r.elapsed.as_secs_f64())
    {
        return Err(RigError::verification(format!(
            "thread {t} was caught up with the feed for {:.0}% of its window: the rate would measure the producer, not the consumers",
            100.0 * r.starved.as_secs_f64() / r.elapsed.as_secs_f64().max(1e-9)
        )));
    }
    if active.is_empty() {
        return Err(RigError::new(format!("no thread consumed a record{}", errors_suffix(reports))));
    }
    let rates: Vec<f64> = active.iter().map(|r| r.consumed as f64 / r.elapsed.as_secs_f64().max(1e-9)).collect();
    let mb: f64 = active.iter().map(|r| r.bytes as f64 / 1e6 / r.elapsed.as_secs_f64().max(1e-9)).sum();
    let fastest = rates.iter().cloned().fold(f64::MIN, f64::max);
    let spread = fastest - rates.iter().cloned().fold(f64::MAX, f64::min);
    let mut gaps = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 600_000_000_000, 3).expect("valid bounds");
    for r in reports {
        gaps.add(&r.gaps).map_err(|e| RigError::new(format!("merging gap histograms: {e}")))?;
    }
    let consumed: u64 = reports.iter().map(|r| r.consumed).sum();
    let duplicates: u64 = reports.iter().map(|r| r.duplicates).sum();
    let leaked: u64 = reports.iter().map(|r| r.leaked).sum();
    let produced: u64 = shared.delivered.iter().map(|d| d.0.load(Relaxed) as u64).sum();
    // Drain runs must consume every delivered record; windowed runs every offset below where each partition
    // stopped. Either way, one gap or duplicate breaks `consumed == expected`.
    let expected = if windowed {
        reports.iter().flat_map(|r| &r.partitions).map(|(_, start, next)| (next - start) as u64).sum()
    } else {
        produced
    };
    let mut observation = Observation::new()
        .metric("records_per_s", rates.iter().sum())
        .metric("mb_per_s", mb)
        .metric("consumed", consumed as f64)
        .metric("elapsed_s", active.iter().map(|r| r.elapsed.as_secs_f64()).sum::<f64>() / active.len() as f64)
        .counter("consumed", consumed)
        .counter("expected", expected)
        .counter("produced", produced)
        .counter("duplicates", duplicates)
        .counter("new_offsets", consumed - duplicates)
        .counter("skipped_offsets", reports.iter().map(|r| r.skipped).sum())
        .counter("leaked", leaked)
        .counter("polled", consumed + leaked)
        .counter("poll_errors", reports.iter().map(|r| r.errors.0).sum());
    if !gaps.is_empty() {
        observation = observation.metric("p99_gap_us", gaps.value_at_quantile(0.99) as f64 / 1e3);
    }
    // Of the fastest, not of the mean: a percent that stays within 0-100 (`thread_spread_pct`, of the mean, passed
    // 100 when one thread got most of the partitions).
    if active.len() > 1 && fastest > 0.0 {
        observation = observation.metric("thread_shortfall_pct", 100.0 * spread / fastest);
    }
    Ok(observation)
}

fn errors_suffix(reports: &[ThreadReport]) -> String {
    let count: u64 = reports.iter().map(|r| r.errors.0).sum();
    match reports.iter().find_map(|r| r.errors.1.clone()) {
        Some(first) => format!("; {count} poll errors, first: {first}"),
        None => String::new(),
    }
}

benchhost_plugin_api::export_rigs![KafkaTopology];

#[cfg(test)]
mod tests;
