//! Log records to seed 000's log batch ([`seed_schemas::logs`]), column for column as SignalDB's conversion
//! fills it: times as unsigned nanoseconds, the body as the JSON of its value, the trace and span ids as their
//! raw bytes, the scope as JSON, every value as the record holds it (an empty event name stays empty).

use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryBuilder, Int32Builder, UInt32Builder, UInt64Builder};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;

use super::{resource_columns, strings};
use crate::text::{self, Writing};

/// One row per log record, in seed 000's log batch, its body and attributes written as `writing` says.
pub fn logs(request: &ExportLogsServiceRequest, writing: Writing) -> Result<RecordBatch, ArrowError> {
    let rows: usize = request.resource_logs.iter().flat_map(|r| &r.scope_logs).map(|s| s.log_records.len()).sum();
    let (mut time, mut observed) = (UInt64Builder::with_capacity(rows), UInt64Builder::with_capacity(rows));
    let mut severity_number = Int32Builder::with_capacity(rows);
    let (mut severity, mut body, mut attributes, mut resource_json) =
        (strings(rows), strings(rows), strings(rows), strings(rows));
    let (mut scope_json, mut service, mut event_name) = (strings(rows), strings(rows), strings(rows));
    let (mut trace_id, mut span_id) =
        (BinaryBuilder::with_capacity(rows, rows * 16), BinaryBuilder::with_capacity(rows, rows * 8));
    let (mut flags, mut dropped) = (UInt32Builder::with_capacity(rows), UInt32Builder::with_capacity(rows));
    let (mut buf, mut scope_text) = (String::with_capacity(256), String::new());
    for rl in &request.resource_logs {
        let (service_name, resource_text) = resource_columns(rl.resource.as_ref());
        for sl in &rl.scope_logs {
            text::scope(sl.scope.as_ref(), &mut scope_text);
            for record in &sl.log_records {
                time.append_value(record.time_unix_nano);
                observed.append_value(record.observed_time_unix_nano);
                severity_number.append_value(record.severity_number);
                severity.append_value(&record.severity_text);
                writing.value(record.body.as_ref(), &mut buf);
                body.append_value(&buf);
                trace_id.append_value(&record.trace_id);
                span_id.append_value(&record.span_id);
                flags.append_value(record.flags);
                writing.attributes(&record.attributes, &mut buf);
                attributes.append_value(&buf);
                resource_json.append_value(&resource_text);
                scope_json.append_value(&scope_text);
                dropped.append_value(record.dropped_attributes_count);
                service.append_value(service_name);
                event_name.append_value(&record.event_name);
            }
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(time.finish()),
        Arc::new(observed.finish()),
        Arc::new(severity_number.finish()),
        Arc::new(severity.finish()),
        Arc::new(body.finish()),
        Arc::new(trace_id.finish()),
        Arc::new(span_id.finish()),
        Arc::new(flags.finish()),
        Arc::new(attributes.finish()),
        Arc::new(resource_json.finish()),
        Arc::new(scope_json.finish()),
        Arc::new(dropped.finish()),
        Arc::new(service.finish()),
        Arc::new(event_name.finish()),
    ];
    RecordBatch::try_new(Arc::new(seed_schemas::logs::schema()), columns)
}
