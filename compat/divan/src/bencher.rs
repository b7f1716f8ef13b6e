//! `Bencher`: Divan's own under `cargo bench`, or the host's batches under benchhost, each method timed as
//! Divan times it: inputs made and outputs dropped outside the timer.

use std::marker::PhantomData;
use std::ptr::NonNull;

use divan::counter::{Counter, IntoCounter};

use crate::serve::{Serve, count_of};

/// The timer passed to a bench function: call one of its `bench` methods with the routine to time.
pub struct Bencher<'a, 'b, C = BencherConfig> {
    side: Side<'a, 'b>,
    config: C,
}

enum Side<'a, 'b> {
    /// Divan's bencher (its own configuration still the default: inputs are handed to it at the end).
    Real(divan::Bencher<'a, 'b>),
    /// The host's session, for the length of the bench function's call.
    Ours(NonNull<Serve>, PhantomData<(&'a mut (), &'b ())>),
}

/// The configuration a `Bencher` is built up with: its input maker and its input counter.
pub struct BencherConfig<G = Unit, F = Uncounted> {
    gen_input: G,
    counted: F,
}

/// No input maker yet.
#[doc(hidden)]
pub struct Unit;

/// No input counter.
#[doc(hidden)]
pub struct Uncounted;

/// An input counter (`input_counter`, `count_inputs_as`).
#[doc(hidden)]
pub struct Counted<F>(F);

/// The input counter of `count_inputs_as::<C>()`: each input counted as `C` of its value.
#[doc(hidden)]
pub type CountedAs<I, C> = Counted<fn(&I) -> C>;

impl<'a, 'b> Bencher<'a, 'b> {
    pub(crate) fn real(bencher: divan::Bencher<'a, 'b>) -> Self {
        Bencher { side: Side::Real(bencher), config: BencherConfig { gen_input: Unit, counted: Uncounted } }
    }

    pub(crate) fn serving(serve: &'a mut Serve) -> Self {
        let side = Side::Ours(NonNull::from(serve), PhantomData);
        Bencher { side, config: BencherConfig { gen_input: Unit, counted: Uncounted } }
    }

    /// Times `benched`, its output dropped outside the timer.
    pub fn bench<O, B>(self, benched: B)
    where
        B: Fn() -> O + Sync,
    {
        self.with_inputs(|| ()).bench_values(|_: ()| benched());
    }

    /// [`Bencher::bench`] for a routine that is not `Sync` (Divan runs it on the calling thread only).
    pub fn bench_local<O, B>(self, mut benched: B)
    where
        B: FnMut() -> O,
    {
        self.with_inputs(|| ()).bench_local_values(|_: ()| benched());
    }

    /// An input for each iteration, made by `gen_input` outside the timer.
    pub fn with_inputs<G>(self, gen_input: G) -> Bencher<'a, 'b, BencherConfig<G>> {
        Bencher { side: self.side, config: BencherConfig { gen_input, counted: Uncounted } }
    }
}

impl<'a, 'b, G, F> Bencher<'a, 'b, BencherConfig<G, F>> {
    /// What an iteration handles (bytes, chars, cycles, items): a rate metric beside the time.
    pub fn counter<C: IntoCounter>(self, counter: C) -> Self {
        let side = match self.side {
            Side::Real(real) => Side::Real(real.counter(counter)),
            Side::Ours(mut serve, p) => {
                // SAFETY: the session outlives the bench function's call, and so this bencher.
                unsafe { serve.as_mut() }.set_counter(count_of(counter));
                Side::Ours(serve, p)
            }
        };
        Bencher { side, config: self.config }
    }
}

impl<'a, 'b, I, G: FnMut() -> I> Bencher<'a, 'b, BencherConfig<G, Uncounted>> {
    /// What each input handles, counted outside the timer: a rate metric beside the time. One per bencher.
    pub fn input_counter<C, F>(self, make_counter: F) -> Bencher<'a, 'b, BencherConfig<G, Counted<F>>>
    where
        F: Fn(&I) -> C + Sync + 'static,
        C: IntoCounter,
    {
        Bencher {
            side: self.side,
            config: BencherConfig { gen_input: self.config.gen_input, counted: Counted(make_counter) },
        }
    }

    /// Each input counted as `C` of its own value (an input that is a number).
    pub fn count_inputs_as<C>(self) -> Bencher<'a, 'b, BencherConfig<G, CountedAs<I, C>>>
    where
        C: Counter + for<'x> From<&'x I>,
        I: 'static,
    {
        self.input_counter((|input: &I| C::from(input)) as fn(&I) -> C)
    }
}

impl<'a, 'b, I, G: FnMut() -> I, F: Count<I>> Bencher<'a, 'b, BencherConfig<G, F>> {
    /// Times `benched` on each input by value; its output dropped outside the timer.
    pub fn bench_values<O, B>(self, benched: B)
    where
        B: Fn(I) -> O + Sync,
        G: Fn() -> I + Sync,
    {
        let BencherConfig { gen_input, counted } = self.config;
        match self.side {
            Side::Real(real) => counted.real_values(real, gen_input, benched),
            Side::Ours(serve, _) => Serve::values(serve, gen_input, &counted, benched),
        }
    }

    /// [`Bencher::bench_values`] for a routine that is not `Sync`.
    pub fn bench_local_values<O, B>(self, benched: B)
    where
        B: FnMut(I) -> O,
    {
        let BencherConfig { gen_input, counted } = self.config;
        match self.side {
            Side::Real(real) => counted.real_local_values(real, gen_input, benched),
            Side::Ours(serve, _) => Serve::values(serve, gen_input, &counted, benched),
        }
    }

    /// Times `benched` on each input by reference; inputs and outputs dropped outside the timer.
    pub fn bench_refs<O, B>(self, benched: B)
    where
        B: Fn(&mut I) -> O + Sync,
        G: Fn() -> I + Sync,
    {
        let BencherConfig { gen_input, counted } = self.config;
        match self.side {
            Side::Real(real) => counted.real_refs(real, gen_input, benched),
            Side::Ours(serve, _) => Serve::refs(serve, gen_input, &counted, benched),
        }
    }

    /// [`Bencher::bench_refs`] for a routine that is not `Sync`.
    pub fn bench_local_refs<O, B>(self, benched: B)
    where
        B: FnMut(&mut I) -> O,
    {
        let BencherConfig { gen_input, counted } = self.config;
        match self.side {
            Side::Real(real) => counted.real_local_refs(real, gen_input, benched),
            Side::Ours(serve, _) => Serve::refs(serve, gen_input, &counted, benched),
        }
    }
}

/// An input counter or none: counts an input for benchhost, and hands itself to Divan's bencher.
#[doc(hidden)]
pub trait Count<I> {
    /// The input's count, when counted: its counter's kind and value.
    fn count(&self, input: &I) -> Option<(usize, u64)>;

    fn real_values<O, G: Fn() -> I + Sync, B: Fn(I) -> O + Sync>(self, real: divan::Bencher, gen_input: G, benched: B);
    fn real_local_values<O, G: FnMut() -> I, B: FnMut(I) -> O>(self, real: divan::Bencher, gen_input: G, benched: B);
    fn real_refs<O, G: Fn() -> I + Sync, B: Fn(&mut I) -> O + Sync>(
        self,
        real: divan::Bencher,
        gen_input: G,
        benched: B,
    );
    fn real_local_refs<O, G: FnMut() -> I, B: FnMut(&mut I) -> O>(self, real: divan::Bencher, gen_input: G, benched: B);
}

impl<I> Count<I> for Uncounted {
    fn count(&self, _: &I) -> Option<(usize, u64)> {
        None
    }
    fn real_values<O, G: Fn() -> I + Sync, B: Fn(I) -> O + Sync>(self, real: divan::Bencher, gen_input: G, benched: B) {
        real.with_inputs(gen_input).bench_values(benched)
    }
    fn real_local_values<O, G: FnMut() -> I, B: FnMut(I) -> O>(self, real: divan::Bencher, gen_input: G, benched: B) {
        real.with_inputs(gen_input).bench_local_values(benched)
    }
    fn real_refs<O, G: Fn() -> I + Sync, B: Fn(&mut I) -> O + Sync>(
        self,
        real: divan::Bencher,
        gen_input: G,
        benched: B,
    ) {
        real.with_inputs(gen_input).bench_refs(benched)
    }
    fn real_local_refs<O, G: FnMut() -> I, B: FnMut(&mut I) -> O>(
        self,
        real: divan::Bencher,
        gen_input: G,
        benched: B,
    ) {
        real.with_inputs(gen_input).bench_local_refs(benched)
    }
}

impl<I, C: IntoCounter, F: Fn(&I) -> C + Sync + 'static> Count<I> for Counted<F> {
    fn count(&self, input: &I) -> Option<(usize, u64)> {
        Some(count_of((self.0)(input)))
    }
    fn real_values<O, G: Fn() -> I + Sync, B: Fn(I) -> O + Sync>(self, real: divan::Bencher, gen_input: G, benched: B) {
        real.with_inputs(gen_input).input_counter(self.0).bench_values(benched)
    }
    fn real_local_values<O, G: FnMut() -> I, B: FnMut(I) -> O>(self, real: divan::Bencher, gen_input: G, benched: B) {
        real.with_inputs(gen_input).input_counter(self.0).bench_local_values(benched)
    }
    fn real_refs<O, G: Fn() -> I + Sync, B: Fn(&mut I) -> O + Sync>(
        self,
        real: divan::Bencher,
        gen_input: G,
        benched: B,
    ) {
        real.with_inputs(gen_input).input_counter(self.0).bench_refs(benched)
    }
    fn real_local_refs<O, G: FnMut() -> I, B: FnMut(&mut I) -> O>(
        self,
        real: divan::Bencher,
        gen_input: G,
        benched: B,
    ) {
        real.with_inputs(gen_input).input_counter(self.0).bench_local_refs(benched)
    }
}
