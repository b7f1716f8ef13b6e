//! The batches seed 000's fixtures (`sample_trace_request(n)` and friends, `../shared/rig-specs.md`) convert to,
//! built straight from the fixtures' generating rules, not by converting a request: what `ingest`'s conversion
//! must give, and the batch `wal` round-trips (the seed's WAL bench writes the converted trace fixture).

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryArray, BooleanArray, Int32Array, Int64Array, ListArray, RecordBatch, StringArray, UInt32Array,
    UInt64Array, new_empty_array,
};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::DataType;
use arrow::error::ArrowError;

use crate::traces::NO_PARENT;

const START_NS: u64 = 1_700_000_000_000_000_000;
const ATTRIBUTES: &str = r#"{"http.method":"GET","http.route":"/api/v1/resource","http.status_code":"200"}"#;
const RESOURCE: &str = r#"{"service.name":"bench-service","service.version":"1.0.0"}"#;

/// The trace batch of `items` spans: span `i` of trace `i / 10`, `operation-{i % 50}`, 500 ns from
/// `1.7e18 + 1,000 i`, a root (no parent), kind Server, status Ok, three http attributes, no event or link.
pub fn traces(items: usize) -> Result<RecordBatch, ArrowError> {
    let schema = Arc::new(crate::traces::schema());
    let same = |text: &str| Arc::new(StringArray::from(vec![text; items])) as ArrayRef;
    let nulls = || Arc::new(StringArray::from(vec![None::<&str>; items])) as ArrayRef;
    let start = |i: usize| START_NS + i as u64 * 1_000;
    let empty_lists = |c: usize| -> Result<ArrayRef, ArrowError> {
        let DataType::List(item) = schema.field(c).data_type() else { unreachable!("events and links are lists") };
        let values = new_empty_array(item.data_type());
        Ok(Arc::new(ListArray::try_new(item.clone(), OffsetBuffer::new_zeroed(items), values, None)?))
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values((0..items).map(|i| format!("{:032x}", i / 10)))),
        Arc::new(StringArray::from_iter_values((0..items).map(|i| format!("{i:016x}")))),
        same(NO_PARENT),
        Arc::new(StringArray::from_iter_values((0..items).map(|i| format!("operation-{}", i % 50)))),
        same("bench-service"),
        Arc::new(UInt64Array::from_iter_values((0..items).map(start))),
        Arc::new(UInt64Array::from_iter_values((0..items).map(|i| start(i) + 500))),
        Arc::new(UInt64Array::from(vec![500; items])),
        same("Server"),
        same("Ok"),
        same(""),
        Arc::new(BooleanArray::from(vec![true; items])),
        same(ATTRIBUTES),
        same(RESOURCE),
        empty_lists(14)?,
        empty_lists(15)?,
        nulls(),
        nulls(),
        same("bench-lib"),
        same("1.0.0"),
        nulls(),
        nulls(),
        Arc::new(Int32Array::from(vec![2; items])),
        Arc::new(Int32Array::from(vec![1; items])),
        Arc::new(Int64Array::from(vec![0; items])),
        Arc::new(Int64Array::from(vec![0; items])),
        Arc::new(Int64Array::from(vec![0; items])),
    ];
    RecordBatch::try_new(schema, columns)
}

/// The log batch of `items` INFO records: record `i` at `1.7e18 + 1,000 i`, observed 5 ns later, body the JSON
/// string `"request {i % 50} completed"`, the spans' http attributes and ids (trace `i / 10`, span `i`, as bytes).
pub fn logs(items: usize) -> Result<RecordBatch, ArrowError> {
    let same = |text: &str| Arc::new(StringArray::from(vec![text; items])) as ArrayRef;
    let time = |i: usize| START_NS + i as u64 * 1_000;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values((0..items).map(time))),
        Arc::new(UInt64Array::from_iter_values((0..items).map(|i| time(i) + 5))),
        Arc::new(Int32Array::from(vec![9; items])),
        same("INFO"),
        Arc::new(StringArray::from_iter_values((0..items).map(|i| format!("\"request {} completed\"", i % 50)))),
        Arc::new(BinaryArray::from_iter_values((0..items).map(|i| (i as u128 / 10).to_be_bytes()))),
        Arc::new(BinaryArray::from_iter_values((0..items).map(|i| (i as u64).to_be_bytes()))),
        Arc::new(UInt32Array::from(vec![0; items])),
        same(ATTRIBUTES),
        same(RESOURCE),
        same(r#"{"name":"bench-lib","version":"1.0.0"}"#),
        Arc::new(UInt32Array::from(vec![0; items])),
        same("bench-service"),
        same(""),
    ];
    RecordBatch::try_new(Arc::new(crate::logs::schema()), columns)
}

/// The metric batch of `items` one-point metrics: metric `i` a gauge `gauge.metric.{i % 50}` (even `i`) or a
/// cumulative monotonic sum `sum.metric.{i % 50}`, its point at `1.7e18 + 1,000 i` from `1.7e18`, value `1.5 i`,
/// attributes `host=node-1`, `region=us-east-1`. The points' JSON is written by `serde_json`, as SignalDB's is.
pub fn metrics(items: usize) -> Result<RecordBatch, ArrowError> {
    let same = |text: &str| Arc::new(StringArray::from(vec![text; items])) as ArrayRef;
    let time = |i: usize| START_NS + i as u64 * 1_000;
    let gauge = |i: usize| i.is_multiple_of(2);
    let point = |i: usize| {
        let value = serde_json::to_string(&(i as f64 * 1.5)).expect("a finite double");
        format!(
            r#"[{{"attributes":{{"host":"node-1","region":"us-east-1"}},"flags":0,"start_time_unix_nano":{START_NS},"time_unix_nano":{},"value":{value}}}]"#,
            time(i)
        )
    };
    let kind = |i: usize| if gauge(i) { "gauge" } else { "sum" };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values((0..items).map(|i| format!("{}.metric.{}", kind(i), i % 50)))),
        same("bench metric"),
        same("1"),
        Arc::new(UInt64Array::from(vec![START_NS; items])),
        Arc::new(UInt64Array::from_iter_values((0..items).map(time))),
        same("{}"),
        same(RESOURCE),
        same(r#"{"name":"bench-lib","version":"1.0.0"}"#),
        Arc::new(StringArray::from_iter_values((0..items).map(kind))),
        Arc::new(StringArray::from_iter_values((0..items).map(point))),
        Arc::new(Int32Array::from_iter_values((0..items).map(|i| if gauge(i) { 0 } else { 2 }))),
        Arc::new(BooleanArray::from_iter((0..items).map(|i| Some(!gauge(i))))),
    ];
    RecordBatch::try_new(Arc::new(crate::metrics::batch()), columns)
}
