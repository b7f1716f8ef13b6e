//! The rigs of this plugin under Criterion (`cargo bench -p rig-ingest --bench criterion`), through
//! benchhost_plugin_api's adapter: the same code benchhost loads, for teams that keep Criterion's workflow.

use benchhost_plugin_api::criterion::bench;
use criterion::{Criterion, criterion_group, criterion_main};
use rig_ingest::Ingest;
use serde_json::json;

fn rigs(c: &mut Criterion) {
    bench::<Ingest>(c, json!({"signal": "traces", "stage": "decode_and_convert"}));
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = rigs
}
criterion_main!(benches);
