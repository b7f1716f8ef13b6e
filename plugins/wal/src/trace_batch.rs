//! A trace batch shaped like SignalDB's (seed 000): the columns its OTLP → Arrow conversion produces, filled
//! the way `sample_trace_request(n)` fills its spans.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Int32Array, Int64Array, StringArray, TimestampNanosecondArray, UInt32Array,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;

const SPANS_PER_TRACE: usize = 10;
const START_NS: i64 = 1_700_000_000_000_000_000;
const SPAN_NS: i64 = 500;
const ATTRIBUTES: &str = r#"{"http.method":"GET","http.route":"/api/v1/resource","http.status_code":200}"#;
const RESOURCE: &str = r#"{"service.name":"bench-service","service.version":"1.0.0"}"#;

/// The trace schema: one row per span.
pub fn schema() -> Schema {
    let text = |name: &str, nullable: bool| Field::new(name, DataType::Utf8, nullable);
    let ts = |name: &str| Field::new(name, DataType::Timestamp(TimeUnit::Nanosecond, None), false);
    Schema::new(vec![
        text("trace_id", false),
        text("span_id", false),
        text("parent_span_id", true),
        text("name", false),
        text("service_name", false),
        ts("start_time"),
        ts("end_time"),
        Field::new("duration_nanos", DataType::Int64, false),
        text("span_kind", false),
        text("status_code", false),
        text("status_message", false),
        Field::new("is_root", DataType::Boolean, false),
        text("attributes_json", false),
        text("resource_json", false),
        text("events_json", false),
        text("links_json", false),
        text("trace_state", false),
        text("resource_schema_url", false),
        text("scope_schema_url", false),
        text("scope_name", false),
        text("scope_version", false),
        text("scope_attributes_json", false),
        Field::new("span_kind_number", DataType::Int32, false),
        Field::new("status_code_number", DataType::Int32, false),
        Field::new("dropped_attributes_count", DataType::UInt32, false),
        Field::new("dropped_events_count", DataType::UInt32, false),
        Field::new("dropped_links_count", DataType::UInt32, false),
    ])
}

/// `rows` server spans of `bench-service`, about ten per trace; the first span of each trace is its root.
pub fn build(rows: usize) -> Result<RecordBatch, ArrowError> {
    let span_id = |i: usize| format!("{i:016x}");
    let repeat = |s: &str| -> ArrayRef { Arc::new(StringArray::from(vec![s; rows])) };
    let start: Vec<i64> = (0..rows).map(|i| START_NS + i as i64 * 1000).collect();
    let root = |i: usize| i.is_multiple_of(SPANS_PER_TRACE);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values((0..rows).map(|i| format!("{:032x}", i / SPANS_PER_TRACE)))),
        Arc::new(StringArray::from_iter_values((0..rows).map(span_id))),
        Arc::new(StringArray::from_iter((0..rows).map(|i| (!root(i)).then(|| span_id(i - i % SPANS_PER_TRACE))))),
        Arc::new(StringArray::from_iter_values((0..rows).map(|i| format!("operation-{}", i % 50)))),
        repeat("bench-service"),
        Arc::new(TimestampNanosecondArray::from(start.clone())),
        Arc::new(TimestampNanosecondArray::from_iter_values(start.iter().map(|s| s + SPAN_NS))),
        Arc::new(Int64Array::from(vec![SPAN_NS; rows])),
        repeat("Server"),
        repeat("Ok"),
        repeat(""),
        Arc::new(BooleanArray::from_iter((0..rows).map(|i| Some(root(i))))),
        repeat(ATTRIBUTES),
        repeat(RESOURCE),
        repeat("[]"),
        repeat("[]"),
        repeat(""),
        repeat(""),
        repeat(""),
        repeat("bench-lib"),
        repeat("1.0.0"),
        repeat("{}"),
        Arc::new(Int32Array::from(vec![2; rows])),
        Arc::new(Int32Array::from(vec![1; rows])),
        Arc::new(UInt32Array::from(vec![0; rows])),
        Arc::new(UInt32Array::from(vec![0; rows])),
        Arc::new(UInt32Array::from(vec![0; rows])),
    ];
    RecordBatch::try_new(Arc::new(schema()), columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::AsArray;

    #[test]
    fn batch_has_the_seed_shape() {
        let batch = build(1000).unwrap();
        assert_eq!(batch.num_rows(), 1000);
        assert_eq!(batch.num_columns(), 27);
        let trace_ids = batch.column(0).as_string::<i32>();
        assert_eq!(trace_ids.value(999), format!("{:032x}", 99));
        let roots = batch.column(11).as_boolean();
        assert_eq!(roots.true_count(), 100, "one root per ten spans");
        assert_eq!(batch.column(2).null_count(), 100, "roots have no parent");
    }
}
