//! OTLP requests to Arrow record batches, one row per span, log record or metric, in the columnar shape of
//! SignalDB's conversion (ids as hex, nanosecond timestamps, attributes and resource as JSON text). Builders
//! are sized up front and text goes through reused buffers: no allocation per row beyond Arrow's own. Spans, log
//! records and metrics convert to seed 000's whole trace, log and metric batches ([`traces`], [`logs`],
//! [`metrics`]).

mod logs;
mod metrics;
mod traces;

pub use logs::logs;
pub use metrics::metrics;
pub use traces::{NO_PARENT, traces};

use arrow::array::StringBuilder;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
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
