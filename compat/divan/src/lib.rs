//! Divan 0.1 for `cargo bench`, and the same benchmarks as benchhost rigs: rename this crate in as `divan` and
//! the suite is unchanged.
//!
//! ```toml
//! [dev-dependencies]
//! divan = { package = "benchhost-divan", path = "../benchhost/compat/divan" }
//! ```
//!
//! Under `cargo bench` Divan itself runs every bench: its own attribute macros, command line, tree and
//! statistics (the entries the macros make here are handed to Divan's runner before it starts).
//! `benchhost build --benches` also compiles each bench target as a plugin library: one rig per bench target
//! (its crate name), one cell per benchmark (Divan's path of it, `crate::module::function::arg`), each timed as
//! Divan times the `Bencher` method it calls, in benchhost's paired processes and over code layouts.
//!
//! # Examples
//! ```no_run
//! # extern crate benchhost_divan as divan;
//! fn main() {
//!     divan::main();
//! }
//!
//! #[divan::bench(args = [10, 20])]
//! fn fib(n: u64) -> u64 {
//!     if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
//! }
//!
//! #[divan::bench]
//! fn sum(bencher: divan::Bencher) {
//!     bencher.with_inputs(|| (0..1000u64).collect::<Vec<_>>()).bench_refs(|v| v.iter().sum::<u64>());
//! }
//! ```

mod bencher;
mod plugin;
mod real;
mod serve;
#[cfg(test)]
mod tests;

pub use bencher::{Bencher, BencherConfig};
#[doc(hidden)]
pub use bencher::{Count, Counted, CountedAs, Uncounted, Unit};
pub use real::{Divan, IntoRegex, main};

// Divan's own items, unchanged: its attribute macros (whose code names `::divan::__private`, this crate's),
// counters and helpers.
pub use divan::{AllocProfiler, bench, bench_group, black_box, black_box_drop, counter};

/// What a bench file usually imports.
pub mod prelude {
    pub use crate::{AllocProfiler, Bencher, Divan, bench, bench_group, black_box, black_box_drop};
}

/// What the macros expand to; not part of the API.
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

// The rig of whichever bench target links this crate: found by the host in the plugin library of the target.
benchhost_plugin_api::export_entries!([plugin::ENTRY]);
