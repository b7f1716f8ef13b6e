//! The conversions as plain Rust: row counts, sampled fields, and both stages of every signal.

use benchhost_plugin_api::testing;
use serde_json::json;

use super::*;

#[test]
fn every_signal_and_stage_converts_one_row_per_item_and_checks_a_sampled_row() {
    for signal in ["traces", "logs", "metrics"] {
        for stage in ["decode_and_convert", "convert_only"] {
            let report = testing::run::<Ingest>(json!({"signal": signal, "stage": stage, "items": 300}), 2)
                .unwrap_or_else(|e| panic!("{signal}/{stage}: {e}"));
            assert_eq!(report.outcome.counters["rows_out"], 300, "{signal}/{stage}");
            assert!(report.outcome.counters["input_bytes"] > 300 * 20);
        }
    }
}

#[test]
fn trace_rows_carry_the_span_fields() {
    let batch = convert::traces(&fixtures::traces(20)).unwrap();
    assert_eq!(batch.num_rows(), 20);
    let col = |name: &str| batch.column_by_name(name).unwrap().as_string::<i32>().value(13).to_string();
    assert_eq!(col("trace_id"), format!("{:032x}", 1));
    assert_eq!(col("span_id"), format!("{:016x}", 13));
    assert_eq!(col("service_name"), "bench-service");
    assert_eq!(col("span_kind"), "Server");
    assert_eq!(col("status_code"), "Ok");
    assert_eq!(
        col("attributes_json"),
        r#"{"http.method":"GET","http.route":"/api/v1/resource","http.status_code":200}"#
    );
    assert_eq!(col("resource_json"), r#"{"service.name":"bench-service","service.version":"1.0.0"}"#);
    let duration =
        batch.column_by_name("duration_nanos").unwrap().as_primitive::<arrow::datatypes::Int64Type>().value(13);
    assert_eq!(duration, 500);
    assert_eq!(batch.column_by_name("parent_span_id").unwrap().null_count(), 20, "the fixture's spans are roots");
}

#[test]
fn metrics_alternate_gauge_and_monotonic_sum() {
    let batch = convert::metrics(&fixtures::metrics(4)).unwrap();
    let kinds: Vec<&str> = batch.column_by_name("metric_kind").unwrap().as_string::<i32>().iter().flatten().collect();
    assert_eq!(kinds, ["gauge", "sum", "gauge", "sum"]);
    let monotonic = batch.column_by_name("is_monotonic").unwrap().as_boolean();
    assert!(monotonic.is_null(0) && monotonic.value(1));
}

#[test]
fn a_wrong_row_is_a_verification_failure() {
    let mut rig =
        Ingest::setup(Params { signal: Signal::Logs, stage: Stage::ConvertOnly, items: 10 }, &Default::default())
            .unwrap();
    rig.iterate().unwrap();
    // A conversion that lost its first row: row 5 now holds item 6.
    let shifted = rig.last.as_ref().unwrap().slice(1, 9);
    rig.last = Some(shifted);
    let err = rig.teardown().unwrap_err();
    assert_eq!(err.message, "row 5 holds `request 6 completed`, its item held `request 5 completed`");
}
