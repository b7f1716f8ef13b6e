//! The rigs of this plugin under Criterion (`cargo bench -p rig-kafka-topology --bench criterion`), through
//! benchhost_plugin_api's adapter: the same code benchhost loads, for teams that keep Criterion's workflow.

use benchhost_plugin_api::criterion::bench;
use criterion::{Criterion, criterion_group, criterion_main};
use rig_kafka_topology::KafkaTopology;
use serde_json::json;

fn rigs(c: &mut Criterion) {
    // Run style: each sample is whole drains of 20,000 records from the embedded mock cluster.
    bench::<KafkaTopology>(c, json!({"mode": "split", "messages": 20000, "duration_s": 0}));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = rigs
}
criterion_main!(benches);
