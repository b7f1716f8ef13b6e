//! The rig as plain Rust against real librdkafka mock clusters. Counts and causes only: no timing.

use benchhost_plugin_api::testing;
use serde_json::{Value, json};

use super::*;

/// One Kafka test at a time: each runs a cluster, a producer and consumer threads, and on 2 cores
/// concurrent tests would starve each other's feeds (which the rig rightly reports as a failure).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn run(params: Value, runs: u64) -> Result<testing::Report, String> {
    testing::run::<KafkaTopology>(params, runs)
}

fn counter(report: &testing::Report, run: usize, name: &str) -> u64 {
    report.observations[run].counters[name]
}

#[test]
fn draining_consumes_every_record_exactly_once_in_both_topologies() {
    let _serial = serial();
    for mode in ["perthread", "split"] {
        let params = json!({"mode": mode, "partitions": 4, "threads": 2, "payload_bytes": 64, "messages": 20_000, "duration_s": 0});
        let report = run(params, 2).unwrap_or_else(|e| panic!("{mode}: {e}"));
        for i in 0..2 {
            assert_eq!(counter(&report, i, "consumed"), 20_000, "{mode} run {i}");
            assert_eq!(counter(&report, i, "produced"), 20_000, "{mode} run {i}");
            assert_eq!(counter(&report, i, "skipped_offsets"), 0);
            assert_eq!(counter(&report, i, "leaked"), 0);
        }
        assert_eq!(report.outcome.counters["runs"], 2);
    }
}

#[test]
fn more_threads_than_partitions_is_fine() {
    let _serial = serial();
    // regression (seed 003 bug 5): a thread without partitions must not panic or hang.
    for mode in ["perthread", "split"] {
        let params = json!({"mode": mode, "partitions": 2, "threads": 4, "messages": 3_000, "duration_s": 0});
        let report = run(params, 1).unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert_eq!(counter(&report, 0, "consumed"), 3_000, "{mode}");
    }
}

#[test]
fn a_windowed_run_stops_on_time_with_contiguous_offsets() {
    let _serial = serial();
    for mode in ["perthread", "split"] {
        // 10 µs of work per record keeps the consumers far below the feed, so the window ends first.
        let params = json!({"mode": mode, "partitions": 4, "threads": 2, "work_us": 10, "duration_s": 0.3});
        let report = run(params, 1).unwrap_or_else(|e| panic!("{mode}: {e}"));
        let (consumed, produced) = (counter(&report, 0, "consumed"), counter(&report, 0, "produced"));
        assert!(consumed > 0 && consumed < produced, "{mode}: consumed {consumed} of {produced}");
        assert_eq!(consumed, counter(&report, 0, "expected"), "{mode}");
        let metrics = &report.observations[0].metrics;
        for name in ["records_per_s", "mb_per_s", "elapsed_s", "p99_gap_us", "thread_spread_pct"] {
            assert!(metrics.contains_key(name), "{mode}: {name} missing from {metrics:?}");
        }
    }
}

#[test]
fn a_backlog_that_drains_before_the_window_ends_is_a_failure() {
    let _serial = serial();
    // regression (seed 003 bug 3): emptying a small backlog is not the ceiling.
    let params = json!({"partitions": 2, "threads": 2, "messages": 2_000, "duration_s": 5});
    let err = run(params, 1).unwrap_err();
    assert!(err.contains("drained the whole backlog"), "{err}");
    assert!(err.starts_with("run: Verification"), "{err}");
}

#[test]
fn a_reused_topic_with_another_partition_count_is_refused() {
    let _serial = serial();
    // regression (seed 003 bug 9).
    let cluster = Cluster::start("mock", 1).unwrap();
    cluster.ensure_topic("bench-reused", 4).unwrap();
    let err = cluster.ensure_topic("bench-reused", 8).unwrap_err();
    assert!(err.message.contains("already exists with 4 partitions, the rig needs 8"), "{}", err.message);
}

#[test]
fn a_broker_going_down_mid_run_gives_exact_counts_or_a_named_failure() {
    let _serial = serial();
    let params = json!({
        "partitions": 6, "threads": 2, "brokers": 3, "messages": 30_000, "duration_s": 0,
        "broker_down_ms": 1_000, "timeout_s": 30, "payload_bytes": 64, "work_us": 30,
        "queued_min_messages": 50
    });
    // The broker goes down as the drain starts, for 1 s: the partitions it leads can only be read after it is
    // back, while the others are consumed (30 µs per record, a shallow prefetch).
    match run(params, 1) {
        // `testing::run` checks the invariants, so Ok means every record was consumed exactly once.
        Ok(report) => {
            assert_eq!(counter(&report, 0, "consumed"), 30_000);
            assert_eq!(counter(&report, 0, "produced"), 30_000);
            let elapsed = report.observations[0].metrics["elapsed_s"];
            assert!(elapsed > 1.0, "the drain ({elapsed} s) must have spanned the outage");
            eprintln!("broker down: recovered with exact counts after {elapsed:.2} s");
        }
        Err(err) => {
            let named = ["deadline", "failed to be delivered", "violated", "caught up", "drained"];
            assert!(named.iter().any(|cause| err.contains(cause)), "unexplained failure: {err}");
            eprintln!("broker down: failure: {err}");
        }
    }
}
