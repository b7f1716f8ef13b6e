//! Seed 000's `metrics_gauge` table, as its writer benchmarks write it: the 19-column schema (three
//! string-to-string maps), partitioned by the hour of `timestamp`, declaring the sort order `(timestamp,
//! metric_name, service_name)`; the rows its benchmark generates; and what its append does to a batch before
//! writing it: the JSON attribute columns parsed into maps, nanosecond timestamps cast to microseconds, the group
//! sorted by the declared key. Deterministic: every answer is known before anything runs.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Date32Array, Float64Array, Int32Array, MapArray, RecordBatch, StringArray, StructArray,
    TimestampNanosecondArray, new_null_array,
};
use arrow::buffer::OffsetBuffer;
use arrow::compute::{SortColumn, lexsort_to_indices, take_record_batch};
use arrow::datatypes::{DataType, Field, Float64Type, Int64Type, SchemaRef};
use arrow::error::ArrowError;
use iceberg::spec::{MapType, NestedField, PrimitiveType, Type};

pub use crate::table::traces::Tally;

/// Seed 000's first timestamp, in nanoseconds; its rows are one second apart.
const EPOCH_NS: i64 = 1_700_000_000_000_000_000;

/// The key the table declares, in order.
pub const SORT_KEY: [&str; 3] = ["timestamp", "metric_name", "service_name"];

/// The Iceberg schema: field ids 1..=19, the maps' keys and values 20..=25.
pub fn schema() -> iceberg::Result<iceberg::spec::Schema> {
    let string = || Type::Primitive(PrimitiveType::String);
    let int = || Type::Primitive(PrimitiveType::Int);
    let map = |key: i32| {
        Type::Map(MapType::new(
            NestedField::map_key_element(key, string()).into(),
            NestedField::map_value_element(key + 1, string(), false).into(),
        ))
    };
    let fields = vec![
        NestedField::required(1, "timestamp", Type::Primitive(PrimitiveType::Timestamp)),
        NestedField::optional(2, "start_timestamp", Type::Primitive(PrimitiveType::Timestamp)),
        NestedField::required(3, "service_name", string()),
        NestedField::required(4, "metric_name", string()),
        NestedField::optional(5, "metric_description", string()),
        NestedField::optional(6, "metric_unit", string()),
        NestedField::required(7, "value", Type::Primitive(PrimitiveType::Double)),
        NestedField::optional(8, "flags", int()),
        NestedField::optional(9, "resource_schema_url", string()),
        NestedField::optional(10, "resource_attributes", map(20)),
        NestedField::optional(11, "scope_name", string()),
        NestedField::optional(12, "scope_version", string()),
        NestedField::optional(13, "scope_schema_url", string()),
        NestedField::optional(14, "scope_attributes", map(22)),
        NestedField::optional(15, "scope_dropped_attr_count", int()),
        NestedField::optional(16, "attributes", map(24)),
        NestedField::optional(17, "exemplars", string()),
        NestedField::required(18, "date_day", Type::Primitive(PrimitiveType::Date)),
        NestedField::required(19, "hour", int()),
    ];
    iceberg::spec::Schema::builder().with_schema_id(0).with_fields(fields.into_iter().map(Arc::new)).build()
}

/// The benchmark's input: the same 19 columns as they arrive, attributes as JSON text and times in nanoseconds
/// (seed 000's gauge row, defined once in `seed-schemas`).
pub fn input_schema() -> SchemaRef {
    Arc::new(seed_schemas::metrics::gauge())
}

/// Seed 000's `create_benchmark_data(rows)`: row `i` at 1.7e18 + i s, metric `benchmark.metric.{i % 100}`,
/// value `i * 1.5 + 10`, the same two attribute objects on every row, day 19700, hour `i % 24`.
pub fn rows(rows: usize) -> Result<RecordBatch, ArrowError> {
    let same = |text: &str| Arc::new(StringArray::from_iter_values((0..rows).map(|_| text))) as ArrayRef;
    let schema = input_schema();
    let null = |i: usize| new_null_array(schema.field(i).data_type(), rows);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampNanosecondArray::from_iter_values((0..rows as i64).map(|i| EPOCH_NS + i * 1_000_000_000))),
        null(1),
        same("benchmark-service"),
        Arc::new(StringArray::from_iter_values((0..rows).map(|i| format!("benchmark.metric.{}", i % 100)))),
        same("Benchmark metric for performance testing"),
        same("count"),
        Arc::new(Float64Array::from_iter_values((0..rows).map(|i| i as f64 * 1.5 + 10.0))),
        null(7),
        null(8),
        same(r#"{"service.version":"1.0","host":"benchmark-host"}"#),
        null(10),
        null(11),
        null(12),
        null(13),
        null(14),
        same(r#"{"metric.type":"gauge","benchmark":"true"}"#),
        null(16),
        Arc::new(Date32Array::from_iter_values((0..rows).map(|_| 19_700))),
        Arc::new(Int32Array::from_iter_values((0..rows).map(|i| (i % 24) as i32))),
    ];
    RecordBatch::try_new(schema, columns)
}

/// `batch` (of [`input_schema`]) as the table stores it (`table`: the table's Arrow schema, with field ids):
/// each JSON attribute object parsed into a map (a row that is not an object: a null map), the times cast to
/// microseconds, the rest as it is.
pub fn to_table(batch: &RecordBatch, table: &SchemaRef) -> Result<RecordBatch, ArrowError> {
    let columns = table
        .fields()
        .iter()
        .map(|field| {
            let column = batch
                .column_by_name(field.name())
                .ok_or_else(|| ArrowError::SchemaError(format!("the input has no column `{}`", field.name())))?;
            match field.data_type() {
                DataType::Map(entries, sorted) => json_maps(column.as_string::<i32>(), entries, *sorted),
                target => arrow::compute::cast(column, target),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(table.clone(), columns)
}

/// JSON objects as a map column of `entries` (the target's own entry field, so the batch matches the schema).
fn json_maps(text: &StringArray, entries: &Arc<Field>, sorted: bool) -> Result<ArrayRef, ArrowError> {
    let DataType::Struct(fields) = entries.data_type() else {
        return Err(ArrowError::SchemaError("a map whose entries are not a struct".into()));
    };
    let (mut keys, mut values, mut offsets, mut valid) = (Vec::new(), Vec::new(), vec![0i32], Vec::new());
    for row in 0..text.len() {
        let object = text
            .is_valid(row)
            .then(|| serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text.value(row)).ok())
            .flatten();
        valid.push(object.is_some());
        for (key, value) in object.into_iter().flatten() {
            keys.push(key);
            values.push(match value {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            });
        }
        offsets.push(keys.len() as i32);
    }
    let columns: Vec<ArrayRef> =
        vec![Arc::new(StringArray::from_iter_values(keys)), Arc::new(StringArray::from_iter_values(values))];
    let struct_array = StructArray::try_new(fields.clone(), columns, None)?;
    let nulls = Some(valid.into_iter().collect());
    Ok(Arc::new(MapArray::try_new(entries.clone(), OffsetBuffer::new(offsets.into()), struct_array, nulls, sorted)?))
}

/// `batch` sorted by the declared key ([`SORT_KEY`]), ascending, nulls first: seed 000's `sort_batch_by`.
pub fn sorted(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    let columns = SORT_KEY
        .iter()
        .map(|name| {
            let values = batch.column_by_name(name).ok_or_else(|| ArrowError::SchemaError(format!("no `{name}`")))?;
            Ok(SortColumn { values: values.clone(), options: None })
        })
        .collect::<Result<Vec<_>, ArrowError>>()?;
    let indices = lexsort_to_indices(&columns, None)?;
    take_record_batch(batch, &indices)
}

/// The first row of `batch` (of the table or the input) out of the declared key's order, if any.
pub fn out_of_order(batch: &RecordBatch) -> Option<usize> {
    // Microseconds in the table, nanoseconds in the input: either compares as an integer.
    let ts = arrow::compute::cast(batch.column_by_name("timestamp")?, &DataType::Int64).ok()?;
    let ts = ts.as_primitive_opt::<Int64Type>()?;
    let metric = batch.column_by_name("metric_name")?.as_string_opt::<i32>()?;
    let service = batch.column_by_name("service_name")?.as_string_opt::<i32>()?;
    let key = |i: usize| (ts.value(i), metric.value(i), service.value(i));
    (1..batch.num_rows()).find(|&i| key(i - 1) > key(i))
}

/// The rows of some batches (of the table or the input) and an order-independent checksum over their `value`
/// column.
pub fn tally<'a>(batches: impl IntoIterator<Item = &'a RecordBatch>) -> Tally {
    let mut tally = Tally::default();
    for batch in batches {
        let values = batch.column_by_name("value").and_then(|c| c.as_primitive_opt::<Float64Type>());
        values.into_iter().flatten().for_each(|value| tally.add_row(&value.map(f64::to_bits)));
    }
    tally
}

/// A fixed permutation of `batch`'s rows (a seeded Fisher-Yates): the sort's shuffled input.
pub fn shuffled(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    let mut order: Vec<u32> = (0..batch.num_rows() as u32).collect();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..order.len()).rev() {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        order.swap(i, (state >> 33) as usize % (i + 1));
    }
    take_record_batch(batch, &arrow::array::UInt32Array::from(order))
}
