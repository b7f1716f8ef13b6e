//! The tiers and the rig as plain Rust: every arm answers the upstream's rows, the tiers agree with each other,
//! misses are counted, and allocations are counted on the requesting thread only.

use arrow::array::RecordBatch;
use benchhost_plugin_api::{ErrorKind, testing};
use serde_json::json;

use super::*;

fn rig(tier: &str, rows: i64, cache: &str, upstream: &str) -> CacheTier {
    let params = json!({"tier": tier, "rows": rows, "cache": cache, "upstream": upstream});
    CacheTier::setup(serde_json::from_value(params).unwrap(), &testing_context()).unwrap()
}

fn testing_context() -> SetupContext {
    SetupContext { scratch_dir: std::env::temp_dir(), quick: true, seed_dir: None, ..SetupContext::default() }
}

#[test]
fn every_arm_serves_the_upstreams_rows_and_counts_its_misses() {
    for (tier, cache, upstream) in [
        ("delta_hit", "warm", "canned"),
        ("delta_hit", "cold", "datafusion"),
        ("delta_hit", "cold", "canned"),
        ("object_hit", "warm", "datafusion"),
        ("object_hit", "cold", "datafusion"),
        ("passthrough", "warm", "datafusion"),
        ("passthrough", "warm", "canned"),
    ] {
        let arm = format!("{tier}/{cache}/{upstream}");
        let params = json!({"tier": tier, "rows": 200, "cache": cache, "upstream": upstream});
        let report = testing::run::<CacheTier>(params, 3).unwrap_or_else(|e| panic!("{arm}: {e}"));
        let counters = &report.outcome.counters;
        assert_eq!(counters["rows_out"], 200, "{arm}");
        assert_eq!(counters["requests"], 3, "{arm}");
        let misses = if cache == "cold" { 3 } else { 0 };
        assert_eq!(counters["tier_misses"], misses, "{arm}");
        if tier != "passthrough" {
            assert_eq!(counters["tier_hits"], 3 - misses, "{arm}");
        }
        assert!(counters["allocations"] > 0 && counters["allocated_bytes"] >= counters["response_bytes"], "{arm}");
    }
}

#[test]
fn delta_and_object_responses_decode_to_the_same_rows_for_the_same_window() {
    let mut delta = rig("delta_hit", 1000, "warm", "canned");
    let mut object = rig("object_hit", 1000, "warm", "canned");
    let (from_delta, from_object) = (delta.serve().unwrap(), object.serve().unwrap());
    assert_ne!(from_delta, Vec::<u8>::new());
    let rows = |bytes: &[u8]| data::rows(&data::decode(bytes).unwrap().1).unwrap();
    let (delta_rows, object_rows) = (rows(&from_delta), rows(&from_object));
    assert_eq!(delta_rows.len(), 1000);
    assert_eq!(delta_rows, object_rows);
    // The window is minutes [250, 750) of the 1,000 the delta tier holds, hosts in order within a minute.
    assert_eq!((delta_rows[0].time, delta_rows[0].host.as_str()), (250 * 60_000_000_000, "a"));
    assert_eq!((delta_rows[1].time, delta_rows[1].host.as_str()), (250 * 60_000_000_000, "b"));
    assert_eq!(delta_rows[999].v, data::value(749, 1));
    assert_eq!(data::decode(&from_delta).unwrap().0, data::decode(&from_object).unwrap().0, "same schema");
}

#[test]
fn the_delta_tier_crops_to_the_window_and_misses_outside_its_extent() {
    let engine = Engine::new(data::raw_table(100)).unwrap();
    let extent = Window::minutes(10, 50);
    let mut tier = DeltaTier::default();
    tier.put("t", extent, &engine.answer(&upstream::statement(extent)).unwrap()).unwrap();
    let window = Window::minutes(20, 7);
    let batch: RecordBatch = tier.get("t", window).unwrap().rebuild(window).unwrap();
    let rows = data::rows(&[batch]).unwrap();
    let direct = engine.answer(&upstream::statement(window)).unwrap();
    assert_eq!(rows, data::rows(&data::decode(&direct).unwrap().1).unwrap());
    assert_eq!(rows.len(), 14);
    assert!(tier.get("t", Window::minutes(55, 10)).is_none(), "reaches past the extent");
    assert!(tier.get("other", window).is_none(), "another template");
    tier.clear();
    assert!(tier.get("t", window).is_none());
}

#[test]
fn a_response_that_differs_from_the_upstreams_answer_is_a_verification_failure() {
    let mut rig = rig("delta_hit", 100, "warm", "canned");
    let response = rig.serve().unwrap();
    assert_eq!(rig.check(&response).unwrap(), 100);
    rig.expected[37].v += 0.5;
    let err = rig.check(&response).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Verification);
    assert!(err.message.contains("row 37"), "{}", err.message);
    rig.expected.pop();
    assert!(rig.check(&response).is_err(), "a missing row fails too");
}

#[test]
fn object_hits_allocate_the_same_at_every_size_and_delta_hits_grow_with_rows() {
    let allocations = |tier: &str, rows: i64| {
        let mut rig = rig(tier, rows, "warm", "canned");
        rig.serve().unwrap();
        alloc::count(|| rig.serve().unwrap()).1
    };
    let (small, large) = (allocations("object_hit", 100), allocations("object_hit", 10_000));
    assert_eq!(small.count, large.count, "a copy of the stored bytes: {small:?} {large:?}");
    assert!(large.bytes > 50 * small.bytes / 2, "{small:?} {large:?}");
    let (small, large) = (allocations("delta_hit", 100), allocations("delta_hit", 10_000));
    assert!(large.bytes > 50 * small.bytes, "{small:?} {large:?}");
}

#[test]
fn parameters_without_meaning_are_refused() {
    for (params, needle) in
        [(json!({"tier": "passthrough", "cache": "cold"}), "never caches"), (json!({"rows": 101}), "minutes x 2")]
    {
        let err = testing::run::<CacheTier>(params, 1).unwrap_err();
        assert!(err.contains(needle), "{err}");
    }
}
