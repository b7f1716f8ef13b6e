//! The wal rigs' core operations as bare loops, to see what the rigs add. `wal`: one IPC stream encode and
//! decode of the same 1,000-span batch per codec (median of 30 batches of ~100 ms; compare with the rig's
//! `roundtrip_time`). `wal_log`: 10,000 appends of the same 100-span zstd record to a fresh log with fsync
//! none, without the rig's per-append clock and histogram (median of 5 runs; compare with `appends_per_s`).
//! Measured, alternating: `wal` none 1,000 rows bare 125.0 / 127.0 µs, rig 130.2 / 129.2 µs (+2-4%);
//! `wal_log` none bare 64,254-76,081 appends/s over two runs, rig 63,367 (results/wal_log.jsonl): inside the
//! bare loop's own spread. (Those bare numbers predate `bare_loop_ns` settling the heap; zstd is the arm that
//! moves with it: 1.31 ms unsettled, 0.87 ms settled, rig 0.77-0.83 ms.)
//!
//! `cargo run --release -p rig-wal --example wal_bare_loop`

use std::hint::black_box;
use std::time::Instant;

use benchhost_plugin_api::testing;
use rig_wal::log::{Fsync, Log};
use rig_wal::{Compression, decode, encode};

fn main() {
    let batch = seed_schemas::fixture::traces(1000).unwrap();
    for compression in [Compression::None, Compression::Lz4, Compression::Zstd] {
        let ns = testing::bare_loop_ns(|| {
            black_box(decode(&encode(&batch, compression).unwrap()).unwrap());
        });
        println!("wal {compression:?} 1000 rows: {:.1} µs per round trip", ns / 1e3);
    }
    let payload = encode(&seed_schemas::fixture::traces(100).unwrap(), Compression::Zstd).unwrap();
    let mut rates: Vec<f64> = (0..5)
        .map(|run| {
            let dir = std::env::temp_dir().join(format!("wal-bare-loop-{}-{run}", std::process::id()));
            let mut log = Log::create(&dir, 8 << 20, Fsync::None).unwrap();
            let start = Instant::now();
            for seq in 0..10_000u64 {
                let mut record = Vec::with_capacity(8 + payload.len());
                record.extend_from_slice(&seq.to_le_bytes());
                record.extend_from_slice(&payload);
                log.append(&record).unwrap();
            }
            let rate = 10_000.0 / start.elapsed().as_secs_f64();
            drop(log);
            std::fs::remove_dir_all(&dir).unwrap();
            rate
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    println!("wal_log fsync none: {:.0} appends/s", rates[2]);
}
