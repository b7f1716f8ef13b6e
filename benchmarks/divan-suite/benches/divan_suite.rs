//! A Divan suite written as for Divan itself: args, types and consts, inputs made outside the timer, counters,
//! and a group of its own.

use criterion_suite::{checksum, scrambled};
use divan::Bencher;
use divan::counter::{BytesCount, ItemsCount};

fn main() {
    divan::main();
}

#[divan::bench(args = [1_000, 10_000])]
fn sort(bencher: Bencher, len: usize) {
    bencher.counter(ItemsCount::new(len)).with_inputs(|| scrambled(len, 7)).bench_local_refs(|v| v.sort_unstable());
}

#[divan::bench(types = [u32, u64])]
fn sum<T: From<u8> + std::iter::Sum + Copy + Sync>(bencher: Bencher) {
    let values = vec![T::from(1); 4096];
    bencher.bench(|| divan::black_box(&values).iter().copied().sum::<T>());
}

#[divan::bench(consts = [1024, 65536])]
fn fnv<const N: usize>(bencher: Bencher) {
    let data = vec![7u8; N];
    bencher.counter(BytesCount::new(N)).bench(|| checksum(divan::black_box(&data)));
}

#[divan::bench_group]
mod text {
    #[divan::bench]
    fn format() -> String {
        format!("{}-{}", divan::black_box(1), 2)
    }
}
