//! Requests shaped like SignalDB's benchmark fixtures (`sample_trace_request(n)` and friends; see
//! `../shared/rig-specs.md`): one resource `service.name=bench-service`, one scope `bench-lib` 1.0.0.

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::metrics::v1::{
    AggregationTemporality, Gauge, Metric, NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum, metric,
    number_data_point,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};

const START_NS: u64 = 1_700_000_000_000_000_000;

fn kv(key: &str, value: any_value::Value) -> KeyValue {
    KeyValue { key: key.into(), value: Some(AnyValue { value: Some(value) }), ..Default::default() }
}

fn text(key: &str, value: &str) -> KeyValue {
    kv(key, any_value::Value::StringValue(value.into()))
}

/// The three http attributes of every span and log record, all strings.
fn http_attributes() -> Vec<KeyValue> {
    vec![text("http.method", "GET"), text("http.route", "/api/v1/resource"), text("http.status_code", "200")]
}

fn resource() -> Resource {
    Resource {
        attributes: vec![text("service.name", "bench-service"), text("service.version", "1.0.0")],
        ..Default::default()
    }
}

fn scope() -> InstrumentationScope {
    InstrumentationScope { name: "bench-lib".into(), version: "1.0.0".into(), ..Default::default() }
}

/// `items` server spans, ten per trace: trace id `i / 10`, span id `i`, `operation-{i % 50}`, three http
/// attributes (all strings, `http.status_code` too, as the seed's), status OK; no parent, event or link, as the
/// seed's carry none.
pub fn traces(items: usize) -> ExportTraceServiceRequest {
    let spans = (0..items as u64)
        .map(|i| Span {
            trace_id: u128::from(i / 10).to_be_bytes().to_vec(),
            span_id: i.to_be_bytes().to_vec(),
            name: format!("operation-{}", i % 50),
            kind: 2,
            start_time_unix_nano: START_NS + i * 1000,
            end_time_unix_nano: START_NS + i * 1000 + 500,
            attributes: http_attributes(),
            status: Some(Status { code: 1, ..Default::default() }),
            ..Default::default()
        })
        .collect();
    let scope_spans = vec![ScopeSpans { scope: Some(scope()), spans, ..Default::default() }];
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans { resource: Some(resource()), scope_spans, ..Default::default() }],
    }
}

/// `items` INFO records, body `request {i % 50} completed`, the spans' three http attributes and ids (trace
/// `i / 10`, span `i`), observed 5 ns after their time, as the seed's.
pub fn logs(items: usize) -> ExportLogsServiceRequest {
    let log_records = (0..items as u64)
        .map(|i| LogRecord {
            time_unix_nano: START_NS + i * 1000,
            observed_time_unix_nano: START_NS + i * 1000 + 5,
            severity_number: 9,
            severity_text: "INFO".into(),
            body: Some(AnyValue {
                value: Some(any_value::Value::StringValue(format!("request {} completed", i % 50))),
            }),
            attributes: http_attributes(),
            trace_id: u128::from(i / 10).to_be_bytes().to_vec(),
            span_id: i.to_be_bytes().to_vec(),
            ..Default::default()
        })
        .collect();
    let scope_logs = vec![ScopeLogs { scope: Some(scope()), log_records, ..Default::default() }];
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs { resource: Some(resource()), scope_logs, ..Default::default() }],
    }
}

/// `items` one-point metrics alternating a gauge `gauge.metric.{i % 50}` and a cumulative monotonic sum
/// `sum.metric.{i % 50}`, attributes `host=node-1`, `region=us-east-1`, value `i * 1.5`, described `bench metric`
/// in unit `1`, as the seed's.
pub fn metrics(items: usize) -> ExportMetricsServiceRequest {
    let metrics = (0..items as u64)
        .map(|i| {
            let point = NumberDataPoint {
                attributes: vec![text("host", "node-1"), text("region", "us-east-1")],
                start_time_unix_nano: START_NS,
                time_unix_nano: START_NS + i * 1000,
                value: Some(number_data_point::Value::AsDouble(i as f64 * 1.5)),
                ..Default::default()
            };
            let (name, data) = if i.is_multiple_of(2) {
                (format!("gauge.metric.{}", i % 50), metric::Data::Gauge(Gauge { data_points: vec![point] }))
            } else {
                let temporality = AggregationTemporality::Cumulative as i32;
                let sum = Sum { data_points: vec![point], aggregation_temporality: temporality, is_monotonic: true };
                (format!("sum.metric.{}", i % 50), metric::Data::Sum(sum))
            };
            Metric {
                name,
                description: "bench metric".into(),
                unit: "1".into(),
                data: Some(data),
                ..Default::default()
            }
        })
        .collect();
    let scope_metrics = vec![ScopeMetrics { scope: Some(scope()), metrics, ..Default::default() }];
    ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics { resource: Some(resource()), scope_metrics, ..Default::default() }],
    }
}
