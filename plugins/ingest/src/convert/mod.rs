//! OTLP requests to Arrow record batches, one row per span, log record or data point, in the columnar shape of
//! SignalDB's conversion (ids as hex, nanosecond timestamps, attributes and resource as JSON text). Builders
//! are sized up front and text goes through reused buffers: no allocation per row beyond Arrow's own. Spans and
//! log records convert to seed 000's whole trace and log batches ([`traces`], [`logs`]).

mod logs;
mod traces;

pub use logs::logs;
pub use traces::{NO_PARENT, traces};

use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanBuilder, Float64Builder, Int32Builder, StringBuilder, TimestampNanosecondBuilder};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};
use opentelemetry_proto::tonic::resource::v1::Resource;

use crate::text;

fn strings(rows: usize) -> StringBuilder {
    StringBuilder::with_capacity(rows, rows * 16)
}

fn service_name(resource: Option<&Resource>) -> &str {
    let attrs = resource.map(|r| r.attributes.as_slice()).unwrap_or_default();
    attrs
        .iter()
        .find(|kv| kv.key == "service.name")
        .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
            Value::StringValue(s) => Some(s.as_str()),
            _ => None,
        })
        .unwrap_or("unknown")
}

/// The service name and the resource's attributes as JSON: the same for every row of one resource.
fn resource_columns(resource: Option<&Resource>) -> (&str, String) {
    let mut json = String::new();
    text::attributes(resource.map(|r| r.attributes.as_slice()).unwrap_or_default(), &mut json);
    (service_name(resource), json)
}

fn finish(columns: Vec<(&str, ArrayRef)>) -> Result<RecordBatch, ArrowError> {
    RecordBatch::try_from_iter(columns)
}

/// One row per gauge or sum data point (histograms and summaries are not part of the benchmark's input).
pub fn metrics(request: &ExportMetricsServiceRequest) -> Result<RecordBatch, ArrowError> {
    let points = |m: &opentelemetry_proto::tonic::metrics::v1::Metric| match &m.data {
        Some(metric::Data::Gauge(g)) => g.data_points.len(),
        Some(metric::Data::Sum(s)) => s.data_points.len(),
        _ => 0,
    };
    let rows: usize =
        request.resource_metrics.iter().flat_map(|r| &r.scope_metrics).flat_map(|s| &s.metrics).map(points).sum();
    let (mut time, mut start) =
        (TimestampNanosecondBuilder::with_capacity(rows), TimestampNanosecondBuilder::with_capacity(rows));
    let (mut name, mut kind, mut attributes, mut resource_json, mut service) =
        (strings(rows), strings(rows), strings(rows), strings(rows), strings(rows));
    let mut monotonic = BooleanBuilder::with_capacity(rows);
    let mut temporality = Int32Builder::with_capacity(rows);
    let mut value = Float64Builder::with_capacity(rows);
    let mut buf = String::with_capacity(256);
    for rm in &request.resource_metrics {
        let (service_name, resource_text) = resource_columns(rm.resource.as_ref());
        for m in rm.scope_metrics.iter().flat_map(|s| &s.metrics) {
            let (kind_name, data_points, is_monotonic, agg) = match &m.data {
                Some(metric::Data::Gauge(g)) => ("gauge", &g.data_points, None, 0),
                Some(metric::Data::Sum(s)) => ("sum", &s.data_points, Some(s.is_monotonic), s.aggregation_temporality),
                _ => continue,
            };
            for point in data_points {
                time.append_value(point.time_unix_nano as i64);
                start.append_value(point.start_time_unix_nano as i64);
                name.append_value(&m.name);
                kind.append_value(kind_name);
                monotonic.append_option(is_monotonic);
                temporality.append_value(agg);
                value.append_option(match point.value {
                    Some(number_data_point::Value::AsDouble(d)) => Some(d),
                    Some(number_data_point::Value::AsInt(i)) => Some(i as f64),
                    None => None,
                });
                text::attributes(&point.attributes, &mut buf);
                attributes.append_value(&buf);
                resource_json.append_value(&resource_text);
                service.append_value(service_name);
            }
        }
    }
    finish(vec![
        ("timestamp", Arc::new(time.finish())),
        ("start_timestamp", Arc::new(start.finish())),
        ("metric_name", Arc::new(name.finish())),
        ("metric_kind", Arc::new(kind.finish())),
        ("is_monotonic", Arc::new(monotonic.finish())),
        ("aggregation_temporality", Arc::new(temporality.finish())),
        ("value", Arc::new(value.finish())),
        ("attributes_json", Arc::new(attributes.finish())),
        ("resource_json", Arc::new(resource_json.finish())),
        ("service_name", Arc::new(service.finish())),
    ])
}
