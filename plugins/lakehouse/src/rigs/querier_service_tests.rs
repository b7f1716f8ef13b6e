//! The querier service rig as plain Rust: every arm's answer is exact (checked against the tables' generators
//! before timing and at teardown), the hint prunes what it should, and a ticket the service cannot route is
//! an `InvalidArgument` naming why.

use benchhost_plugin_api::testing;
use serde_json::json;

use super::*;

fn run(ticket: &str) -> Outcome {
    let params = json!({ "ticket": ticket, "workers": 2 });
    testing::run::<QuerierServiceRig>(params.clone(), 3).unwrap_or_else(|e| panic!("{params}: {e}")).outcome
}

#[test]
fn every_arm_answers_exactly_through_do_get() {
    // regression (issue 81): tickets that look up no trace recorded `trace_rows_missed = 0`: absent, not 0.
    for (ticket, rows, missed) in [
        ("find_trace", 3, Some(0)),
        ("find_trace_hinted", 1, Some(2)),
        ("search_recent", 2, None),
        ("promql_range", 244, None),
        ("logql_line_filter", 100, None),
    ] {
        let outcome = run(ticket);
        let c = &outcome.counters;
        assert_eq!((c["rows"], c["rows_out"]), (rows, rows), "{ticket}: {c:?}");
        assert_eq!(c.get("trace_rows_missed").copied(), missed, "{ticket}: {c:?}");
        assert!(c["manifests_read"] > 0, "{ticket}: planning reads the manifests on every request: {c:?}");
        assert!(c["files_reached"] > 0, "{ticket}: {c:?}");
        assert_eq!(c["requests"], 3, "{ticket}");
    }
}

#[test]
fn the_hint_skips_the_hours_outside_it_and_the_bloom_filters_the_files_without_the_trace() {
    let (plain, hinted) = (run("find_trace").counters, run("find_trace_hinted").counters);
    // Planning skips every manifest outside the hint's two hours: one of the target's three writes remains.
    assert!(hinted["manifests_read"] < plain["manifests_read"], "{plain:?} {hinted:?}");
    assert!(hinted["files_reached"] < plain["files_reached"], "{plain:?} {hinted:?}");
    // Without a hint every file is reached, and the bloom filters leave little of them to scan.
    assert!(hinted["bytes_scanned"] < plain["bytes_scanned"], "{plain:?} {hinted:?}");
}

#[test]
fn a_ticket_that_routes_nowhere_is_an_invalid_argument_from_do_get() {
    let scratch = tempfile::tempdir().unwrap();
    let ctx = SetupContext { scratch_dir: scratch.path().to_path_buf(), ..SetupContext::default() };
    let runtime = runtime::new(0, &ctx).unwrap();
    let config = Config::querier(1);
    let opened = tables::open(&config, &ctx, &runtime).unwrap();
    let service = QuerierService::new(opened.session);
    let ask = |bytes: &[u8]| {
        let ticket = arrow_flight::Ticket::new(bytes.to_vec());
        runtime.block_on(service.do_get(tonic::Request::new(ticket))).err().expect("refused")
    };
    let unrouted = ask(br#"{"sql": {"query": "select 1"}}"#);
    assert_eq!(unrouted.code(), tonic::Code::InvalidArgument);
    assert!(unrouted.message().contains("routes to no engine"), "{}", unrouted.message());
    let regex = ask(br#"{"logql": {"query": "{service_name=~\"a\"}", "start_us": 0, "end_us": 1, "limit": 1}}"#);
    assert_eq!(regex.code(), tonic::Code::InvalidArgument);
    assert!(regex.message().contains("`=~` is not supported"), "{}", regex.message());
    let get_schema = runtime.block_on(service.get_schema(tonic::Request::new(Default::default()))).unwrap_err();
    assert_eq!(get_schema.code(), tonic::Code::Unimplemented);
}

#[test]
fn a_dropped_row_or_a_wrong_average_is_a_failure_naming_the_ticket() {
    use arrow::array::{ArrayRef, AsArray, Float64Array, RecordBatch};
    use arrow::datatypes::Float64Type;
    let scratch = tempfile::tempdir().unwrap();
    let ctx = SetupContext { scratch_dir: scratch.path().to_path_buf(), ..SetupContext::default() };
    let rig = QuerierServiceRig::setup(Params { ticket: Arm::PromqlRange, workers: 0 }, &ctx).unwrap();
    let answer = arrow_flight::utils::flight_data_to_batches(&rig.request().unwrap()).unwrap();
    let batch = arrow::compute::concat_batches(&answer[0].schema(), &answer).unwrap();
    let encoded = |batch: RecordBatch| arrow_flight::utils::batches_to_flight_data(&batch.schema(), vec![batch]);
    let refused = |batch: RecordBatch| {
        let e = rig.check(&encoded(batch).unwrap(), "a test").unwrap_err();
        assert_eq!(format!("{:?}", e.kind), "Verification");
        assert!(e.message.starts_with(r#"a test: ticket {"promql":{"query":"avg by (service_name)"#), "{}", e.message);
        e.message
    };
    assert_eq!(rig.check(&encoded(batch.clone()).unwrap(), "a test").unwrap().rows, 244);
    assert!(refused(batch.slice(0, 243)).contains("row 243 is None"));
    let values = batch.column_by_name("value").unwrap().as_primitive::<Float64Type>();
    let nudged: Float64Array =
        values.iter().enumerate().map(|(i, v)| v.map(|v| if i == 5 { v + 0.5 } else { v })).collect();
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    columns[batch.schema().index_of("value").unwrap()] = std::sync::Arc::new(nudged);
    assert!(refused(RecordBatch::try_new(batch.schema(), columns).unwrap()).contains("row 5 is Some("));
}
