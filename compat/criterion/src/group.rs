//! `BenchmarkGroup`: Criterion's own under `cargo bench`; under benchhost its benchmarks are listed or served
//! under the ids Criterion gives them (`GROUP/FUNCTION/PARAMETER`), its throughput kept for the cell's rate.

use std::time::Duration;

use criterion::measurement::Measurement;
use criterion::{PlotConfiguration, SamplingMode, Throughput};

use crate::bencher::Bencher;
use crate::id::{BenchmarkId, IntoBenchmarkId, full};
use crate::session;

/// Benchmarks that share a name and settings: `c.benchmark_group("NAME")`.
pub struct BenchmarkGroup<'a, M: Measurement> {
    inner: Inner<'a, M>,
}

enum Inner<'a, M: Measurement> {
    Real(criterion::BenchmarkGroup<'a, M>),
    Hosted { name: String, throughput: Option<Throughput>, refused: Option<String> },
}

/// Each group setting: passed to Criterion under `cargo bench`, a hint set aside under benchhost.
macro_rules! settings {
    ($($(#[$doc:meta])* $name:ident($arg:ident: $ty:ty);)+) => {$(
        $(#[$doc])*
        pub fn $name(&mut self, $arg: $ty) -> &mut Self {
            if let Inner::Real(g) = &mut self.inner {
                g.$name($arg);
            }
            self
        }
    )+};
}

impl<'a, M: Measurement> BenchmarkGroup<'a, M> {
    pub(crate) fn real(group: criterion::BenchmarkGroup<'a, M>) -> Self {
        BenchmarkGroup { inner: Inner::Real(group) }
    }

    pub(crate) fn hosted(name: String, refused: Option<String>) -> Self {
        BenchmarkGroup { inner: Inner::Hosted { name, throughput: None, refused } }
    }

    settings! {
        /// Samples per benchmark (`cargo bench`); under benchhost the host plans its own.
        sample_size(n: usize);
        /// Warm-up time (`cargo bench`); under benchhost, the host's `--warmup`.
        warm_up_time(dur: Duration);
        /// Measurement time (`cargo bench`); under benchhost, the host's `--measurement`.
        measurement_time(dur: Duration);
        /// Bootstrap resamples (`cargo bench` only).
        nresamples(n: usize);
        /// Criterion's noise threshold (`cargo bench` only).
        noise_threshold(threshold: f64);
        /// Criterion's confidence level (`cargo bench` only).
        confidence_level(cl: f64);
        /// Criterion's significance level (`cargo bench` only).
        significance_level(sl: f64);
        /// Plot settings (`cargo bench` only).
        plot_config(new_config: PlotConfiguration);
        /// Criterion's sampling mode (`cargo bench` only).
        sampling_mode(new_mode: SamplingMode);
    }

    /// The work of one iteration of the benchmarks that follow: under benchhost, the cells' `bytes_per_s` or
    /// `elements_per_s`.
    pub fn throughput(&mut self, throughput: Throughput) -> &mut Self {
        match &mut self.inner {
            Inner::Real(g) => {
                g.throughput(throughput);
            }
            Inner::Hosted { throughput: kept, .. } => *kept = Some(throughput),
        }
        self
    }

    /// A benchmark of the group, id `GROUP/ID`.
    pub fn bench_function<ID: IntoBenchmarkId, F: FnMut(&mut Bencher<'_, M>)>(
        &mut self,
        id: ID,
        mut f: F,
    ) -> &mut Self {
        self.bench_with_input(id, &(), |b, _| f(b))
    }

    /// A benchmark of the group over one input, id `GROUP/ID`.
    pub fn bench_with_input<ID: IntoBenchmarkId, F: FnMut(&mut Bencher<'_, M>, &I), I: ?Sized>(
        &mut self,
        id: ID,
        input: &I,
        mut f: F,
    ) -> &mut Self {
        let id: BenchmarkId = id.into_benchmark_id();
        match &mut self.inner {
            Inner::Real(g) => match (id.function_only(), id.to_criterion()) {
                (Some(name), _) => {
                    g.bench_with_input(name.to_owned(), input, |b, i| f(&mut Bencher::real(b), i));
                }
                (None, Some(id)) => {
                    g.bench_with_input(id, input, |b, i| f(&mut Bencher::real(b), i));
                }
                (None, None) => unreachable!("an id has a function name or a parameter"),
            },
            Inner::Hosted { name, throughput, refused } => {
                session::visit(full(name, &id), throughput.as_ref(), refused.clone(), &mut |t| {
                    f(&mut Bencher::timed(t), input)
                });
            }
        }
        self
    }

    /// Ends the group (Criterion's summary of it under `cargo bench`).
    pub fn finish(self) {
        if let Inner::Real(g) = self.inner {
            g.finish();
        }
    }
}
