//! The rigs of this plugin under Criterion (`cargo bench -p rig-cache-tier --bench criterion`), through
//! benchhost_plugin_api's adapter: the same code benchhost loads, for teams that keep Criterion's workflow.

use benchhost_plugin_api::criterion::bench;
use criterion::{Criterion, criterion_group, criterion_main};
use rig_cache_tier::CacheTier;
use serde_json::json;

fn rigs(c: &mut Criterion) {
    bench::<CacheTier>(c, json!({"tier": "delta_hit", "upstream": "canned"}));
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = rigs
}
criterion_main!(benches);
