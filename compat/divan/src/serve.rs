//! A bench function as benchhost runs it: called on a stack of its own, its `Bencher` method serves the host's
//! batches from inside the call (so whatever the routine borrows of the function stays alive between them),
//! each batch timed as Divan times the method: inputs made, and inputs and outputs dropped, outside the timer.

use std::hint::black_box;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use corosensei::Yielder;
use divan::counter::{BytesCount, CharsCount, CyclesCount, IntoCounter, ItemsCount};

use crate::bencher::Count;

/// What the host asks of a bench served on its own stack.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Command {
    /// Call the bench function up to its `Bencher` method.
    Start,
    /// Time one batch of this many iterations.
    Measure(u64),
    /// Let the bench function return.
    Stop,
}

/// What the bench answers.
#[derive(Debug)]
pub(crate) enum Reply {
    /// The bench function called its `Bencher` method.
    Ready,
    /// A batch took this many nanoseconds.
    Elapsed(u64),
    /// The bench cannot be run under benchhost (the message names why).
    Failed(String),
}

/// The counters' names, in the order of Divan's counter kinds (bytes, chars, cycles, items).
pub(crate) const COUNTERS: [&str; 4] = ["bytes", "chars", "cycles", "items"];

/// What a bench counted: per counter kind, a count per iteration (`counter`, or the bench's options), or the
/// counts of the inputs made (`input_counter`) and how many inputs there were.
#[derive(Debug, Default, Clone)]
pub(crate) struct Tally {
    pub fixed: [Option<u64>; 4],
    inputs: [(u128, u64); 4],
}

impl Tally {
    /// Per counter kind, its count per iteration: the inputs' mean where inputs were counted.
    pub(crate) fn per_iteration(&self) -> [Option<u64>; 4] {
        std::array::from_fn(|k| match self.inputs[k] {
            (sum, n) if n > 0 => Some((sum / u128::from(n)) as u64),
            _ => self.fixed[k],
        })
    }
}

/// A counter's kind and value. Divan keeps a counter's value private; its `Debug` (`BytesCount { count: 64 }`)
/// shows it, and this crate depends on exactly the Divan whose format a test pins.
pub(crate) fn count_of<C: IntoCounter>(counter: C) -> (usize, u64) {
    let counter: Box<dyn std::any::Any> = Box::new(counter.into_counter());
    let (kind, text) = if let Some(c) = counter.downcast_ref::<BytesCount>() {
        (0, format!("{c:?}"))
    } else if let Some(c) = counter.downcast_ref::<CharsCount>() {
        (1, format!("{c:?}"))
    } else if let Some(c) = counter.downcast_ref::<CyclesCount>() {
        (2, format!("{c:?}"))
    } else if let Some(c) = counter.downcast_ref::<ItemsCount>() {
        (3, format!("{c:?}"))
    } else {
        unreachable!("Divan's counters are these four")
    };
    let value = text.split_once("count: ").and_then(|(_, v)| v.trim_end_matches([' ', '}']).parse().ok());
    (kind, value.unwrap_or_else(|| panic!("a Divan counter of another format than this crate reads: {text}")))
}

/// The session of one bench function's call: the coroutine's yielder, and what it counted.
pub(crate) struct Serve {
    yielder: *const Yielder<Command, Reply>,
    /// Why the bench cannot be run here (its options ask for threads), said when it is reached.
    refused: Option<String>,
    pub(crate) tally: Tally,
    pub(crate) reached: bool,
}

/// Inputs made at once, at most: a batch of millions of iterations is made and timed in parts.
const CHUNK_BYTES: usize = 1 << 20;

impl Serve {
    pub(crate) fn new(yielder: &Yielder<Command, Reply>, refused: Option<String>, fixed: [Option<u64>; 4]) -> Serve {
        Serve { yielder, refused, tally: Tally { fixed, ..Tally::default() }, reached: false }
    }

    pub(crate) fn set_counter(&mut self, (kind, value): (usize, u64)) {
        self.tally.fixed[kind] = Some(value);
    }

    /// Serves the host's batches, each timed by `batch(iterations, tally)`, until it stops the bench.
    fn serve(&mut self, mut batch: impl FnMut(u64, &mut Tally) -> Duration) {
        if std::mem::replace(&mut self.reached, true) {
            return; // a second method call in one bench function: Divan times the first only, and so here
        }
        // SAFETY: the yielder is the coroutine's that runs the bench function, which is running: this is inside it.
        let yielder = unsafe { &*self.yielder };
        let mut reply = match self.refused.take() {
            Some(why) => Reply::Failed(why),
            None => Reply::Ready,
        };
        loop {
            match yielder.suspend(reply) {
                Command::Measure(iterations) => {
                    let elapsed = batch(iterations, &mut self.tally);
                    reply = Reply::Elapsed(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX));
                }
                Command::Stop | Command::Start => return,
            }
        }
    }

    /// `bench`, `bench_values` and their `_local` forms: each input passed by value.
    pub(crate) fn values<I, O>(
        mut serve: NonNull<Serve>,
        mut gen_input: impl FnMut() -> I,
        counted: &impl Count<I>,
        mut benched: impl FnMut(I) -> O,
    ) {
        // SAFETY: the session outlives the bench function's call, which this is inside of.
        let serve = unsafe { serve.as_mut() };
        serve.serve(|iterations, tally| {
            timed_in_chunks::<I, O>(iterations, |n| {
                let mut inputs = make(n, &mut gen_input, counted, tally);
                let mut outputs = Vec::with_capacity(if std::mem::needs_drop::<O>() { n } else { 0 });
                let started = Instant::now();
                // Drained, not consumed: the inputs' buffer is freed after the timer.
                for input in inputs.drain(..) {
                    keep(&mut outputs, benched(input));
                }
                let elapsed = started.elapsed();
                drop(outputs);
                drop(inputs);
                elapsed
            })
        });
    }

    /// `bench_refs` and `bench_local_refs`: each input passed by `&mut`, and dropped after the timer.
    pub(crate) fn refs<I, O>(
        mut serve: NonNull<Serve>,
        mut gen_input: impl FnMut() -> I,
        counted: &impl Count<I>,
        mut benched: impl FnMut(&mut I) -> O,
    ) {
        // SAFETY: as in `values`.
        let serve = unsafe { serve.as_mut() };
        serve.serve(|iterations, tally| {
            timed_in_chunks::<I, O>(iterations, |n| {
                let mut inputs = make(n, &mut gen_input, counted, tally);
                let mut outputs = Vec::with_capacity(if std::mem::needs_drop::<O>() { n } else { 0 });
                let started = Instant::now();
                for input in inputs.iter_mut() {
                    keep(&mut outputs, benched(input));
                }
                let elapsed = started.elapsed();
                drop(outputs);
                drop(inputs);
                elapsed
            })
        });
    }
}

/// An output kept to be dropped after the timer (Divan defers the drop of an output that has one), else
/// passed through `black_box`.
#[inline(always)]
fn keep<O>(outputs: &mut Vec<O>, output: O) {
    if std::mem::needs_drop::<O>() {
        outputs.push(output);
    } else {
        black_box(output);
    }
}

/// `n` inputs, each counted when the bench counts inputs.
fn make<I>(n: usize, gen_input: &mut impl FnMut() -> I, counted: &impl Count<I>, tally: &mut Tally) -> Vec<I> {
    let inputs: Vec<I> = (0..n).map(|_| gen_input()).collect();
    for input in &inputs {
        if let Some((kind, value)) = counted.count(input) {
            tally.inputs[kind].0 += u128::from(value);
            tally.inputs[kind].1 += 1;
        }
    }
    inputs
}

/// `iterations` timed in chunks of at most [`CHUNK_BYTES`] of inputs and outputs, their times summed.
fn timed_in_chunks<I, O>(iterations: u64, mut chunk: impl FnMut(usize) -> Duration) -> Duration {
    let per = (size_of::<I>() + size_of::<O>()).max(1);
    let most = (CHUNK_BYTES / per).max(1) as u64;
    let (mut left, mut total) = (iterations, Duration::ZERO);
    while left > 0 {
        let n = left.min(most);
        total += chunk(n as usize);
        left -= n;
    }
    total
}
