//! `Bencher::to_async(runner)`: the routine returns a future, which `runner` runs to completion; the timer
//! runs inside `block_on`, as Criterion's does, so the executor's own entry is paid once a batch.

use std::future::Future;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::BatchSize;
use criterion::async_executor::AsyncExecutor;
use criterion::measurement::Measurement;

use crate::bencher::{Bencher, Parts, Timed, custom_measurement, iters_per_batch, wall_time};

/// A [`Bencher`] whose routines are async, run by `runner`.
pub struct AsyncBencher<'a, 'b, A: AsyncExecutor, M: Measurement = criterion::measurement::WallTime> {
    inner: Inner<'a, 'b, A, M>,
}

enum Inner<'a, 'b, A: AsyncExecutor, M: Measurement> {
    Real(criterion::AsyncBencher<'a, 'b, A, M>),
    Timed(&'b mut Timed, A),
}

impl<'a, 'b, A: AsyncExecutor, M: Measurement> AsyncBencher<'a, 'b, A, M> {
    pub(crate) fn new(bencher: &'b mut Bencher<'a, M>, runner: A) -> Self {
        let inner = match bencher.parts() {
            Parts::Real(b) => Inner::Real(b.to_async(runner)),
            Parts::Timed(t) => Inner::Timed(t, runner),
        };
        AsyncBencher { inner }
    }
}

impl<'a, 'b, A: AsyncExecutor, M: Measurement> AsyncBencher<'a, 'b, A, M> {
    /// Times `iters` awaits of `routine()`.
    pub fn iter<O, R: FnMut() -> F, F: Future<Output = O>>(&mut self, mut routine: R) {
        match &mut self.inner {
            Inner::Real(b) => b.iter(routine),
            Inner::Timed(t, runner) => {
                let iters = t.iters();
                let elapsed = runner.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        black_box(routine().await);
                    }
                    start.elapsed()
                });
                t.record(elapsed);
            }
        }
    }

    /// The routine times itself, given the iterations.
    pub fn iter_custom<R: FnMut(u64) -> F, F: Future<Output = M::Value>>(&mut self, mut routine: R) {
        match &mut self.inner {
            Inner::Real(b) => b.iter_custom(routine),
            Inner::Timed(t, runner) => {
                let value = runner.block_on(routine(t.iters()));
                match wall_time::<M>(value) {
                    Some(elapsed) => t.record(elapsed),
                    None => t.fail(custom_measurement::<M>()),
                }
            }
        }
    }

    /// Each input made outside the timer, one at a time.
    #[doc(hidden)]
    pub fn iter_with_setup<I, O, S: FnMut() -> I, R: FnMut(I) -> F, F: Future<Output = O>>(
        &mut self,
        setup: S,
        routine: R,
    ) {
        self.iter_batched(setup, routine, BatchSize::PerIteration);
    }

    /// The outputs dropped outside the timer.
    pub fn iter_with_large_drop<O, R: FnMut() -> F, F: Future<Output = O>>(&mut self, mut routine: R) {
        self.iter_batched(|| (), |_| routine(), BatchSize::SmallInput);
    }

    /// All inputs made outside the timer, in one batch.
    #[doc(hidden)]
    pub fn iter_with_large_setup<I, O, S: FnMut() -> I, R: FnMut(I) -> F, F: Future<Output = O>>(
        &mut self,
        setup: S,
        routine: R,
    ) {
        self.iter_batched(setup, routine, BatchSize::NumBatches(1));
    }

    /// Inputs made and outputs dropped outside the timer, `size` at a time.
    pub fn iter_batched<I, O, S: FnMut() -> I, R: FnMut(I) -> F, F: Future<Output = O>>(
        &mut self,
        mut setup: S,
        mut routine: R,
        size: BatchSize,
    ) {
        match &mut self.inner {
            Inner::Real(b) => b.iter_batched(setup, routine, size),
            Inner::Timed(t, runner) => {
                let elapsed = runner.block_on(async {
                    let mut total = Duration::ZERO;
                    for n in batches(t, size) {
                        if n == 1 && iters_per_batch(size, t.iters()) == 1 {
                            let input = black_box(setup());
                            let start = Instant::now();
                            let output = routine(input).await;
                            total += start.elapsed();
                            drop(black_box(output));
                            continue;
                        }
                        let inputs = black_box((0..n).map(|_| setup()).collect::<Vec<_>>());
                        let mut outputs = Vec::with_capacity(n as usize);
                        let start = Instant::now();
                        for input in inputs {
                            outputs.push(routine(input).await);
                        }
                        total += start.elapsed();
                        black_box(outputs);
                    }
                    total
                });
                t.record(elapsed);
            }
        }
    }

    /// As [`AsyncBencher::iter_batched`], the routine given each input by reference.
    pub fn iter_batched_ref<I, O, S: FnMut() -> I, R: FnMut(&mut I) -> F, F: Future<Output = O>>(
        &mut self,
        mut setup: S,
        mut routine: R,
        size: BatchSize,
    ) {
        match &mut self.inner {
            Inner::Real(b) => b.iter_batched_ref(setup, routine, size),
            Inner::Timed(t, runner) => {
                let elapsed = runner.block_on(async {
                    let mut total = Duration::ZERO;
                    for n in batches(t, size) {
                        if n == 1 && iters_per_batch(size, t.iters()) == 1 {
                            let mut input = black_box(setup());
                            let start = Instant::now();
                            let output = routine(&mut input).await;
                            total += start.elapsed();
                            drop(black_box(output));
                            continue;
                        }
                        let mut inputs = black_box((0..n).map(|_| setup()).collect::<Vec<_>>());
                        let mut outputs = Vec::with_capacity(n as usize);
                        let start = Instant::now();
                        for input in inputs.iter_mut() {
                            outputs.push(routine(input).await);
                        }
                        total += start.elapsed();
                        black_box(outputs);
                        drop(inputs);
                    }
                    total
                });
                t.record(elapsed);
            }
        }
    }
}

/// The sizes of the batches `size` cuts the batch's iterations into (none when a size is zero, which fails the
/// batch as Criterion's assertion would).
fn batches(t: &mut Timed, size: BatchSize) -> Vec<u64> {
    let (iters, per) = (t.iters(), iters_per_batch(size, t.iters()));
    if per == 0 {
        t.fail("`BatchSize::NumIterations(0)`: a batch size must not be zero".into());
        return Vec::new();
    }
    let mut sizes = Vec::new();
    let mut done = 0;
    while done < iters {
        sizes.push(per.min(iters - done));
        done += per.min(iters - done);
    }
    sizes
}
