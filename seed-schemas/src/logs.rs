//! The log batch: one row per log record, 14 columns. The body is the JSON of the record's value (a string body
//! is a JSON string, quotes and all); the trace and span ids are their raw bytes; the scope is JSON
//! (`{"name","version"}`, and `"attributes"` when it has some).

use arrow::datatypes::{DataType, Field, Schema};

/// The 14 columns, in order.
pub fn schema() -> Schema {
    let text = |name: &str| Field::new(name, DataType::Utf8, true);
    Schema::new(vec![
        Field::new("time_unix_nano", DataType::UInt64, false),
        Field::new("observed_time_unix_nano", DataType::UInt64, false),
        Field::new("severity_number", DataType::Int32, true),
        text("severity_text"),
        text("body"),
        Field::new("trace_id", DataType::Binary, true),
        Field::new("span_id", DataType::Binary, true),
        Field::new("flags", DataType::UInt32, true),
        text("attributes_json"),
        text("resource_json"),
        text("scope_json"),
        Field::new("dropped_attributes_count", DataType::UInt32, true),
        text("service_name"),
        text("event_name"),
    ])
}
