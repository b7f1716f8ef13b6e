//! The trace batch: one row per span, 27 columns. Times are unsigned nanoseconds since the epoch; events and
//! links are lists of structs whose attributes are JSON text; the last five columns (the numeric kind and
//! status, the dropped counts) are the ones SignalDB added last, nullable.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields, Schema};

/// The parent of a root span, as SignalDB writes an empty span id.
pub const NO_PARENT: &str = "0000000000000000";

/// A span event: its name, time and attributes (JSON).
pub fn event_fields() -> Fields {
    Fields::from(vec![
        Field::new("name", DataType::Utf8, false),
        Field::new("timestamp_unix_nano", DataType::UInt64, false),
        Field::new("attributes_json", DataType::Utf8, true),
    ])
}

/// A span link: the linked span's ids and the link's attributes (JSON).
pub fn link_fields() -> Fields {
    Fields::from(vec![
        Field::new("trace_id", DataType::Utf8, false),
        Field::new("span_id", DataType::Utf8, false),
        Field::new("attributes_json", DataType::Utf8, true),
    ])
}

/// The list type of `fields`' structs, its item field named `item`.
pub fn list_of(fields: Fields) -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Struct(fields), true)))
}

/// The 27 columns, in order.
pub fn schema() -> Schema {
    let text = |name: &str, nullable: bool| Field::new(name, DataType::Utf8, nullable);
    let nanos = |name: &str| Field::new(name, DataType::UInt64, false);
    Schema::new(vec![
        text("trace_id", false),
        text("span_id", false),
        text("parent_span_id", true),
        text("name", false),
        text("service_name", false),
        nanos("start_time_unix_nano"),
        nanos("end_time_unix_nano"),
        nanos("duration_nano"),
        text("span_kind", false),
        text("status_code", false),
        text("status_message", true),
        Field::new("is_root", DataType::Boolean, false),
        text("attributes_json", true),
        text("resource_json", true),
        Field::new("events", list_of(event_fields()), true),
        Field::new("links", list_of(link_fields()), true),
        text("trace_state", true),
        text("resource_schema_url", true),
        text("scope_name", true),
        text("scope_version", true),
        text("scope_schema_url", true),
        text("scope_attributes", true),
        Field::new("span_kind_number", DataType::Int32, true),
        Field::new("status_code_number", DataType::Int32, true),
        Field::new("dropped_attributes_count", DataType::Int64, true),
        Field::new("dropped_events_count", DataType::Int64, true),
        Field::new("dropped_links_count", DataType::Int64, true),
    ])
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_trace_batch_has_the_seeds_27_columns_with_events_and_links_as_lists() {
        let schema = super::schema();
        assert_eq!(schema.fields().len(), 27);
        assert_eq!(schema.index_of("events").unwrap(), 14);
        assert!(matches!(schema.field_with_name("links").unwrap().data_type(), arrow::datatypes::DataType::List(_)));
    }
}
