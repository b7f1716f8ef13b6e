//! benchhost rig `wal_log`: the durability side of a WAL. Each run appends `records` records (the trace batch
//! as an IPC stream, prefixed with a sequence number) to a fresh log, making them durable per `fsync`, then
//! replays the log and checks that exactly those records come back, in order.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use benchhost_plugin_api::open_loop::{self, Schedule};
use benchhost_plugin_api::{
    Descriptor, Invariant, Metric, Observation, Outcome, Param, Rig, RigError, SetupContext, Unit,
};
use hdrhistogram::Histogram;
use serde::Deserialize;

use crate::ipc::{Compression, encode};
use crate::log::{self, Fsync, Log};

/// Parameters of `wal_log`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    rows: i64,
    compression: Compression,
    records: i64,
    fsync: Fsync,
    batch_records: i64,
    batch_ms: i64,
    segment_mib: i64,
    rate: f64,
}

/// The rig.
pub struct WalLog {
    payload: Vec<u8>,
    records: u64,
    fsync: Fsync,
    batch_records: u64,
    batch_window: Duration,
    segment_bytes: u64,
    /// Open loop at this rate (`rate` > 0), else closed.
    schedule: Option<Schedule>,
    scratch: PathBuf,
    runs: u64,
}

/// One run's log and what its appends have done so far.
struct Appending {
    log: Log,
    bytes: u64,
    last_sync: Instant,
}

impl Rig for WalLog {
    type Params = Params;

    fn describe() -> Descriptor {
        let descriptor = Descriptor::run(
            "wal_log",
            "on-disk WAL: append checksummed IPC records to segments with fsync none|batch|always, then replay",
        )
        .param(Param::int("rows", 100).range(1, 1_000_000).doc("spans per record"))
        .param(Param::choice("compression", "zstd", &["none", "lz4", "zstd"]))
        .param(Param::int("records", 10_000).range(1, 100_000_000).doc("records appended per run"))
        .param(Param::choice("fsync", "batch", &["none", "batch", "always"]).doc("durability of each append"))
        .param(Param::int("batch_records", 32).range(1, 1_000_000).doc("group commit after this many records"))
        .param(Param::int("batch_ms", 5).range(0, 60_000).doc("... or after this long"))
        .param(Param::int("segment_mib", 8).range(1, 4096))
        .param(Param::float("rate", 0.0).range(0, 1e9).doc(
            "appends per second, open loop: latency from each append's intended start; 0 = closed loop (each \
             append when the last ends)",
        ))
        .metric(Metric::observed("appends_per_s", Unit::RecordsPerSec, true))
        .metric(
            Metric::observed("mb_per_s", Unit::MegabytesPerSec, true).doc("framed bytes appended, 10^6, per second"),
        )
        .metric(
            Metric::observed("p50_append_us", Unit::Micros, false)
                .doc("one append, including the sync it triggered (open loop: from its intended start)"),
        )
        .metric(Metric::observed("p99_append_us", Unit::Micros, false))
        .metric(Metric::observed("p999_append_us", Unit::Micros, false))
        .metric(Metric::observed("bytes_on_disk", Unit::Bytes, false))
        .invariant(Invariant::equal("replayed", "appended"))
        .invariant(Invariant::equal("in_order", "replayed"));
        open_loop::declare(descriptor, "append")
    }

    fn setup(p: Params, ctx: &SetupContext) -> Result<Self, RigError> {
        let positive = |v: i64| u64::try_from(v).map_err(|_| RigError::invalid_params("sizes must be positive"));
        let batch = seed_schemas::fixture::traces(positive(p.rows)? as usize)?;
        Ok(WalLog {
            payload: encode(&batch, p.compression)?,
            records: positive(p.records)?,
            fsync: p.fsync,
            batch_records: positive(p.batch_records)?,
            batch_window: Duration::from_millis(positive(p.batch_ms)?),
            segment_bytes: positive(p.segment_mib)? << 20,
            schedule: (p.rate > 0.0).then(|| Schedule::per_second(p.rate)).transpose()?,
            scratch: ctx.scratch_dir.clone(),
            runs: 0,
        })
    }

    fn run(&mut self) -> Result<Observation, RigError> {
        self.runs += 1;
        let dir = self.scratch.join(format!("wal-run-{}", self.runs));
        let log = Log::create(&dir, self.segment_bytes, self.fsync)?;
        let mut appending = Appending { log, bytes: 0, last_sync: Instant::now() };
        let start = Instant::now();
        let observation = match self.schedule {
            Some(schedule) => {
                let run = schedule.drive(self.records, |seq| self.append(&mut appending, seq))?;
                self.finish(&mut appending)?;
                run.sustained()?;
                run.metrics(Observation::new(), "append").metric("appends_per_s", run.achieved_per_s())
            }
            None => {
                let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds");
                for seq in 0..self.records {
                    let t0 = Instant::now();
                    self.append(&mut appending, seq)?;
                    let _ = latency.record((t0.elapsed().as_nanos() as u64).max(1));
                }
                self.finish(&mut appending)?;
                let us = |q: f64| latency.value_at_quantile(q) as f64 / 1e3;
                Observation::new()
                    .metric("appends_per_s", self.records as f64 / start.elapsed().as_secs_f64())
                    .metric("p50_append_us", us(0.5))
                    .metric("p99_append_us", us(0.99))
                    .metric("p999_append_us", us(0.999))
            }
        };
        let elapsed = start.elapsed().as_secs_f64();
        let (bytes, syncs) = (appending.bytes, appending.log.syncs());
        drop(appending);
        let replay = log::replay(&dir)?;
        // Each replayed record is the one appended at its place: a law between two counts of work, so that a
        // replay of nothing could not pass it.
        let in_order = replay.records.iter().enumerate().filter(|(i, r)| self.is_record(*i as u64, r)).count();
        let out_of_order = replay.records.len() - in_order;
        let _ = std::fs::remove_dir_all(&dir);
        let how = match self.schedule {
            Some(s) => format!("open loop at {}/s, latency from each append's intended start", s.rate()),
            None => "latency of each append call".to_string(),
        };
        Ok(observation
            .metric("mb_per_s", bytes as f64 / 1e6 / elapsed)
            .metric("bytes_on_disk", replay.bytes_on_disk as f64)
            .counter("appended", self.records)
            .counter("syncs", syncs)
            .counter("replayed", replay.records.len() as u64)
            .counter("in_order", in_order as u64)
            .counter("out_of_order", out_of_order as u64)
            .note(format!("fsync {:?}: {how}, including the fdatasync it triggered", self.fsync)))
    }

    fn teardown(self) -> Result<Outcome, RigError> {
        Ok(Outcome::new().counter("runs", self.runs))
    }
}

impl WalLog {
    /// Appends the `seq`-th record, and syncs when its `fsync` says so.
    fn append(&self, appending: &mut Appending, seq: u64) -> Result<(), RigError> {
        let mut record = Vec::with_capacity(8 + self.payload.len());
        record.extend_from_slice(&seq.to_le_bytes());
        record.extend_from_slice(&self.payload);
        appending.bytes += appending.log.append(&record)?;
        benchhost_plugin_api::slower::spin(crate::SLOWER);
        let due = match self.fsync {
            Fsync::None => false,
            Fsync::Always => true,
            Fsync::Batch => {
                appending.log.unsynced() >= self.batch_records || appending.last_sync.elapsed() >= self.batch_window
            }
        };
        if due {
            appending.log.sync()?;
            appending.last_sync = Instant::now();
        }
        Ok(())
    }

    /// Makes the last appends durable (unless `fsync` is none).
    fn finish(&self, appending: &mut Appending) -> Result<(), RigError> {
        if self.fsync != Fsync::None {
            appending.log.sync()?;
        }
        Ok(())
    }

    /// Whether `record` is the `seq`-th record exactly as appended.
    fn is_record(&self, seq: u64, record: &[u8]) -> bool {
        record.len() == 8 + self.payload.len() && record[..8] == seq.to_le_bytes() && record[8..] == self.payload[..]
    }
}

#[cfg(test)]
mod tests {
    use benchhost_plugin_api::testing;
    use serde_json::json;

    use super::*;

    #[test]
    fn every_fsync_mode_replays_exactly_what_was_appended() {
        for fsync in ["none", "batch", "always"] {
            let params = json!({"fsync": fsync, "records": 200, "rows": 20, "segment_mib": 1});
            let report = testing::run::<WalLog>(params, 2).unwrap_or_else(|e| panic!("{fsync}: {e}"));
            for obs in &report.observations {
                assert_eq!((obs.counters["replayed"], obs.counters["out_of_order"]), (200, 0), "{fsync}");
                assert!(obs.metrics["p99_append_us"] >= obs.metrics["p50_append_us"]);
                assert!(obs.metrics["bytes_on_disk"] > 200.0 * 8.0);
                let syncs = obs.counters["syncs"];
                match fsync {
                    "none" => assert_eq!(syncs, 0, "none never syncs"),
                    "always" => assert!(syncs >= 200, "always: {syncs} syncs for 200 appends"),
                    _ => assert!((1..200).contains(&syncs), "batch: {syncs} syncs for 200 appends"),
                }
            }
        }
    }

    #[test]
    fn at_a_rate_latency_is_taken_from_each_append_s_intended_start() {
        // A rate any build holds on a loaded machine: each append takes microseconds, the interval is a millisecond.
        let params = json!({"fsync": "none", "records": 150, "rows": 20, "rate": 1000.0});
        let report = testing::run::<WalLog>(params, 2).unwrap();
        for obs in &report.observations {
            assert_eq!((obs.counters["replayed"], obs.counters["out_of_order"]), (150, 0));
            let achieved = obs.metrics["achieved_per_s"];
            assert!((950.0..=1010.0).contains(&achieved), "achieved {achieved}");
            assert_eq!(obs.metrics["appends_per_s"], achieved);
            for q in ["p50", "p99", "p999"] {
                let (corrected, uncorrected) =
                    (obs.metrics[&format!("{q}_append_us")], obs.metrics[&format!("{q}_append_us_uncorrected")]);
                assert!(corrected >= uncorrected * 0.99, "{q}: {corrected} < {uncorrected}");
            }
            assert!(obs.metrics.contains_key("late_ops") && obs.metrics.contains_key("worst_late_us"));
            assert!(obs.note.as_deref().unwrap().contains("open loop at 1000/s"), "{:?}", obs.note);
        }
        let closed = testing::run::<WalLog>(json!({"fsync": "none", "records": 50, "rows": 20}), 1).unwrap();
        assert!(!closed.observations[0].metrics.contains_key("p99_append_us_uncorrected"), "no second view closed");
    }

    #[test]
    fn a_rate_the_log_cannot_sustain_is_a_failure_not_a_latency() {
        let params = json!({"fsync": "always", "records": 200, "rows": 20, "rate": 1_000_000.0});
        let err = testing::run::<WalLog>(params, 1).expect_err("1,000,000 fsyncs a second are out of reach");
        assert!(err.to_string().contains("could not sustain 1,000,000/s: achieved "), "{err}");
    }
}
