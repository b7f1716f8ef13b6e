//! The cache and the rig as plain Rust: the cache routes the seed's three statements to their tiers through
//! `DoGet`, every arm answers the upstream's rows, a statement served by another tier than the arm names and a
//! ticket that is no statement are failures naming what happened, misses are counted from the cache's own
//! header, and allocations grow with the rows on the delta tier only.

use arrow_flight::flight_service_server::FlightService;
use benchhost_plugin_api::{ErrorKind, testing};
use serde_json::json;

use super::*;
use crate::dataset::Dataset;

fn rig(tier: &str, rows: i64, cache: &str, upstream: &str) -> CacheTier {
    let params = json!({"tier": tier, "rows": rows, "cache": cache, "upstream": upstream});
    CacheTier::setup(serde_json::from_value(params).unwrap(), &SetupContext::default()).unwrap()
}

/// `DoGet` of `statement` on `service`: the header's tier and status, and the rows, or the error status.
fn get(
    runtime: &Runtime,
    service: &CacheService,
    statement: &str,
) -> Result<(String, String, Vec<Row>), tonic::Status> {
    runtime.block_on(async {
        let response = service.do_get(tonic::Request::new(service::ticket(statement))).await?;
        let (tier, status) = service::result_of(&response).map(|(t, s)| (t.to_string(), s.to_string())).unwrap();
        let messages: Vec<FlightData> = response.into_inner().try_collect().await?;
        let batches = arrow_flight::utils::flight_data_to_batches(&messages).unwrap();
        Ok((tier, status, data::rows(&batches).unwrap()))
    })
}

#[test]
fn do_get_routes_each_of_the_seeds_statements_to_its_tier() {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let service = CacheService::new(Upstream::DataFusion(Engine::new(100).unwrap()));
    let served = |statement: &str| {
        let (tier, status, rows) = get(&runtime, &service, statement).unwrap();
        (format!("{tier}/{status}"), rows.len())
    };
    let (extent, window) = (Window::minutes(0, 200), Window::minutes(50, 100));
    assert_eq!(served(&upstream::delta_statement(extent)), ("delta/miss".to_string(), 400));
    assert_eq!(served(&upstream::delta_statement(window)), ("delta/hit".to_string(), 200), "inside the extent");
    assert_eq!(served(&upstream::object_statement(200)), ("object/miss".to_string(), 200));
    assert_eq!(served(&upstream::object_statement(200)), ("object/hit".to_string(), 200));
    assert_eq!(served(&upstream::object_statement(100)), ("object/miss".to_string(), 100), "another text");
    for _ in 0..2 {
        assert_eq!(served(&upstream::passthrough_statement()), ("passthrough/fetched".to_string(), 200));
    }
    service.purge();
    assert_eq!(served(&upstream::delta_statement(window)), ("delta/miss".to_string(), 200));
}

#[test]
fn a_ticket_that_is_no_statement_gets_an_invalid_argument_status_and_the_rig_a_failure_naming_both() {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let service = CacheService::new(Upstream::Canned(HashMap::new()));
    let status = get(&runtime, &service, "SELEC host FROM cpu").unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(status.message().starts_with("not SQL"), "{}", status.message());
    let garbage = runtime.block_on(service.do_get(tonic::Request::new(Ticket::new("not a ticket")))).err().unwrap();
    assert_eq!(garbage.code(), tonic::Code::InvalidArgument);

    let mut rig = rig("object_hit", 100, "warm", "canned").asking("SELEC host FROM cpu");
    let err = rig.iterate().unwrap_err();
    assert_eq!(err.kind, ErrorKind::Verification);
    assert!(
        err.message.contains("InvalidArgument") && err.message.contains("`SELEC host FROM cpu`"),
        "{}",
        err.message
    );
}

#[test]
fn a_statement_the_cache_serves_from_another_tier_than_the_arm_names_is_a_failure() {
    let mut rig = rig("delta_hit", 100, "warm", "datafusion").asking(&upstream::object_statement(100));
    let err = rig.iterate().unwrap_err();
    assert_eq!(err.kind, ErrorKind::Verification);
    assert!(err.message.contains("from the delta tier that arm DeltaHit names"), "{}", err.message);
}

#[test]
fn every_arm_serves_the_upstreams_rows_and_counts_its_misses() {
    for (tier, cache, upstream) in [
        ("delta_hit", "warm", "canned"),
        ("delta_hit", "cold", "datafusion"),
        ("object_hit", "warm", "datafusion"),
        ("object_hit", "cold", "datafusion"),
        ("passthrough", "warm", "datafusion"),
        ("passthrough", "warm", "canned"),
    ] {
        let arm = format!("{tier}/{cache}/{upstream}");
        let params = json!({"tier": tier, "rows": 200, "cache": cache, "upstream": upstream});
        let report = testing::run::<CacheTier>(params, 3).unwrap_or_else(|e| panic!("{arm}: {e}"));
        let counters = &report.outcome.counters;
        assert_eq!((counters["rows_out"], counters["requests"]), (200, 3), "{arm}");
        let misses = if cache == "cold" { 3 } else { 0 };
        assert_eq!(counters["tier_misses"], misses, "{arm}");
        let hits = if tier == "passthrough" { 0 } else { 3 - misses };
        assert_eq!(counters["tier_hits"], hits, "{arm}");
        assert!(counters["allocations"] > 0 && counters["allocated_bytes"] > 0, "{arm}");
    }
}

#[test]
fn the_delta_dataset_crops_to_the_window_in_the_answers_order() {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let engine = Engine::new(50).unwrap();
    let (extent, window) = (Window::minutes(10, 50), Window::minutes(20, 7));
    let answer = |w: Window| runtime.block_on(engine.answer(&upstream::delta_statement(w))).unwrap();
    let whole = answer(extent);
    let dataset = Dataset::from_answer(extent, whole.schema.clone(), &whole.batches).unwrap();
    assert!(dataset.covers(window) && !dataset.covers(Window::minutes(55, 10)));
    let rows = data::rows(&[dataset.crop(window).to_batch().unwrap()]).unwrap();
    assert_eq!(rows, data::rows(&answer(window).batches).unwrap());
    assert_eq!(rows.len(), 14);
    assert_eq!((rows[0].time, rows[0].host.as_str(), rows[1].host.as_str()), (20 * 60_000_000_000, "a", "b"));
    assert_eq!(dataset.crop(window).to_batch().unwrap().schema(), whole.schema, "the answer's own schema");
}

#[test]
fn a_response_that_differs_from_the_upstreams_answer_is_a_verification_failure() {
    let mut rig = rig("delta_hit", 100, "warm", "canned");
    let response = rig.request().unwrap();
    assert_eq!(rig.check(&response).unwrap(), 100);
    rig.expected[37].v += 0.5;
    let err = rig.check(&response).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Verification);
    assert!(err.message.contains("row 37"), "{}", err.message);
    rig.expected.pop();
    assert!(rig.check(&response).is_err(), "a missing row fails too");
}

#[test]
fn delta_hits_allocate_with_the_rows_and_object_hits_do_not() {
    let allocations = |tier: &str, rows: i64| {
        let mut rig = rig(tier, rows, "warm", "canned");
        alloc::count(|| rig.request().unwrap()).1
    };
    let (small, large) = (allocations("object_hit", 100), allocations("object_hit", 10_000));
    // Flat: the stored messages streamed (a count or two apart, from the longer statement text of 10,000 rows).
    assert!(large.count.abs_diff(small.count) <= 2, "{small:?} {large:?}");
    let (small, large) = (allocations("delta_hit", 100), allocations("delta_hit", 10_000));
    // Linear: at least one allocation for every row more (a copy of every point, and of its tag).
    assert!(large.count - small.count >= 9_900, "{small:?} {large:?}");
    assert!(large.bytes > 20 * small.bytes, "{small:?} {large:?}");
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
