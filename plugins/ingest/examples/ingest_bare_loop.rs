//! The rig's core operation as a bare loop, to see what the rig adds: the same conversion (and prost decode)
//! of the same 1,000-item requests, timed in batches with one clock pair, median of 30 batches of ~100 ms.
//! Compare with `results/ingest.jsonl` (the rig's `request_time`). Measured on traces convert_only, both on a
//! settled heap, alternating: bare loop 289 / 312 µs, rig through `benchhost run` 342 / 280 µs (this VM moved
//! ±10% that hour). Before cells settled their heap (`benchhost_plugin_api::heap`) the rig took 360-380 µs:
//! glibc trimmed the heap after every iteration and the next one faulted ~40 pages back in.
//!
//! `cargo run --release -p rig-ingest --example ingest_bare_loop`

use std::hint::black_box;

use benchhost_plugin_api::testing;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use rig_ingest::{Writing, convert, fixtures};

fn main() {
    let traces = fixtures::traces(1000);
    let (logs, metrics) = (fixtures::logs(1000), fixtures::metrics(1000));
    let (tb, lb, mb) = (traces.encode_to_vec(), logs.encode_to_vec(), metrics.encode_to_vec());
    let rows = [
        (
            "traces decode_and_convert",
            testing::bare_loop_ns(|| {
                black_box(
                    convert::traces(&ExportTraceServiceRequest::decode(&tb[..]).unwrap(), Writing::Reused).unwrap(),
                );
            }),
        ),
        (
            "traces convert_only",
            testing::bare_loop_ns(|| {
                black_box(convert::traces(&traces, Writing::Reused).unwrap());
            }),
        ),
        (
            "logs decode_and_convert",
            testing::bare_loop_ns(|| {
                black_box(convert::logs(&ExportLogsServiceRequest::decode(&lb[..]).unwrap(), Writing::Reused).unwrap());
            }),
        ),
        (
            "logs convert_only",
            testing::bare_loop_ns(|| {
                black_box(convert::logs(&logs, Writing::Reused).unwrap());
            }),
        ),
        (
            "metrics decode_and_convert",
            testing::bare_loop_ns(|| {
                black_box(
                    convert::metrics(&ExportMetricsServiceRequest::decode(&mb[..]).unwrap(), Writing::Reused).unwrap(),
                );
            }),
        ),
        (
            "metrics convert_only",
            testing::bare_loop_ns(|| {
                black_box(convert::metrics(&metrics, Writing::Reused).unwrap());
            }),
        ),
    ];
    for (name, ns) in rows {
        println!("{name}: {:.1} µs", ns / 1e3);
    }
}
