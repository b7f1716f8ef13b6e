//! `Criterion`: Criterion's own under `cargo bench`, every setting passed through; under benchhost, where a
//! bench function's benchmarks are listed or served, the settings are the suite's hints and set aside (the
//! host plans its own samples and time), and the command line is never read.

use std::time::Duration;

use criterion::measurement::{Measurement, WallTime};
use criterion::profiler::Profiler;
use criterion::{BenchmarkFilter, PlottingBackend};

use crate::bencher::{Bencher, custom_measurement};
use crate::group::BenchmarkGroup;
use crate::id::BenchmarkId;
use crate::session;

/// The benchmark manager: `c` in `fn bench(c: &mut Criterion)`.
pub struct Criterion<M: Measurement = WallTime> {
    pub(crate) inner: Inner<M>,
}

pub(crate) enum Inner<M: Measurement> {
    /// `cargo bench`: Criterion itself.
    Real(Box<criterion::Criterion<M>>),
    /// Under benchhost; `refused` says why its benchmarks cannot run there (a custom measurement).
    Hosted { refused: Option<String>, _measurement: std::marker::PhantomData<M> },
}

impl Default for Criterion<WallTime> {
    /// Criterion's defaults under `cargo bench`; under benchhost, nothing of Criterion's is made (no report, no
    /// gnuplot probe, no output directory).
    fn default() -> Self {
        let inner = if session::active() {
            Inner::Hosted { refused: None, _measurement: std::marker::PhantomData }
        } else {
            Inner::Real(Box::new(criterion::Criterion::default()))
        };
        Criterion { inner }
    }
}

/// Each of Criterion's settings: passed to Criterion under `cargo bench`, a hint set aside under benchhost.
macro_rules! settings {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*);)+) => {$(
        $(#[$doc])*
        pub fn $name(self, $($arg: $ty),*) -> Criterion<M> {
            match self.inner {
                Inner::Real(c) => Criterion { inner: Inner::Real(Box::new(c.$name($($arg),*))) },
                hosted => Criterion { inner: hosted },
            }
        }
    )+};
}

impl<M: Measurement> Criterion<M> {
    settings! {
        /// Samples per benchmark (`cargo bench`); under benchhost the host plans its own.
        sample_size(n: usize);
        /// Warm-up time (`cargo bench`); under benchhost, the host's `--warmup`.
        warm_up_time(dur: Duration);
        /// Measurement time (`cargo bench`); under benchhost, the host's `--measurement`.
        measurement_time(dur: Duration);
        /// Bootstrap resamples (`cargo bench` only).
        nresamples(n: usize);
        /// Criterion's noise threshold (`cargo bench` only; benchhost's is `--threshold`).
        noise_threshold(threshold: f64);
        /// Criterion's confidence level (`cargo bench` only).
        confidence_level(cl: f64);
        /// Criterion's significance level (`cargo bench` only).
        significance_level(sl: f64);
        /// Plots (`cargo bench` only).
        with_plots();
        /// No plots (`cargo bench` only).
        without_plots();
        /// The plotting backend (`cargo bench` only).
        plotting_backend(backend: PlottingBackend);
        /// Saves a Criterion baseline (`cargo bench` only).
        save_baseline(baseline: String);
        /// Compares with a Criterion baseline (`cargo bench` only).
        retain_baseline(baseline: String, strict: bool);
        /// Colored output (`cargo bench` only).
        with_output_color(enabled: bool);
        /// Criterion's output directory (`cargo bench` only).
        output_directory(path: &std::path::Path);
        /// Profiling mode (`cargo bench` only).
        profile_time(profile_time: Option<Duration>);
    }

    /// A filter of benchmark ids (`cargo bench`); under benchhost, `benchhost run FILTER` filters cells.
    pub fn with_filter<S: Into<String>>(self, filter: S) -> Criterion<M> {
        match self.inner {
            Inner::Real(c) => Criterion { inner: Inner::Real(Box::new(c.with_filter(filter))) },
            hosted => Criterion { inner: hosted },
        }
    }

    /// A filter of benchmark ids (`cargo bench` only).
    pub fn with_benchmark_filter(self, filter: BenchmarkFilter) -> Criterion<M> {
        match self.inner {
            Inner::Real(c) => Criterion { inner: Inner::Real(Box::new(c.with_benchmark_filter(filter))) },
            hosted => Criterion { inner: hosted },
        }
    }

    /// A profiler (`cargo bench --profile-time` only).
    pub fn with_profiler<P: Profiler + 'static>(self, p: P) -> Criterion<M> {
        match self.inner {
            Inner::Real(c) => Criterion { inner: Inner::Real(Box::new(c.with_profiler(p))) },
            hosted => Criterion { inner: hosted },
        }
    }

    /// Another measurement than wall time. Under benchhost its benchmarks fail with the measurement's name:
    /// benchhost times wall-clock time only.
    pub fn with_measurement<M2: Measurement>(self, m: M2) -> Criterion<M2> {
        match self.inner {
            Inner::Real(c) => Criterion { inner: Inner::Real(Box::new(c.with_measurement(m))) },
            Inner::Hosted { .. } => Criterion {
                inner: Inner::Hosted {
                    refused: Some(custom_measurement::<M2>()),
                    _measurement: std::marker::PhantomData,
                },
            },
        }
    }

    /// Criterion's command line (`cargo bench -- ARGS`); under benchhost it is never read.
    pub fn configure_from_args(self) -> Criterion<M> {
        match self.inner {
            Inner::Real(c) => Criterion { inner: Inner::Real(Box::new(c.configure_from_args())) },
            hosted => Criterion { inner: hosted },
        }
    }

    /// Criterion's summary at the end of `cargo bench`; nothing under benchhost.
    pub fn final_summary(&self) {
        if let Inner::Real(c) = &self.inner {
            c.final_summary();
        }
    }

    /// A group of related benchmarks, ids `NAME/...`.
    pub fn benchmark_group<S: Into<String>>(&mut self, group_name: S) -> BenchmarkGroup<'_, M> {
        let name = group_name.into();
        assert!(!name.is_empty(), "Group name must not be empty.");
        match &mut self.inner {
            Inner::Real(c) => BenchmarkGroup::real(c.benchmark_group(name)),
            Inner::Hosted { refused, .. } => BenchmarkGroup::hosted(name, refused.clone()),
        }
    }
}

impl<M: Measurement + 'static> Criterion<M> {
    /// A benchmark of its own, id `id`.
    pub fn bench_function<F: FnMut(&mut Bencher<'_, M>)>(&mut self, id: &str, mut f: F) -> &mut Criterion<M> {
        match &mut self.inner {
            Inner::Real(c) => {
                c.bench_function(id, |b| f(&mut Bencher::real(b)));
            }
            Inner::Hosted { refused, .. } => {
                session::visit(id.to_owned(), None, refused.clone(), &mut |t| f(&mut Bencher::timed(t)));
            }
        }
        self
    }

    /// A benchmark of a function over one input, id `FUNCTION/PARAMETER`.
    pub fn bench_with_input<F: FnMut(&mut Bencher<'_, M>, &I), I>(
        &mut self,
        id: BenchmarkId,
        input: &I,
        mut f: F,
    ) -> &mut Criterion<M> {
        let group = id.function_name.clone().expect(
            "Cannot use BenchmarkId::from_parameter with Criterion::bench_with_input. Consider using a \
             BenchmarkGroup or BenchmarkId::new instead.",
        );
        let parameter = BenchmarkId::from_parameter(id.parameter.clone().unwrap_or_default());
        self.benchmark_group(group).bench_with_input(parameter, input, |b, i| f(b, i));
        self
    }
}
