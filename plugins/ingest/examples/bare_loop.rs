//! The rig's core operation as a bare loop, to see what the rig adds: the same conversion (and prost decode)
//! of the same 1,000-item requests, timed in batches with one clock pair, median of 30 batches of ~100 ms.
//! Compare with `results/ingest.jsonl` (the rig's `request_time`). Measured: the bare loop 283-287 µs on traces
//! convert_only, the rig in the same process (via `plugin_api::testing`) within 5% of it, but the rig through
//! `benchhost run` 360-380 µs: a gap that comes with the child process and is not explained yet.
//!
//! `cargo run --release -p rig-ingest --example bare_loop`

use std::hint::black_box;
use std::time::Instant;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use rig_ingest::{convert, fixtures};

fn median_ns(mut op: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut warm = 0u64;
    while start.elapsed().as_millis() < 500 {
        op();
        warm += 1;
    }
    let per_batch = (warm / 5).max(1);
    let mut samples: Vec<f64> = (0..30)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..per_batch {
                op();
            }
            t.elapsed().as_nanos() as f64 / per_batch as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[15]
}

fn main() {
    let traces = fixtures::traces(1000);
    let (logs, metrics) = (fixtures::logs(1000), fixtures::metrics(1000));
    let (tb, lb, mb) = (traces.encode_to_vec(), logs.encode_to_vec(), metrics.encode_to_vec());
    let rows = [
        (
            "traces decode_and_convert",
            median_ns(|| {
                black_box(convert::traces(&ExportTraceServiceRequest::decode(&tb[..]).unwrap()).unwrap());
            }),
        ),
        (
            "traces convert_only",
            median_ns(|| {
                black_box(convert::traces(&traces).unwrap());
            }),
        ),
        (
            "logs decode_and_convert",
            median_ns(|| {
                black_box(convert::logs(&ExportLogsServiceRequest::decode(&lb[..]).unwrap()).unwrap());
            }),
        ),
        (
            "logs convert_only",
            median_ns(|| {
                black_box(convert::logs(&logs).unwrap());
            }),
        ),
        (
            "metrics decode_and_convert",
            median_ns(|| {
                black_box(convert::metrics(&ExportMetricsServiceRequest::decode(&mb[..]).unwrap()).unwrap());
            }),
        ),
        (
            "metrics convert_only",
            median_ns(|| {
                black_box(convert::metrics(&metrics).unwrap());
            }),
        ),
    ];
    for (name, ns) in rows {
        println!("{name}: {:.1} µs", ns / 1e3);
    }
}
