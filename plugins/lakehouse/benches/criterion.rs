//! The rigs of this plugin under Criterion (`cargo bench -p rig-lakehouse --bench criterion`), through
//! benchhost_plugin_api's adapter: the same code benchhost loads, for teams that keep Criterion's workflow.

use benchhost_plugin_api::criterion::bench;
use criterion::{Criterion, criterion_group, criterion_main};
use rig_lakehouse::rigs::compaction::Compaction;
use rig_lakehouse::rigs::querier::Querier;
use serde_json::json;

fn rigs(c: &mut Criterion) {
    bench::<Compaction>(c, json!({"files": 6, "rows_per_file": 100}));
    bench::<Querier>(c, json!({"shape": "recent_first_topk"}));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = rigs
}
criterion_main!(benches);
