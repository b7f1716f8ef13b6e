//! The rig's core operations as bare loops, to see what the rig (routing, the service, `DoGet`) adds: the delta
//! tier's crop, rebuild and Flight encoding, the object tier's stream of its stored Flight data, and DataFusion
//! answering the passthrough statement and its encoding, over the same data and window as the rig's cells, each
//! the median of 30 batches of ~100 ms. Compare with `results/cache_tier.jsonl` (the rig's `request_time`).
//!
//! `cargo run --release -p rig-cache-tier --example cache_tier_bare_loop`

use std::hint::black_box;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow_flight::FlightData;
use arrow_flight::encode::FlightDataEncoderBuilder;
use benchhost_plugin_api::testing;
use futures::{TryStreamExt, stream};
use rig_cache_tier::data::Window;
use rig_cache_tier::dataset::Dataset;
use rig_cache_tier::upstream::{self, Engine};

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let encode = |schema: SchemaRef, batches: Vec<RecordBatch>| -> Vec<FlightData> {
        let batches = stream::iter(batches.into_iter().map(Ok));
        runtime.block_on(FlightDataEncoderBuilder::new().with_schema(schema).build(batches).try_collect()).unwrap()
    };
    for rows in [100i64, 1000, 10_000] {
        let minutes = rows / 2;
        let (window, extent) = (Window::minutes(minutes / 2, minutes), Window::minutes(0, 2 * minutes));
        let engine = Engine::new(minutes).unwrap();
        let whole = runtime.block_on(engine.answer(&upstream::delta_statement(extent))).unwrap();
        let dataset = Dataset::from_answer(extent, whole.schema.clone(), &whole.batches).unwrap();
        let object = runtime.block_on(engine.answer(&upstream::object_statement(rows as usize))).unwrap();
        let stored = encode(object.schema.clone(), object.batches.clone());
        let passthrough = upstream::passthrough_statement();
        let delta_ns = testing::bare_loop_ns(|| {
            let batch = dataset.crop(window).to_batch().unwrap();
            black_box(encode(dataset.schema().clone(), vec![batch]));
        });
        let object_ns = testing::bare_loop_ns(|| {
            let streamed = stream::iter(stored.clone().into_iter().map(Ok::<_, ()>)).try_collect::<Vec<_>>();
            black_box(runtime.block_on(streamed).unwrap());
        });
        let datafusion_ns = testing::bare_loop_ns(|| {
            let answer = runtime.block_on(engine.answer(&passthrough)).unwrap();
            black_box(encode(answer.schema, answer.batches));
        });
        println!(
            "rows {rows:>6}: delta_hit {:>9.1} µs  object_hit {:>7.2} µs  datafusion passthrough {:>9.1} µs",
            delta_ns / 1e3,
            object_ns / 1e3,
            datafusion_ns / 1e3
        );
    }
}
