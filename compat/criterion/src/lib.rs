//! Criterion 0.8 for `cargo bench`, and the same benchmarks as benchhost rigs: rename this crate in as
//! `criterion` and the suite is unchanged.
//!
//! ```toml
//! [dev-dependencies]
//! criterion = { package = "benchhost-criterion", path = "../benchhost/compat/criterion" }
//! ```
//!
//! Under `cargo bench` every type here passes through to Criterion itself: the same ids, output, baselines
//! and reports. `benchhost build --benches` also compiles each bench target as a plugin library: one rig per
//! bench target (its crate name), one cell per benchmark id (`group/function/parameter`), each timed as
//! Criterion times the `Bencher` method it calls, in benchhost's paired processes and over code layouts.
//!
//! # Examples
//! ```no_run
//! use benchhost_criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
//!
//! fn fib(n: u64) -> u64 {
//!     if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
//! }
//!
//! fn bench(c: &mut Criterion) {
//!     c.bench_function("fib 20", |b| b.iter(|| fib(std::hint::black_box(20))));
//!     let mut group = c.benchmark_group("sum");
//!     for n in [1_000u64, 10_000] {
//!         group.throughput(Throughput::Elements(n));
//!         group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| b.iter(|| (0..n).sum::<u64>()));
//!     }
//!     group.finish();
//! }
//!
//! criterion_group!(benches, bench);
//! criterion_main!(benches);
//! ```
#![warn(missing_docs)]

#[cfg(feature = "async")]
mod async_bencher;
mod bencher;
mod group;
mod id;
mod manager;
mod rig;
mod session;
#[cfg(test)]
mod tests;

#[cfg(feature = "async")]
pub use async_bencher::AsyncBencher;
pub use bencher::Bencher;
pub use group::BenchmarkGroup;
pub use id::{BenchmarkId, IntoBenchmarkId};
pub use manager::Criterion;

// Criterion's own items, unchanged: what a suite names besides the types above.
#[cfg(feature = "async")]
pub use ::criterion::async_executor;
#[allow(deprecated)]
pub use ::criterion::black_box;
pub use ::criterion::{
    AxisScale, Baseline, BatchSize, BenchmarkFilter, PlotConfiguration, PlottingBackend, SamplingMode, Throughput,
    measurement, profiler,
};

/// What the macros expand to; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::rig::{Suite, entry};
    pub use benchhost_plugin_api::export_entries;
}

/// Criterion's `criterion_group!`, both forms: `criterion_group!(NAME, TARGET, ...)` and
/// `criterion_group! { name = NAME; config = CONFIG; targets = TARGET, ... }`.
#[macro_export]
macro_rules! criterion_group {
    (name = $name:ident; config = $config:expr; targets = $( $target:path ),+ $(,)*) => {
        /// The function which runs the benchmarks.
        pub fn $name() {
            let mut criterion: $crate::Criterion<_> = $config.configure_from_args();
            $(
                $target(&mut criterion);
            )+
        }
    };
    ($name:ident, $( $target:path ),+ $(,)*) => {
        $crate::criterion_group! {
            name = $name;
            config = $crate::Criterion::default();
            targets = $( $target ),+
        }
    };
}

/// Criterion's `criterion_main!`: the `main` of `cargo bench`, and the bench target's export as a benchhost
/// plugin (used when `benchhost build --benches` compiles the target as a library).
#[macro_export]
macro_rules! criterion_main {
    ( $( $group:path ),+ $(,)* ) => {
        fn main() {
            $(
                $group();
            )+
            $crate::Criterion::default().configure_from_args().final_summary();
        }

        const _: () = {
            struct Suite;
            impl $crate::__private::Suite for Suite {
                const NAME: &'static str = env!("CARGO_CRATE_NAME");
                const GROUPS: &'static [fn()] = &[$( $group ),+];
                const DIR: &'static str = env!("CARGO_MANIFEST_DIR");
            }
            $crate::__private::export_entries!([$crate::__private::entry::<Suite>()]);
        };
    };
}
