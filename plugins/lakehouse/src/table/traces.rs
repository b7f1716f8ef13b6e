//! The traces table both rigs use: seed 000's v1 trace shape as an Iceberg schema, and the rows each rig
//! seeds. Everything here is deterministic, so every answer a query must give is known before it runs.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{Int32Type, Int64Type, SchemaRef, TimestampMicrosecondType};
use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};

/// 2023-11-14T22:13:20Z, in microseconds: seed 000's 1.7e18 ns.
pub const EPOCH_US: i64 = 1_700_000_000_000_000;
/// One hour in microseconds.
pub const HOUR_US: i64 = 3_600_000_000;
/// Seed 000's canonical sort key of a traces table (`TableSchema::sort_key_columns`): what its compactor sorts
/// a rewrite by when the table declares no order.
pub const SORT_KEY: [&str; 2] = ["timestamp", "trace_id"];

/// The Iceberg schema: trace_id .. attributes_json, with field ids 1..=9.
pub fn schema() -> iceberg::Result<Schema> {
    let string = || Type::Primitive(PrimitiveType::String);
    Schema::builder()
        .with_schema_id(0)
        .with_fields(vec![
            NestedField::required(1, "trace_id", string()).into(),
            NestedField::required(2, "span_id", string()).into(),
            NestedField::optional(3, "parent_span_id", string()).into(),
            NestedField::required(4, "name", string()).into(),
            NestedField::required(5, "service_name", string()).into(),
            NestedField::required(6, "timestamp", Type::Primitive(PrimitiveType::Timestamp)).into(),
            NestedField::required(7, "duration_nanos", Type::Primitive(PrimitiveType::Long)).into(),
            NestedField::required(8, "status_code", Type::Primitive(PrimitiveType::Int)).into(),
            NestedField::optional(9, "attributes_json", string()).into(),
        ])
        .build()
}

/// One span, as the rigs generate it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Span {
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: Option<String>,
    pub name: String,
    pub service_name: String,
    pub timestamp_us: i64,
    pub duration_nanos: i64,
    pub status_code: i32,
    pub attributes_json: Option<String>,
}

/// Seed 000's compaction rows: file `f` of a table, `rows` spans.
pub fn compaction_file(f: usize, rows: usize) -> Vec<Span> {
    (0..rows)
        .map(|i| Span {
            trace_id: format!("trace-p0-f{f}-{i}"),
            span_id: format!("{:016x}", f * rows + i),
            parent_span_id: (i % 10 != 0).then(|| format!("{:016x}", f * rows + i - i % 10)),
            name: format!("operation-{}", i % 10),
            service_name: format!("test-service-{}", i % 3),
            timestamp_us: EPOCH_US + ((f * rows + i) as i64) * 1_000,
            duration_nanos: 1_000_000 + i as i64 * 100,
            status_code: 1,
            attributes_json: Some(r#"{"http.method":"GET","http.route":"/api/v1/resource"}"#.to_string()),
        })
        .collect()
}

/// A span with the querier's defaults; ids and time vary.
pub fn span(trace_id: String, span_id: String, timestamp_us: i64) -> Span {
    Span {
        trace_id,
        span_id,
        parent_span_id: None,
        name: "operation".to_string(),
        service_name: "bench-service".to_string(),
        timestamp_us,
        duration_nanos: 500,
        status_code: 1,
        attributes_json: None,
    }
}

/// The spans as one batch of `schema` (the Arrow schema of [`schema`], with Iceberg field ids).
pub fn to_batch(schema: &SchemaRef, spans: &[Span]) -> Result<RecordBatch, arrow::error::ArrowError> {
    let strings = |f: fn(&Span) -> &str| Arc::new(StringArray::from_iter_values(spans.iter().map(f))) as ArrayRef;
    let optional = |f: fn(&Span) -> Option<&str>| Arc::new(spans.iter().map(f).collect::<StringArray>()) as ArrayRef;
    let columns: Vec<ArrayRef> = vec![
        strings(|s| &s.trace_id),
        strings(|s| &s.span_id),
        optional(|s| s.parent_span_id.as_deref()),
        strings(|s| &s.name),
        strings(|s| &s.service_name),
        Arc::new(TimestampMicrosecondArray::from_iter_values(spans.iter().map(|s| s.timestamp_us))),
        Arc::new(Int64Array::from_iter_values(spans.iter().map(|s| s.duration_nanos))),
        Arc::new(Int32Array::from_iter_values(spans.iter().map(|s| s.status_code))),
        optional(|s| s.attributes_json.as_deref()),
    ];
    RecordBatch::try_new(schema.clone(), columns)
}

/// The spans in `batch`, read by column name so any projection order works. Columns the batch lacks are
/// left at their defaults.
pub fn from_batch(batch: &RecordBatch) -> Vec<Span> {
    let text = |name: &str, row: usize| -> Option<String> {
        let column = batch.column_by_name(name)?;
        let strings = column.as_string_opt::<i32>()?;
        strings.is_valid(row).then(|| strings.value(row).to_string())
    };
    let int64 = |name: &str, row: usize| -> Option<i64> {
        let column = batch.column_by_name(name)?;
        if let Some(ts) = column.as_primitive_opt::<TimestampMicrosecondType>() {
            return Some(ts.value(row));
        }
        column.as_primitive_opt::<Int64Type>().map(|v| v.value(row))
    };
    let int32 =
        |name: &str, row: usize| batch.column_by_name(name)?.as_primitive_opt::<Int32Type>().map(|v| v.value(row));
    (0..batch.num_rows())
        .map(|row| Span {
            trace_id: text("trace_id", row).unwrap_or_default(),
            span_id: text("span_id", row).unwrap_or_default(),
            parent_span_id: text("parent_span_id", row),
            name: text("name", row).unwrap_or_default(),
            service_name: text("service_name", row).unwrap_or_default(),
            timestamp_us: int64("timestamp", row).unwrap_or_default(),
            duration_nanos: int64("duration_nanos", row).unwrap_or_default(),
            status_code: int32("status_code", row).unwrap_or_default(),
            attributes_json: text("attributes_json", row),
        })
        .collect()
}

/// Row count and an order-independent checksum (the wrapping sum of each row's hash): equal before and after
/// a rewrite exactly when the same rows came out, whatever their order or file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub rows: u64,
    pub checksum: u64,
}

impl Tally {
    /// Adds the rows of `batch`.
    pub fn add(&mut self, batch: &RecordBatch) {
        for span in from_batch(batch) {
            self.add_row(&span);
        }
    }

    /// Adds one row, by its hash (a row of another table: what identifies it).
    pub fn add_row(&mut self, row: &impl Hash) {
        // DefaultHasher::new() has fixed keys: the same row hashes the same in every process.
        let mut hasher = DefaultHasher::new();
        row.hash(&mut hasher);
        self.checksum = self.checksum.wrapping_add(hasher.finish());
        self.rows += 1;
    }

    /// The tally of some batches.
    pub fn of(batches: &[RecordBatch]) -> Tally {
        let mut tally = Tally::default();
        batches.iter().for_each(|b| tally.add(b));
        tally
    }
}

/// The first row of `batches`, read in order, that comes before the row above it in [`SORT_KEY`] order, and that
/// row's position counted from 0 across the batches.
pub fn first_out_of_key_order(batches: &[RecordBatch]) -> Option<usize> {
    let keys = batches.iter().flat_map(from_batch).map(|span| (span.timestamp_us, span.trace_id));
    let keys: Vec<(i64, String)> = keys.collect();
    keys.windows(2).position(|pair| pair[1] < pair[0]).map(|above| above + 1)
}
