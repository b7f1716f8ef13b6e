//! Spans to seed 000's trace batch ([`seed_schemas::traces`]), column for column as SignalDB's conversion fills
//! it: ids as lowercase hex (a span with no parent gets the all-zero id, as SignalDB's `SpanId` writes it, and is
//! a root), times as unsigned nanoseconds, kind and status by name and by number, attributes and resource as
//! JSON, events and links as lists of structs (their attributes JSON), an empty trace state or schema URL and a
//! scope without attributes as nulls.

use std::sync::Arc;

use arrow::array::{
    ArrayBuilder, ArrayRef, BooleanBuilder, Int32Builder, Int64Builder, ListBuilder, StringBuilder, StructBuilder,
    UInt64Builder,
};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::span::{Event, Link};

use super::{resource_columns, strings};
use crate::text::{self, Writing};

const KINDS: [&str; 6] = ["Unspecified", "Internal", "Server", "Client", "Producer", "Consumer"];
const STATUSES: [&str; 3] = ["Unset", "Ok", "Error"];
pub use seed_schemas::traces::NO_PARENT;

/// A list of structs of `fields`, each field a builder of its type, sized for `rows` spans.
fn list_builder(fields: arrow::datatypes::Fields) -> ListBuilder<StructBuilder> {
    let builders: Vec<Box<dyn ArrayBuilder>> = fields
        .iter()
        .map(|f| -> Box<dyn ArrayBuilder> {
            match f.data_type() {
                arrow::datatypes::DataType::UInt64 => Box::new(UInt64Builder::new()),
                _ => Box::new(StringBuilder::new()),
            }
        })
        .collect();
    let item = seed_schemas::traces::list_of(fields.clone());
    let arrow::datatypes::DataType::List(item) = item else { unreachable!("list_of makes a list") };
    ListBuilder::new(StructBuilder::new(fields, builders)).with_field(item)
}

/// Appends a span's events: name, time, attributes.
fn append_events(list: &mut ListBuilder<StructBuilder>, events: &[Event], buf: &mut String, writing: Writing) {
    let item = list.values();
    for event in events {
        item.field_builder::<StringBuilder>(0).expect("name").append_value(&event.name);
        item.field_builder::<UInt64Builder>(1).expect("time").append_value(event.time_unix_nano);
        writing.attributes(&event.attributes, buf);
        item.field_builder::<StringBuilder>(2).expect("attributes").append_value(&*buf);
        item.append(true);
    }
    list.append(true);
}

/// Appends a span's links: the linked trace and span, attributes.
fn append_links(list: &mut ListBuilder<StructBuilder>, links: &[Link], buf: &mut String, writing: Writing) {
    let item = list.values();
    for link in links {
        writing.hex(&link.trace_id, buf);
        item.field_builder::<StringBuilder>(0).expect("trace_id").append_value(&*buf);
        writing.hex(&link.span_id, buf);
        item.field_builder::<StringBuilder>(1).expect("span_id").append_value(&*buf);
        writing.attributes(&link.attributes, buf);
        item.field_builder::<StringBuilder>(2).expect("attributes").append_value(&*buf);
        item.append(true);
    }
    list.append(true);
}

/// Appends `value`, or a null when it is empty.
fn non_empty(column: &mut StringBuilder, value: &str) {
    column.append_option((!value.is_empty()).then_some(value));
}

/// One row per span, in seed 000's trace batch, its ids and attributes written as `writing` says.
pub fn traces(request: &ExportTraceServiceRequest, writing: Writing) -> Result<RecordBatch, ArrowError> {
    let rows: usize = request.resource_spans.iter().flat_map(|r| &r.scope_spans).map(|s| s.spans.len()).sum();
    let (mut trace_id, mut span_id, mut parent, mut name, mut service) =
        (strings(rows), strings(rows), strings(rows), strings(rows), strings(rows));
    let (mut kind, mut status, mut message, mut attributes, mut resource_json) =
        (strings(rows), strings(rows), strings(rows), strings(rows), strings(rows));
    let (mut trace_state, mut resource_url, mut scope_name, mut scope_version) =
        (strings(rows), strings(rows), strings(rows), strings(rows));
    let (mut scope_url, mut scope_attributes) = (strings(rows), strings(rows));
    let (mut start, mut end, mut duration) =
        (UInt64Builder::with_capacity(rows), UInt64Builder::with_capacity(rows), UInt64Builder::with_capacity(rows));
    let mut is_root = BooleanBuilder::with_capacity(rows);
    let (mut events, mut links) =
        (list_builder(seed_schemas::traces::event_fields()), list_builder(seed_schemas::traces::link_fields()));
    let (mut kind_number, mut status_number) = (Int32Builder::with_capacity(rows), Int32Builder::with_capacity(rows));
    let (mut dropped_attrs, mut dropped_events, mut dropped_links) =
        (Int64Builder::with_capacity(rows), Int64Builder::with_capacity(rows), Int64Builder::with_capacity(rows));
    let (mut buf, mut scope_json) = (String::with_capacity(256), String::new());
    for rs in &request.resource_spans {
        let (service_name, resource_text) = resource_columns(rs.resource.as_ref());
        for ss in &rs.scope_spans {
            let scope = ss.scope.as_ref();
            let scope_attrs = scope.map(|s| s.attributes.as_slice()).unwrap_or_default();
            text::attributes(scope_attrs, &mut scope_json);
            for span in &ss.spans {
                writing.hex(&span.trace_id, &mut buf);
                trace_id.append_value(&buf);
                writing.hex(&span.span_id, &mut buf);
                span_id.append_value(&buf);
                if span.parent_span_id.is_empty() {
                    parent.append_value(NO_PARENT);
                } else {
                    writing.hex(&span.parent_span_id, &mut buf);
                    parent.append_value(&buf);
                }
                name.append_value(&span.name);
                service.append_value(service_name);
                start.append_value(span.start_time_unix_nano);
                end.append_value(span.end_time_unix_nano);
                duration.append_value(span.end_time_unix_nano.saturating_sub(span.start_time_unix_nano));
                kind.append_value(KINDS.get(span.kind as usize).copied().unwrap_or("Unspecified"));
                let code = span.status.as_ref().map_or(0, |s| s.code);
                status.append_value(STATUSES.get(code as usize).copied().unwrap_or("Unset"));
                message.append_value(span.status.as_ref().map_or("", |s| s.message.as_str()));
                is_root.append_value(span.parent_span_id.is_empty());
                writing.attributes(&span.attributes, &mut buf);
                attributes.append_value(&buf);
                resource_json.append_value(&resource_text);
                append_events(&mut events, &span.events, &mut buf, writing);
                append_links(&mut links, &span.links, &mut buf, writing);
                non_empty(&mut trace_state, &span.trace_state);
                non_empty(&mut resource_url, &rs.schema_url);
                scope_name.append_option(scope.map(|s| s.name.as_str()));
                scope_version.append_option(scope.map(|s| s.version.as_str()));
                non_empty(&mut scope_url, &ss.schema_url);
                scope_attributes.append_option((!scope_attrs.is_empty()).then_some(scope_json.as_str()));
                kind_number.append_value(span.kind);
                status_number.append_value(code);
                dropped_attrs.append_value(i64::from(span.dropped_attributes_count));
                dropped_events.append_value(i64::from(span.dropped_events_count));
                dropped_links.append_value(i64::from(span.dropped_links_count));
            }
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(trace_id.finish()),
        Arc::new(span_id.finish()),
        Arc::new(parent.finish()),
        Arc::new(name.finish()),
        Arc::new(service.finish()),
        Arc::new(start.finish()),
        Arc::new(end.finish()),
        Arc::new(duration.finish()),
        Arc::new(kind.finish()),
        Arc::new(status.finish()),
        Arc::new(message.finish()),
        Arc::new(is_root.finish()),
        Arc::new(attributes.finish()),
        Arc::new(resource_json.finish()),
        Arc::new(events.finish()),
        Arc::new(links.finish()),
        Arc::new(trace_state.finish()),
        Arc::new(resource_url.finish()),
        Arc::new(scope_name.finish()),
        Arc::new(scope_version.finish()),
        Arc::new(scope_url.finish()),
        Arc::new(scope_attributes.finish()),
        Arc::new(kind_number.finish()),
        Arc::new(status_number.finish()),
        Arc::new(dropped_attrs.finish()),
        Arc::new(dropped_events.finish()),
        Arc::new(dropped_links.finish()),
    ];
    RecordBatch::try_new(Arc::new(seed_schemas::traces::schema()), columns)
}
