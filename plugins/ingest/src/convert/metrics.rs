//! Metrics to seed 000's metric batch ([`seed_schemas::metrics::batch`]), as SignalDB's conversion fills it: one
//! row per metric, its gauge or sum points as a JSON array (`data_json`: each point's attributes, flags, start
//! and time, value; keys in order; a double as `serde_json` writes it, non-finite ones spelled `NaN`, `+Inf`,
//! `-Inf`), its first point's times beside them; a gauge's temporality 0 and not monotonic. Histograms,
//! summaries and exemplars are not part of the benchmark's input: a histogram or a summary is refused, naming
//! its metric, and exemplars are not written.

use std::fmt::Write;
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanBuilder, Int32Builder, UInt64Builder};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::metrics::v1::{NumberDataPoint, metric, number_data_point};

use super::{resource_columns, strings};
use crate::text::{self, Writing};

/// One row per metric, in seed 000's metric batch, its attributes written as `writing` says (the points' JSON
/// by hand either way).
pub fn metrics(request: &ExportMetricsServiceRequest, writing: Writing) -> Result<RecordBatch, ArrowError> {
    let rows: usize = request.resource_metrics.iter().flat_map(|r| &r.scope_metrics).map(|s| s.metrics.len()).sum();
    let (mut name, mut description, mut unit, mut attributes) =
        (strings(rows), strings(rows), strings(rows), strings(rows));
    let (mut resource_json, mut scope_json, mut kind, mut data) =
        (strings(rows), strings(rows), strings(rows), strings(rows));
    let (mut start, mut time) = (UInt64Builder::with_capacity(rows), UInt64Builder::with_capacity(rows));
    let mut temporality = Int32Builder::with_capacity(rows);
    let mut monotonic = BooleanBuilder::with_capacity(rows);
    let (mut buf, mut scope_text) = (String::with_capacity(256), String::new());
    for rm in &request.resource_metrics {
        let (_, resource_text) = resource_columns(rm.resource.as_ref());
        for sm in &rm.scope_metrics {
            text::scope(sm.scope.as_ref(), &mut scope_text);
            for m in &sm.metrics {
                let (kind_name, points, agg, is_monotonic) = match &m.data {
                    Some(metric::Data::Gauge(g)) => ("gauge", &g.data_points, 0, false),
                    Some(metric::Data::Sum(s)) => ("sum", &s.data_points, s.aggregation_temporality, s.is_monotonic),
                    Some(other) => {
                        let what = format!("{other:?}");
                        let kind = what.split('(').next().unwrap_or("?");
                        return Err(ArrowError::NotYetImplemented(format!(
                            "metric `{}` is a {kind}: only gauges and sums are converted (the seed's input has no other)",
                            m.name
                        )));
                    }
                    None => return Err(ArrowError::InvalidArgumentError(format!("metric `{}` has no data", m.name))),
                };
                name.append_value(&m.name);
                description.append_value(&m.description);
                unit.append_value(&m.unit);
                let first = points.first();
                start.append_value(first.map_or(0, |p| p.start_time_unix_nano));
                time.append_value(first.map_or(0, |p| p.time_unix_nano));
                writing.attributes(&m.metadata, &mut buf);
                attributes.append_value(&buf);
                resource_json.append_value(&resource_text);
                scope_json.append_value(&scope_text);
                kind.append_value(kind_name);
                points_json(points, &mut buf, writing);
                data.append_value(&buf);
                temporality.append_value(agg);
                monotonic.append_value(is_monotonic);
            }
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(name.finish()),
        Arc::new(description.finish()),
        Arc::new(unit.finish()),
        Arc::new(start.finish()),
        Arc::new(time.finish()),
        Arc::new(attributes.finish()),
        Arc::new(resource_json.finish()),
        Arc::new(scope_json.finish()),
        Arc::new(kind.finish()),
        Arc::new(data.finish()),
        Arc::new(temporality.finish()),
        Arc::new(monotonic.finish()),
    ];
    RecordBatch::try_new(Arc::new(seed_schemas::metrics::batch()), columns)
}

/// The points as SignalDB's `data_json`, replacing the contents of `out`.
fn points_json(points: &[NumberDataPoint], out: &mut String, writing: Writing) {
    out.clear();
    out.push('[');
    let mut attrs = String::new();
    for (i, point) in points.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        writing.attributes(&point.attributes, &mut attrs);
        let _ = write!(
            out,
            "{{\"attributes\":{attrs},\"flags\":{},\"start_time_unix_nano\":{},\"time_unix_nano\":{},\"value\":",
            point.flags, point.start_time_unix_nano, point.time_unix_nano
        );
        match point.value {
            Some(number_data_point::Value::AsDouble(d)) if d.is_finite() => {
                out.push_str(ryu::Buffer::new().format_finite(d));
            }
            Some(number_data_point::Value::AsDouble(d)) if d.is_nan() => out.push_str("\"NaN\""),
            Some(number_data_point::Value::AsDouble(d)) if d > 0.0 => out.push_str("\"+Inf\""),
            Some(number_data_point::Value::AsDouble(_)) => out.push_str("\"-Inf\""),
            Some(number_data_point::Value::AsInt(v)) => {
                let _ = write!(out, "{v}");
            }
            None => out.push_str("null"),
        }
        out.push('}');
    }
    out.push(']');
}
