//! The rig's core operations as bare loops, to see what the rig adds: the delta tier's crop, rebuild and IPC
//! encode, the object tier's copy of the stored bytes, and DataFusion answering the statement, over the same
//! data and window as the rig's cells, each the median of 30 batches of ~100 ms. Compare with
//! `results/cache_tier.jsonl` (the rig's `request_time`). Measured, alternating with the rig's cells: delta_hit
//! 1,000 rows bare 14.9 / 16.2 µs, rig 15.5 / 16.8 µs (+4%, the template lookup); object_hit 10,000 rows bare
//! 6.24 / 5.43 µs, rig 5.88 / 6.11 µs; DataFusion 1,000 rows bare 1,927 / 1,723 µs, rig 1,852 / 1,671 µs.
//!
//! `cargo run --release -p rig-cache-tier --example cache_tier_bare_loop`

use std::hint::black_box;

use benchhost_plugin_api::testing;
use rig_cache_tier::data::{self, Window};
use rig_cache_tier::tiers::{DeltaTier, ObjectTier};
use rig_cache_tier::upstream::{self, Engine};

fn main() {
    for rows in [100i64, 1000, 10_000] {
        let minutes = rows / 2;
        let (window, extent) = (Window::minutes(minutes / 2, minutes), Window::minutes(0, 2 * minutes));
        let engine = Engine::new(data::raw_table(2 * minutes)).unwrap();
        let statement = upstream::statement(window);
        let mut delta = DeltaTier::default();
        delta.put("t", extent, &engine.answer(&upstream::statement(extent)).unwrap()).unwrap();
        let mut object = ObjectTier::default();
        object.put(&statement, engine.answer(&statement).unwrap());
        let dataset = delta.get("t", window).unwrap();
        let delta_ns = testing::bare_loop_ns(|| {
            let batch = dataset.rebuild(window).unwrap();
            black_box(data::encode(dataset.schema(), &[batch], 256 + rows as usize * 32).unwrap());
        });
        let object_ns = testing::bare_loop_ns(|| {
            black_box(object.get(&statement).unwrap().to_vec());
        });
        let datafusion_ns = testing::bare_loop_ns(|| {
            black_box(engine.answer(&statement).unwrap());
        });
        println!(
            "rows {rows:>6}: delta_hit {:>9.1} µs  object_hit {:>7.2} µs  datafusion {:>9.1} µs",
            delta_ns / 1e3,
            object_ns / 1e3,
            datafusion_ns / 1e3
        );
    }
}
