//! The conversions as plain Rust: row counts, the trace batch's 27 columns checked whole, sampled fields of the
//! others, and both stages of every signal.

use arrow::array::{Array, AsArray};
use benchhost_plugin_api::testing;
use serde_json::json;

use super::*;
use crate::text::Writing;

#[test]
fn every_signal_and_stage_converts_one_row_per_item_and_checks_a_sampled_row() {
    for signal in ["traces", "logs", "metrics"] {
        for stage in ["decode_and_convert", "convert_only"] {
            // Written the seed's way too: teardown checks the whole batch, so per_row must write the same text.
            for text in ["reused", "per_row"] {
                let params = json!({"signal": signal, "stage": stage, "items": 300, "text": text});
                let report =
                    testing::run::<Ingest>(params, 2).unwrap_or_else(|e| panic!("{signal}/{stage}/{text}: {e}"));
                assert_eq!(report.outcome.counters["rows_out"], 300, "{signal}/{stage}/{text}");
                assert!(report.outcome.counters["input_bytes"] > 300 * 20);
            }
        }
    }
}

#[test]
fn trace_rows_carry_the_seeds_27_columns() {
    let batch = convert::traces(&fixtures::traces(20), Writing::Reused).unwrap();
    assert_eq!((batch.num_rows(), batch.num_columns()), (20, 27));
    let col = |name: &str| batch.column_by_name(name).unwrap().as_string::<i32>().value(13).to_string();
    assert_eq!(col("trace_id"), format!("{:032x}", 1));
    assert_eq!(col("span_id"), format!("{:016x}", 13));
    assert_eq!(col("parent_span_id"), "0000000000000000", "a root's parent as SignalDB writes it");
    assert_eq!(
        col("attributes_json"),
        r#"{"http.method":"GET","http.route":"/api/v1/resource","http.status_code":"200"}"#
    );
    let duration = batch.column_by_name("duration_nano").unwrap().as_primitive::<arrow::datatypes::UInt64Type>();
    assert_eq!(duration.value(13), 500);
    for empty in ["trace_state", "resource_schema_url", "scope_schema_url", "scope_attributes"] {
        assert_eq!(batch.column_by_name(empty).unwrap().null_count(), 20, "{empty}: empty in the fixture, so null");
    }
    assert_eq!(expected::first_difference(&batch, &expected::traces(20).unwrap()), None);
}

#[test]
fn events_links_scope_attributes_and_schema_urls_convert_as_the_seed_stores_them() {
    use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
    use opentelemetry_proto::tonic::trace::v1::span::{Event, Link};
    let attr = |k: &str, v: &str| KeyValue {
        key: k.into(),
        value: Some(AnyValue { value: Some(any_value::Value::StringValue(v.into())) }),
        ..Default::default()
    };
    let mut request = fixtures::traces(2);
    let scope_spans = &mut request.resource_spans[0].scope_spans[0];
    scope_spans.schema_url = "https://opentelemetry.io/schemas/1.21.0".into();
    scope_spans.scope.as_mut().unwrap().attributes = vec![attr("lib.mode", "bench")];
    let span = &mut scope_spans.spans[1];
    span.trace_state = "vendor=1".into();
    span.events = vec![
        Event { name: "retry".into(), time_unix_nano: 7, attributes: vec![attr("n", "1")], ..Default::default() },
        Event { name: "done".into(), time_unix_nano: 9, ..Default::default() },
    ];
    span.links = vec![Link { trace_id: vec![0xab; 16], span_id: vec![0xcd; 8], ..Default::default() }];
    let batch = convert::traces(&request, Writing::Reused).unwrap();
    let text = |name: &str, row: usize| {
        let column = batch.column_by_name(name).unwrap().as_string::<i32>();
        column.is_valid(row).then(|| column.value(row).to_string())
    };
    assert_eq!(text("scope_schema_url", 0).as_deref(), Some("https://opentelemetry.io/schemas/1.21.0"));
    assert_eq!(text("scope_attributes", 0).as_deref(), Some(r#"{"lib.mode":"bench"}"#));
    assert_eq!((text("trace_state", 0), text("trace_state", 1).as_deref()), (None, Some("vendor=1")));
    let events = batch.column_by_name("events").unwrap().as_list::<i32>();
    assert_eq!((events.value(0).len(), events.value(1).len()), (0, 2));
    let second = events.value(1);
    let second = second.as_struct();
    assert_eq!(second.column(0).as_string::<i32>().value(1), "done");
    assert_eq!(second.column(1).as_primitive::<arrow::datatypes::UInt64Type>().value(0), 7);
    assert_eq!(second.column(2).as_string::<i32>().value(0), r#"{"n":"1"}"#);
    let links = batch.column_by_name("links").unwrap().as_list::<i32>().value(1);
    assert_eq!(links.as_struct().column(0).as_string::<i32>().value(0), "ab".repeat(16));
    // The fixture's rules say none of this: the whole-batch check names the first cell that differs.
    let why = expected::first_difference(&batch, &expected::traces(2).unwrap()).unwrap();
    assert!(why.starts_with("row 1, column `events`: `[{name: retry, timestamp_unix_nano: 7"), "{why}");
}

#[test]
fn one_wrong_cell_in_a_trace_batch_is_a_failure_naming_its_row_and_column() {
    let mut rig = Ingest::setup(
        Params { signal: Signal::Traces, stage: Stage::ConvertOnly, items: 100, text: Writing::Reused },
        &Default::default(),
    )
    .unwrap();
    rig.iterate().unwrap();
    let batch = rig.last.take().unwrap();
    let c = batch.schema().index_of("name").unwrap();
    let names = batch.column(c).as_string::<i32>();
    let garbled: arrow::array::StringArray =
        (0..100).map(|i| Some(if i == 37 { "operation-38" } else { names.value(i) })).collect();
    let mut columns = batch.columns().to_vec();
    columns[c] = std::sync::Arc::new(garbled);
    rig.last = Some(RecordBatch::try_new(batch.schema(), columns).unwrap());
    let err = rig.teardown().unwrap_err();
    assert_eq!(format!("{:?}", err.kind), "Verification");
    assert_eq!(
        err.message,
        "the trace batch differs: row 37, column `name`: `operation-38`, where the fixture's rules give `operation-37`"
    );
}

#[test]
fn metrics_are_one_row_each_alternating_gauge_and_monotonic_sum_with_their_points_as_json() {
    let batch = convert::metrics(&fixtures::metrics(4), Writing::Reused).unwrap();
    assert_eq!((batch.num_rows(), batch.num_columns()), (4, 12));
    let kinds: Vec<&str> = batch.column_by_name("metric_type").unwrap().as_string::<i32>().iter().flatten().collect();
    assert_eq!(kinds, ["gauge", "sum", "gauge", "sum"]);
    let monotonic = batch.column_by_name("is_monotonic").unwrap().as_boolean();
    assert!(!monotonic.value(0) && monotonic.value(1));
    let data = batch.column_by_name("data_json").unwrap().as_string::<i32>();
    let point: serde_json::Value = serde_json::from_str(data.value(2)).unwrap();
    assert_eq!(point[0]["value"], 3.0);
    assert!(data.value(2).ends_with(r#""value":3.0}]"#), "a whole double keeps its `.0`, as serde_json writes it");
    assert_eq!(expected::first_difference(&batch, &expected::metrics(4).unwrap()), None);
}

#[test]
fn a_histogram_is_refused_naming_its_metric() {
    use opentelemetry_proto::tonic::metrics::v1::{Histogram, metric};
    let mut request = fixtures::metrics(2);
    let m = &mut request.resource_metrics[0].scope_metrics[0].metrics[1];
    m.data = Some(metric::Data::Histogram(Histogram::default()));
    let why = convert::metrics(&request, Writing::Reused).unwrap_err().to_string();
    assert!(why.contains("metric `sum.metric.1` is a Histogram: only gauges and sums are converted"), "{why}");
}

#[test]
fn log_rows_carry_the_seeds_14_columns_and_a_shifted_batch_is_named() {
    let batch = convert::logs(&fixtures::logs(20), Writing::Reused).unwrap();
    assert_eq!((batch.num_rows(), batch.num_columns()), (20, 14));
    assert_eq!(batch.column_by_name("body").unwrap().as_string::<i32>().value(7), r#""request 7 completed""#);
    assert_eq!(batch.column_by_name("span_id").unwrap().as_binary::<i32>().value(7), 7u64.to_be_bytes());
    assert_eq!(expected::first_difference(&batch, &expected::logs(20).unwrap()), None);
    let mut rig = Ingest::setup(
        Params { signal: Signal::Logs, stage: Stage::ConvertOnly, items: 10, text: Writing::Reused },
        &Default::default(),
    )
    .unwrap();
    rig.iterate().unwrap();
    // A conversion that lost its first row.
    let shifted = rig.last.as_ref().unwrap().slice(1, 9);
    rig.last = Some(shifted);
    assert_eq!(rig.teardown().unwrap_err().message, "the log batch differs: 9 rows, where the request held 10");
}
