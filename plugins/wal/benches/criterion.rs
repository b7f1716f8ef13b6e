//! The rigs of this plugin under Criterion (`cargo bench -p rig-wal --bench criterion`), through
//! benchhost_plugin_api's adapter: the same code benchhost loads, for teams that keep Criterion's workflow.

use benchhost_plugin_api::criterion::bench;
use criterion::{Criterion, criterion_group, criterion_main};
use rig_wal::{Wal, WalLog};
use serde_json::json;

fn rigs(c: &mut Criterion) {
    bench::<Wal>(c, json!({"compression": "zstd"}));
    bench::<WalLog>(c, json!({"fsync": "none"}));
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = rigs
}
criterion_main!(benches);
