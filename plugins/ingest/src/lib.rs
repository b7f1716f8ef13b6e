//! benchhost rig `ingest`: seed 000's `acceptor_ingest*` benchmarks. One iteration is one OTLP export request
//! (1,000 spans, log records or metric points by default, shaped like SignalDB's fixtures) turned into an
//! Arrow record batch: `decode_and_convert` prost-decodes the encoded request first, `convert_only` starts
//! from the decoded message, each into seed 000's whole batch ([`seed_schemas`]). Teardown compares the last
//! batch whole, every row and column, with the one the fixture's rules give ([`expected`]), built untimed.

pub mod convert;
pub mod expected;
pub mod fixtures;
mod per_row;
mod text;

pub use text::Writing;

use arrow::record_batch::RecordBatch;
use benchhost_plugin_api::{Descriptor, Invariant, Metric, Outcome, Param, Rig, RigError, SetupContext, Unit};
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use serde::Deserialize;

/// The slowdown compiled in with the `slower` feature, spun once per iteration (proofs only: a second build of
/// the same tree, slower by a known amount; see `benchhost_plugin_api::slower`).
pub(crate) const SLOWER: u64 = if cfg!(feature = "slower") {
    benchhost_plugin_api::slower::rounds(option_env!("BENCHHOST_SLOWER_SPIN"))
} else {
    0
};

/// Which signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// Spans.
    Traces,
    /// Log records.
    Logs,
    /// Gauge and sum data points.
    Metrics,
}

/// Which stages one iteration covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Protobuf decode, then conversion.
    DecodeAndConvert,
    /// Conversion of the decoded message.
    ConvertOnly,
}

/// Parameters of `ingest`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    signal: Signal,
    stage: Stage,
    items: i64,
    text: text::Writing,
}

enum Request {
    Traces(ExportTraceServiceRequest),
    Logs(ExportLogsServiceRequest),
    Metrics(ExportMetricsServiceRequest),
}

/// The rig.
pub struct Ingest {
    request: Request,
    /// The batch the fixture's rules give, built untimed.
    expected: RecordBatch,
    encoded: Vec<u8>,
    stage: Stage,
    items: usize,
    writing: text::Writing,
    last: Option<RecordBatch>,
}

impl Rig for Ingest {
    type Params = Params;

    fn describe() -> Descriptor {
        Descriptor::iterations("ingest", "OTLP export request -> Arrow record batch (traces, logs, metrics)")
            .param(Param::choice("signal", "traces", &["traces", "logs", "metrics"]))
            .param(Param::choice("stage", "decode_and_convert", &["decode_and_convert", "convert_only"]))
            .param(
                Param::int("items", 1000).range(1, 10_000_000).doc("spans, log records or metric points per request"),
            )
            .param(Param::choice("text", "reused", &["reused", "per_row"]).doc(
                "how ids, attributes and log bodies are written: into reused buffers (ours), or a serde_json Map \
                 and a String per row, as SignalDB's conversion writes them (the same text)",
            ))
            .metric(Metric::iter_time("request_time"))
            .metric(Metric::rate("items_per_s", Unit::RecordsPerSec, "rows_in"))
            .metric(Metric::counter("input_bytes", Unit::Bytes, "input_bytes").doc("the encoded request"))
            .invariant(Invariant::equal("rows_out", "rows_in"))
    }

    fn setup(p: Params, _: &SetupContext) -> Result<Self, RigError> {
        let items = usize::try_from(p.items).map_err(|_| RigError::invalid_params("items must be positive"))?;
        let (encoded, expected, request) = match p.signal {
            Signal::Traces => {
                let r = fixtures::traces(items);
                (r.encode_to_vec(), expected::traces(items)?, Request::Traces(r))
            }
            Signal::Logs => {
                let r = fixtures::logs(items);
                (r.encode_to_vec(), expected::logs(items)?, Request::Logs(r))
            }
            Signal::Metrics => {
                let r = fixtures::metrics(items);
                (r.encode_to_vec(), expected::metrics(items)?, Request::Metrics(r))
            }
        };
        Ok(Ingest { request, expected, encoded, stage: p.stage, items, writing: p.text, last: None })
    }

    fn iterate(&mut self) -> Result<(), RigError> {
        benchhost_plugin_api::slower::spin(SLOWER);
        let (bytes, w) = (&self.encoded[..], self.writing);
        let batch = match (&self.request, self.stage) {
            (Request::Traces(r), Stage::ConvertOnly) => convert::traces(r, w)?,
            (Request::Traces(_), Stage::DecodeAndConvert) => {
                convert::traces(&ExportTraceServiceRequest::decode(bytes)?, w)?
            }
            (Request::Logs(r), Stage::ConvertOnly) => convert::logs(r, w)?,
            (Request::Logs(_), Stage::DecodeAndConvert) => convert::logs(&ExportLogsServiceRequest::decode(bytes)?, w)?,
            (Request::Metrics(r), Stage::ConvertOnly) => convert::metrics(r, w)?,
            (Request::Metrics(_), Stage::DecodeAndConvert) => {
                convert::metrics(&ExportMetricsServiceRequest::decode(bytes)?, w)?
            }
        };
        self.last = Some(batch);
        Ok(())
    }

    fn teardown(self) -> Result<Outcome, RigError> {
        let batch = self.last.as_ref().ok_or_else(|| RigError::verification("no request was converted"))?;
        if let Some(difference) = expected::first_difference(batch, &self.expected) {
            let signal = match self.request {
                Request::Traces(_) => "trace",
                Request::Logs(_) => "log",
                Request::Metrics(_) => "metric",
            };
            return Err(RigError::verification(format!("the {signal} batch differs: {difference}")));
        }
        Ok(self.outcome(batch))
    }
}

impl Ingest {
    fn outcome(&self, batch: &RecordBatch) -> Outcome {
        Outcome::new()
            .counter("rows_in", self.items as u64)
            .counter("rows_out", batch.num_rows() as u64)
            .counter("input_bytes", self.encoded.len() as u64)
    }
}

benchhost_plugin_api::export_rigs![Ingest];

#[cfg(test)]
mod tests;
