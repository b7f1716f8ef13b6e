//! Metrics, twice, as SignalDB has them:
//! - the metric batch its OTLP conversion produces ([`batch`]): one row per *metric*, its points as a JSON array
//!   (`data_json`), its first point's times beside them; what seed 000's `acceptor_ingest_metrics` times;
//! - the rows its writer stores: one row per data point, a gauge's 19 columns ([`gauge`]) and a sum's 21 ([`sum`],
//!   the gauge's with the sum's temporality and monotonicity after `flags`). Times are nanoseconds; attribute
//!   maps and exemplars are JSON text; `date_day` and `hour` partition the row by its time.

use arrow::datatypes::{DataType, Field, Schema, TimeUnit};

/// The metric batch's 12 columns, in order.
pub fn batch() -> Schema {
    let text = |name: &str, nullable: bool| Field::new(name, DataType::Utf8, nullable);
    Schema::new(vec![
        text("name", false),
        text("description", true),
        text("unit", true),
        Field::new("start_time_unix_nano", DataType::UInt64, true),
        Field::new("time_unix_nano", DataType::UInt64, false),
        text("attributes_json", true),
        text("resource_json", true),
        text("scope_json", true),
        text("metric_type", false),
        text("data_json", false),
        Field::new("aggregation_temporality", DataType::Int32, true),
        Field::new("is_monotonic", DataType::Boolean, true),
    ])
}

/// A gauge point's 19 columns, in order.
pub fn gauge() -> Schema {
    Schema::new(columns(false))
}

/// A sum point's 21 columns, in order.
pub fn sum() -> Schema {
    Schema::new(columns(true))
}

fn columns(sum: bool) -> Vec<Field> {
    let text = |name: &str, nullable: bool| Field::new(name, DataType::Utf8, nullable);
    let nanos = DataType::Timestamp(TimeUnit::Nanosecond, None);
    let mut fields = vec![
        Field::new("timestamp", nanos.clone(), false),
        Field::new("start_timestamp", nanos, true),
        text("service_name", false),
        text("metric_name", false),
        text("metric_description", true),
        text("metric_unit", true),
        Field::new("value", DataType::Float64, false),
        Field::new("flags", DataType::Int32, true),
    ];
    if sum {
        fields.push(Field::new("aggregation_temporality", DataType::Int32, false));
        fields.push(Field::new("is_monotonic", DataType::Boolean, false));
    }
    fields.extend([
        text("resource_schema_url", true),
        text("resource_attributes", true),
        text("scope_name", true),
        text("scope_version", true),
        text("scope_schema_url", true),
        text("scope_attributes", true),
        Field::new("scope_dropped_attr_count", DataType::Int32, true),
        text("attributes", true),
        text("exemplars", true),
        Field::new("date_day", DataType::Date32, false),
        Field::new("hour", DataType::Int32, false),
    ]);
    fields
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_sum_is_a_gauge_with_its_temporality_and_monotonicity_after_flags() {
        let (gauge, sum) = (super::gauge(), super::sum());
        assert_eq!((gauge.fields().len(), sum.fields().len()), (19, 21));
        assert_eq!(sum.index_of("aggregation_temporality").unwrap(), gauge.index_of("flags").unwrap() + 1);
        let names = |s: &arrow::datatypes::Schema| s.fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>();
        let mut without: Vec<String> = names(&sum);
        without.retain(|n| n != "aggregation_temporality" && n != "is_monotonic");
        assert_eq!(without, names(&gauge));
    }
}
