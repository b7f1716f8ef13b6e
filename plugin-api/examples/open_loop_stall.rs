//! The stall benchmark of `open_loop` (issue 34): operations of ~10 µs, one stall of 200 ms a second into a
//! 5 s run, measured closed loop (each operation when the last ends) and open loop at 20,000/s. Prints one JSON
//! object: the closed loop's percentiles, the open loop's corrected and uncorrected ones, its late operations,
//! worst lateness and achieved rate.
//!
//! `cargo run --release -p benchhost-plugin-api --example open_loop_stall > results/open-loop-stall.json`

use std::time::{Duration, Instant};

use benchhost_plugin_api::open_loop::Schedule;
use hdrhistogram::Histogram;

const RATE: f64 = 20_000.0;
const OPS: u64 = 100_000;
const SERVICE: Duration = Duration::from_micros(10);
const STALL: Duration = Duration::from_millis(200);

fn operation(i: u64) {
    let until = Instant::now() + if i == 20_000 { STALL } else { SERVICE };
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

fn percentiles(h: &Histogram<u64>) -> serde_json::Value {
    let us = |q: f64| (h.value_at_quantile(q) as f64 / 1e3 * 10.0).round() / 10.0;
    serde_json::json!({"p50_us": us(0.5), "p99_us": us(0.99), "p999_us": us(0.999), "max_us": us(1.0)})
}

fn main() {
    let mut closed = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds");
    let start = Instant::now();
    for i in 0..OPS {
        let began = Instant::now();
        operation(i);
        let _ = closed.record(began.elapsed().as_nanos() as u64);
    }
    let closed_s = start.elapsed().as_secs_f64();
    let run = Schedule::per_second(RATE)
        .expect("a valid rate")
        .drive(OPS, |i| {
            operation(i);
            Ok(())
        })
        .expect("no error");
    let out = serde_json::json!({
        "scenario": {"rate_per_s": RATE, "ops": OPS, "service_us": 10, "stall_ms": 200, "stall_at_op": 20_000},
        "closed_loop": {"latency": percentiles(&closed), "achieved_per_s": (OPS as f64 / closed_s).round()},
        "open_loop": {
            "corrected": percentiles(&run.corrected),
            "uncorrected": percentiles(&run.uncorrected),
            "late_ops": run.late,
            "late_ops_arithmetic": (STALL.as_secs_f64() * RATE) / (1.0 - SERVICE.as_secs_f64() * RATE),
            "worst_late_us": (run.worst_late.as_secs_f64() * 1e6).round(),
            "achieved_per_s": run.achieved_per_s().round(),
            "sustained": run.sustained().is_ok(),
        },
    });
    println!("{}", serde_json::to_string_pretty(&out).expect("serializes"));
}
