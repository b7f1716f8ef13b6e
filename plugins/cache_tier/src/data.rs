//! The upstream's raw table, the request window, and a response's rows for comparing answers exactly.

use std::sync::Arc;

use arrow::array::{Array, AsArray, Float64Array, RecordBatch, StringArray, TimestampNanosecondArray};
use arrow::datatypes::{DataType, Field, Float64Type, Schema, TimeUnit, TimestampNanosecondType};

/// The hosts of the seed's dataset: one series each.
pub const HOSTS: [&str; 2] = ["a", "b"];

const MINUTE_NS: i64 = 60_000_000_000;

/// A half-open time range `[start, end)` in nanoseconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First nanosecond inside.
    pub start: i64,
    /// First nanosecond after.
    pub end: i64,
}

impl Window {
    /// Minutes `[first, first + count)`.
    pub fn minutes(first: i64, count: i64) -> Self {
        Window { start: first * MINUTE_NS, end: (first + count) * MINUTE_NS }
    }
    /// Whether `other` lies inside this window.
    pub fn covers(&self, other: Window) -> bool {
        self.start <= other.start && other.end <= self.end
    }
}

/// The value of `host` at `minute`: distinct per point, exact in f64, so a response can be checked exactly.
pub fn value(minute: i64, host: usize) -> f64 {
    minute as f64 * 0.5 + host as f64 * 1_000_000.0 + 0.25
}

/// The upstream's raw points: one row per minute per host for `minutes` minutes from the epoch, schema
/// `time ts[ns], host utf8, v f64`, in time then host order.
pub fn raw_table(minutes: i64) -> RecordBatch {
    let rows = (minutes as usize) * HOSTS.len();
    let mut time = Vec::with_capacity(rows);
    let mut host = Vec::with_capacity(rows);
    let mut v = Vec::with_capacity(rows);
    for minute in 0..minutes {
        for (h, name) in HOSTS.iter().enumerate() {
            time.push(minute * MINUTE_NS);
            host.push(*name);
            v.push(value(minute, h));
        }
    }
    let schema = Schema::new(vec![
        Field::new("time", DataType::Timestamp(TimeUnit::Nanosecond, None), false),
        Field::new("host", DataType::Utf8, false),
        Field::new("v", DataType::Float64, false),
    ]);
    let columns: Vec<Arc<dyn Array>> = vec![
        Arc::new(TimestampNanosecondArray::from(time)),
        Arc::new(StringArray::from(host)),
        Arc::new(Float64Array::from(v)),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).expect("columns match the schema")
}

/// One response row, for comparing answers exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Bucket start, nanoseconds.
    pub time: i64,
    /// Series.
    pub host: String,
    /// Value.
    pub v: f64,
}

/// The rows of a response, in the order it holds them; an error names a column of an unexpected type.
pub fn rows(batches: &[RecordBatch]) -> Result<Vec<Row>, String> {
    let mut out = Vec::new();
    for batch in batches {
        let column = |name: &str| batch.column_by_name(name).ok_or(format!("the response has no `{name}` column"));
        let (time, host, v) = (column("time")?, column("host")?, column("v")?);
        let time = time.as_primitive_opt::<TimestampNanosecondType>().ok_or("`time` is not ts[ns]")?;
        let v = v.as_primitive_opt::<Float64Type>().ok_or("`v` is not f64")?;
        let host_at = |i: usize| match host.data_type() {
            DataType::Utf8 => Ok(host.as_string::<i32>().value(i).to_string()),
            DataType::Utf8View => Ok(host.as_string_view().value(i).to_string()),
            other => Err(format!("`host` is {other}, not a string")),
        };
        for i in 0..batch.num_rows() {
            out.push(Row { time: time.value(i), host: host_at(i)?, v: v.value(i) });
        }
    }
    Ok(out)
}
