//! `Bencher`: Criterion's own under `cargo bench`, or one batch the host asked for under benchhost, timed as
//! Criterion times each method (its timing model, written beside each).

use std::hint::black_box;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use criterion::BatchSize;
use criterion::measurement::{Measurement, WallTime};

use crate::session::Reply;

/// The timer passed to a benchmark's closure: call one of its `iter` methods with the routine to time.
pub struct Bencher<'a, M: Measurement = WallTime> {
    pub(crate) inner: Inner<'a, M>,
}

pub(crate) enum Inner<'a, M: Measurement> {
    /// Criterion's bencher, for the length of the closure's call.
    Real(NonNull<criterion::Bencher<'a, M>>),
    /// One batch of the host's, for the length of the closure's call.
    Timed(NonNull<Timed>, PhantomData<&'a mut M>),
}

/// One batch the host asked for: its iterations, and what the bench's `iter` method timed of them.
pub(crate) struct Timed {
    iters: u64,
    elapsed: Option<Duration>,
    failure: Option<String>,
}

impl Timed {
    pub(crate) fn new(iters: u64) -> Timed {
        Timed { iters, elapsed: None, failure: None }
    }

    /// The batch's answer to the host.
    pub(crate) fn reply(self, id: &str) -> Reply {
        match (self.failure, self.elapsed) {
            (Some(why), _) => Reply::Failed(format!("benchmark `{id}`: {why}")),
            (None, Some(elapsed)) => Reply::Elapsed(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)),
            (None, None) => Reply::Failed(format!(
                "benchmark `{id}`: its closure called no `iter` method of its Bencher (Criterion panics so too)"
            )),
        }
    }

    /// Adds a timed part of the batch.
    pub(crate) fn record(&mut self, elapsed: Duration) {
        self.elapsed = Some(self.elapsed.unwrap_or_default() + elapsed);
    }

    #[cfg(feature = "async")]
    pub(crate) fn iters(&self) -> u64 {
        self.iters
    }

    #[cfg(feature = "async")]
    pub(crate) fn fail(&mut self, why: String) {
        self.failure = Some(why);
    }
}

impl<'a, M: Measurement> Bencher<'a, M> {
    pub(crate) fn real(bencher: &mut criterion::Bencher<'a, M>) -> Self {
        Bencher { inner: Inner::Real(NonNull::from(bencher)) }
    }

    pub(crate) fn timed(timed: &mut Timed) -> Self {
        Bencher { inner: Inner::Timed(NonNull::from(timed), PhantomData) }
    }

    /// Criterion's bencher, or the batch: each lives for the closure's call, and so does `self`.
    pub(crate) fn parts(&mut self) -> Parts<'_, 'a, M> {
        // SAFETY: both pointers were made from `&mut` borrows that outlive the closure call this bencher is
        // passed to, and `self` is borrowed mutably for as long as the reference is used.
        match &mut self.inner {
            Inner::Real(real) => Parts::Real(unsafe { real.as_mut() }),
            Inner::Timed(timed, _) => Parts::Timed(unsafe { timed.as_mut() }),
        }
    }

    /// Times `iters` calls of `routine`, its output dropped inside the timer:
    /// `elapsed = iters * (routine + drop(O))`.
    pub fn iter<O, R: FnMut() -> O>(&mut self, mut routine: R) {
        match self.parts() {
            Parts::Real(b) => b.iter(routine),
            Parts::Timed(t) => {
                let start = Instant::now();
                for _ in 0..t.iters {
                    black_box(routine());
                }
                t.record(start.elapsed());
            }
        }
    }

    /// The routine times itself: it is given the iterations and returns how long they took. Under benchhost its
    /// `Duration` is the batch's time (wall time is the one measurement benchhost takes).
    pub fn iter_custom<R: FnMut(u64) -> M::Value>(&mut self, mut routine: R) {
        match self.parts() {
            Parts::Real(b) => b.iter_custom(routine),
            Parts::Timed(t) => match wall_time::<M>(routine(t.iters)) {
                Some(elapsed) => t.record(elapsed),
                None => t.failure = Some(custom_measurement::<M>()),
            },
        }
    }

    /// Each input made by `setup` outside the timer, one at a time (`BatchSize::PerIteration`).
    pub fn iter_with_setup<I, O, S: FnMut() -> I, R: FnMut(I) -> O>(&mut self, setup: S, routine: R) {
        self.iter_batched(setup, routine, BatchSize::PerIteration);
    }

    /// The outputs dropped outside the timer, in batches (`BatchSize::SmallInput`).
    pub fn iter_with_large_drop<O, R: FnMut() -> O>(&mut self, mut routine: R) {
        self.iter_batched(|| (), |_| routine(), BatchSize::SmallInput);
    }

    /// Inputs made by `setup` and outputs dropped outside the timer, `size` at a time:
    /// `elapsed = (clock * batches) + iters * routine + Vec::extend`.
    pub fn iter_batched<I, O, S: FnMut() -> I, R: FnMut(I) -> O>(
        &mut self,
        mut setup: S,
        mut routine: R,
        size: BatchSize,
    ) {
        match self.parts() {
            Parts::Real(b) => b.iter_batched(setup, routine, size),
            Parts::Timed(t) if iters_per_batch(size, t.iters) == 1 => each(t, || {
                let input = black_box(setup());
                let start = Instant::now();
                let output = routine(input);
                let elapsed = start.elapsed();
                drop(black_box(output));
                elapsed
            }),
            Parts::Timed(t) => batched(t, size, |n| {
                let inputs = black_box((0..n).map(|_| setup()).collect::<Vec<_>>());
                let mut outputs = Vec::with_capacity(n as usize);
                let start = Instant::now();
                outputs.extend(inputs.into_iter().map(&mut routine));
                let elapsed = start.elapsed();
                black_box(outputs);
                elapsed
            }),
        }
    }

    /// As [`Bencher::iter_batched`], the routine given each input by reference.
    pub fn iter_batched_ref<I, O, S: FnMut() -> I, R: FnMut(&mut I) -> O>(
        &mut self,
        mut setup: S,
        mut routine: R,
        size: BatchSize,
    ) {
        match self.parts() {
            Parts::Real(b) => b.iter_batched_ref(setup, routine, size),
            Parts::Timed(t) if iters_per_batch(size, t.iters) == 1 => each(t, || {
                let mut input = black_box(setup());
                let start = Instant::now();
                let output = routine(&mut input);
                let elapsed = start.elapsed();
                drop(black_box(output));
                drop(input);
                elapsed
            }),
            Parts::Timed(t) => batched(t, size, |n| {
                let mut inputs = black_box((0..n).map(|_| setup()).collect::<Vec<_>>());
                let mut outputs = Vec::with_capacity(n as usize);
                let start = Instant::now();
                outputs.extend(inputs.iter_mut().map(&mut routine));
                let elapsed = start.elapsed();
                black_box(outputs);
                drop(inputs);
                elapsed
            }),
        }
    }

    /// The same methods for a routine that returns a future, run to completion by `runner`.
    #[cfg(feature = "async")]
    pub fn to_async<'b, A: criterion::async_executor::AsyncExecutor>(
        &'b mut self,
        runner: A,
    ) -> crate::async_bencher::AsyncBencher<'a, 'b, A, M> {
        crate::async_bencher::AsyncBencher::new(self, runner)
    }
}

pub(crate) enum Parts<'s, 'a, M: Measurement> {
    Real(&'s mut criterion::Bencher<'a, M>),
    Timed(&'s mut Timed),
}

/// The batch's iterations one at a time, each timed by `one()` (its input made and its output dropped outside),
/// the times summed: `BatchSize::PerIteration`, `elapsed = iters * (clock + routine)`.
pub(crate) fn each(t: &mut Timed, mut one: impl FnMut() -> Duration) {
    t.elapsed = Some(Duration::ZERO);
    for _ in 0..t.iters {
        t.record(one());
    }
}

/// The batch's iterations in batches of `size` (Criterion's `BatchSize::iters_per_batch`), each timed by
/// `batch(n)`, the times summed.
pub(crate) fn batched(t: &mut Timed, size: BatchSize, mut batch: impl FnMut(u64) -> Duration) {
    let per = iters_per_batch(size, t.iters);
    if per == 0 {
        t.failure = Some("`BatchSize::NumIterations(0)`: a batch size must not be zero".into());
        return;
    }
    let mut done = 0;
    t.elapsed = Some(Duration::ZERO);
    while done < t.iters {
        let n = per.min(t.iters - done);
        t.record(batch(n));
        done += n;
    }
}

/// Criterion 0.8's `BatchSize::iters_per_batch` (private there).
pub(crate) fn iters_per_batch(size: BatchSize, iters: u64) -> u64 {
    match size {
        BatchSize::SmallInput => iters.div_ceil(10),
        BatchSize::LargeInput => iters.div_ceil(1000),
        BatchSize::PerIteration => 1,
        BatchSize::NumBatches(batches) => iters.div_ceil(batches.max(1)),
        BatchSize::NumIterations(size) => size,
        _ => 1,
    }
}

/// A value of measurement `M` as wall time: `Some` only for Criterion's `WallTime`, whose value is a `Duration`.
pub(crate) fn wall_time<M: Measurement>(value: M::Value) -> Option<Duration> {
    let same = std::any::type_name::<M>() == std::any::type_name::<WallTime>()
        && std::mem::size_of::<M::Value>() == std::mem::size_of::<Duration>();
    if !same {
        return None;
    }
    // SAFETY: `M` is `WallTime`, whose `Value` is `Duration`: the same type, read once and not dropped twice.
    let elapsed = unsafe { std::mem::transmute_copy::<M::Value, Duration>(&value) };
    std::mem::forget(value);
    Some(elapsed)
}

/// Why a custom measurement cannot run under benchhost.
pub(crate) fn custom_measurement<M>() -> String {
    format!(
        "it measures with `{}`, a custom `Measurement`: benchhost times wall-clock time only (run it with `cargo \
         bench`, or give it Criterion's default `WallTime`)",
        std::any::type_name::<M>()
    )
}
