//! A Criterion suite written as for Criterion itself: groups, ids from data, a throughput, batched inputs, the
//! bench's own clock, and an async routine on a runtime the closure borrows.

use std::time::Instant;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use criterion_suite::{checksum, copy, echo, scrambled, sort};

fn sorting(c: &mut Criterion) {
    let mut group = c.benchmark_group("sort");
    for len in [1_000usize, 10_000] {
        let data = scrambled(len, 7);
        group.throughput(Throughput::Elements(len as u64));
        group.bench_with_input(BenchmarkId::new("unstable", format!("{len}_items")), &data, |b, data| {
            b.iter_batched_ref(|| data.clone(), |d| sort(d), BatchSize::SmallInput)
        });
    }
    group.finish();
}

fn bytes(c: &mut Criterion) {
    let src = vec![7u8; 64 * 1024];
    let mut dst = vec![0u8; 64 * 1024];
    let mut group = c.benchmark_group("bytes");
    group.throughput(Throughput::Bytes(src.len() as u64));
    group.bench_function("copy64k", |b| b.iter(|| copy(&src, &mut dst)));
    group.bench_function("checksum64k", |b| b.iter(|| checksum(std::hint::black_box(&src))));
    group.finish();
    c.bench_function("checksum_own_clock", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                std::hint::black_box(checksum(&src[..4096]));
            }
            start.elapsed()
        })
    });
}

fn asynchronous(c: &mut Criterion) {
    // A current-thread runtime: one thread, as a count of instructions needs.
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("a tokio runtime");
    c.bench_function("echo", |b| b.to_async(&rt).iter(|| echo(std::hint::black_box(42))));
}

criterion_group!(benches, sorting, bytes, asynchronous);
criterion_main!(benches);
