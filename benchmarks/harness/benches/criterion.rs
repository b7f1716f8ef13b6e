//! The proof's Criterion side: the same workload functions under Criterion 0.8's defaults
//! (3 s warm-up, 5 s measurement, 100 samples). `cargo bench -p rig-harness --bench criterion -- NAME`.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rig_harness::workloads::{State, Workload, sort};

fn workloads(c: &mut Criterion) {
    for workload in Workload::ALL {
        let mut state = State::new(workload);
        match workload {
            Workload::Sort10k => {
                c.bench_function(workload.name(), |b| b.iter_batched(|| state.unsorted(), sort, BatchSize::SmallInput))
            }
            _ => c.bench_function(workload.name(), |b| b.iter(|| state.run())),
        };
    }
}

criterion_group!(benches, workloads);
criterion_main!(benches);
