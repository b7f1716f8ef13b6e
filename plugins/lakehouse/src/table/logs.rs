//! The querier service's logs table: seed 000's log records (INFO, body `request {i % 50} completed`), 20,000 of
//! them over two hours from [`DAY0_US`], one every 360 ms, round-robin over four services, partitioned by the hour
//! of `timestamp` and appended one hour at a time, as an ingester flushes. Deterministic: the answer to any line
//! filter is a scan of [`lines`].
//!
//! The columns are those the service reads and the seed's log record carries beside them (severity, trace and
//! span ids, attributes as JSON); issue 66 widens the seed's schemas to the whole, in one module.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int32Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use benchhost_plugin_api::RigError;
use iceberg::spec::{Literal, NestedField, PartitionSpec, PrimitiveType, Schema, Transform, Type};
use iceberg::table::Table;
use iceberg::transaction::{ApplyTransactionAction, Transaction};
use iceberg::{Catalog, TableCreation};
use parquet::file::properties::WriterProperties;

use crate::table::corpus::DAY0_US;
use crate::table::traces::HOUR_US;
use crate::table::warehouse::{self, Warehouse};

/// Lines in the table, the time between them, and the services they come from.
pub const LINES: usize = 20_000;
const STEP_US: i64 = 360_000;
pub const SERVICES: usize = 4;

/// One log line as generated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub timestamp_us: i64,
    pub service_name: String,
    pub body: String,
}

/// The table's name.
pub const NAME: &str = "logs";

/// The Iceberg schema, field ids 1..=8.
pub fn schema() -> iceberg::Result<Schema> {
    let string = || Type::Primitive(PrimitiveType::String);
    Schema::builder()
        .with_schema_id(0)
        .with_fields(vec![
            NestedField::required(1, "timestamp", Type::Primitive(PrimitiveType::Timestamp)).into(),
            NestedField::required(2, "service_name", string()).into(),
            NestedField::required(3, "severity_text", string()).into(),
            NestedField::required(4, "severity_number", Type::Primitive(PrimitiveType::Int)).into(),
            NestedField::required(5, "body", string()).into(),
            NestedField::optional(6, "trace_id", string()).into(),
            NestedField::optional(7, "span_id", string()).into(),
            NestedField::optional(8, "attributes_json", string()).into(),
        ])
        .build()
}

/// Every line, in time order: line `i` at `DAY0_US + i * 360 ms`, from `service-{i % 4}`.
pub fn lines() -> Vec<LogLine> {
    (0..LINES)
        .map(|i| LogLine {
            timestamp_us: DAY0_US + i as i64 * STEP_US,
            service_name: format!("service-{}", i % SERVICES),
            body: format!("request {} completed", i % 50),
        })
        .collect()
}

/// The lines as one batch of the table's Arrow schema.
fn to_batch(schema: &arrow::datatypes::SchemaRef, lines: &[LogLine]) -> Result<RecordBatch, RigError> {
    let n = lines.len();
    let same = |text: &str| Arc::new(StringArray::from_iter_values((0..n).map(|_| text))) as ArrayRef;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampMicrosecondArray::from_iter_values(lines.iter().map(|l| l.timestamp_us))),
        Arc::new(StringArray::from_iter_values(lines.iter().map(|l| l.service_name.as_str()))),
        same("INFO"),
        Arc::new(Int32Array::from_iter_values((0..n).map(|_| 9))),
        Arc::new(StringArray::from_iter_values(lines.iter().map(|l| l.body.as_str()))),
        Arc::new(StringArray::from(vec![None::<&str>; n])),
        Arc::new(StringArray::from(vec![None::<&str>; n])),
        same(r#"{"http.method":"GET"}"#),
    ];
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}

/// Creates the table in `warehouse` and appends [`lines`], one file and one snapshot per hour.
pub async fn seed(warehouse: &Warehouse) -> Result<Table, RigError> {
    let schema = schema()?;
    let spec = PartitionSpec::builder(schema.clone())
        .add_partition_field("timestamp", "timestamp_hour", Transform::Hour)?
        .build()?;
    let creation = TableCreation::builder().name(NAME.to_string()).schema(schema).partition_spec(spec).build();
    let mut table = warehouse.catalog.create_table(&warehouse.namespace, creation).await?;
    let all = lines();
    let arrow_schema = warehouse::arrow_schema(&table)?;
    for run in all.chunk_by(|a, b| a.timestamp_us.div_euclid(HOUR_US) == b.timestamp_us.div_euclid(HOUR_US)) {
        let hour = run[0].timestamp_us.div_euclid(HOUR_US) as i32;
        let batch = to_batch(&arrow_schema, run)?;
        let properties = WriterProperties::builder().build();
        let files =
            warehouse::write_partition(&table, batch, Some(Literal::int(hour)), properties, &format!("logs-h{hour}"))
                .await?;
        let tx = Transaction::new(&table);
        table = tx.fast_append().add_data_files(files).apply(tx)?.commit(warehouse.catalog.as_ref()).await?;
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_cover_two_hours_in_time_order_round_robin_over_the_services() {
        let all = lines();
        assert_eq!(all.len(), LINES);
        assert!(all.windows(2).all(|w| w[0].timestamp_us < w[1].timestamp_us));
        let hours: std::collections::BTreeSet<i64> = all.iter().map(|l| l.timestamp_us.div_euclid(HOUR_US)).collect();
        assert_eq!(hours.len(), 2);
        assert_eq!(all.iter().filter(|l| l.service_name == "service-1").count(), LINES / SERVICES);
        assert_eq!(all[67].body, "request 17 completed");
    }
}
