//! The proof's Criterion side: the same workload functions under Criterion 0.8's defaults
//! (3 s warm-up, 5 s measurement, 100 samples). `cargo bench -p rig-harness --bench criterion -- NAME`.
//! `HARNESS_SPIN_ROUNDS=N` adds the rig's `spin_rounds = N` to every iteration (the proof's injected slowdown).

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rig_harness::workloads::{State, Workload, sort, spin};

fn workloads(c: &mut Criterion) {
    let rounds: u64 = std::env::var("HARNESS_SPIN_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    // As the rig's `iterate`: the workload, then the spin when there is one.
    let spun = move |value: u64| {
        if rounds > 0 {
            black_box(spin(rounds));
        }
        value
    };
    for workload in Workload::ALL {
        let mut state = State::new(workload);
        match workload {
            Workload::Sort10k => c.bench_function(workload.name(), |b| {
                b.iter_batched(|| state.unsorted(), |input| spun(sort(input)), BatchSize::SmallInput)
            }),
            _ => c.bench_function(workload.name(), |b| b.iter(|| spun(state.run()))),
        };
    }
}

criterion_group!(benches, workloads);
criterion_main!(benches);
