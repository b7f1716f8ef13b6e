//! What `#[divan::bench]` and `#[divan::bench_group]` expand to: Divan's own macros, whose code names
//! `::divan::__private` (this module, in a crate renamed in as `divan`). The entries they make are kept here,
//! each with two runners: Divan's (for `cargo bench`, where [`crate::real`] hands every entry to Divan itself)
//! and ours (for benchhost, where [`crate::plugin`] runs them). Both call the same bench function, with a
//! [`Bencher`] that is Divan's or the host's batch.

use std::any::Any;
use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{LazyLock, OnceLock};

// Divan's own, unchanged: none of them holds a bench function.
pub use divan::__private::{
    Arg, BenchOptions, EntryLocation, IntoDuration, IntoThreads, ToStringHelper, new_counter_set, shrink_array,
};

use crate::Bencher;

thread_local! {
    /// Whether this thread serves benchhost (set where the host describes or sets up the bench target); else,
    /// and always under `cargo bench`, args are made for Divan.
    pub(crate) static SERVING: Cell<bool> = const { Cell::new(false) };
}

/// An entry's metadata, as Divan's (the same fields: the macros name them).
pub struct EntryMeta {
    pub display_name: &'static str,
    pub raw_name: &'static str,
    pub module_path: &'static str,
    pub location: EntryLocation,
    pub bench_options: Option<LazyLock<BenchOptions<'static>>>,
}

/// A `#[divan::bench]` function without generics.
pub struct BenchEntry {
    pub meta: EntryMeta,
    pub bench: BenchEntryRunner,
}

/// A module of `#[divan::bench_group]`, or a generic `#[divan::bench]` with its instances.
pub struct GroupEntry {
    pub meta: EntryMeta,
    pub generic_benches: Option<&'static [&'static [GenericBenchEntry]]>,
}

/// One instance of a generic `#[divan::bench]` (a type of `types`, a value of `consts`).
pub struct GenericBenchEntry {
    pub group: &'static GroupEntry,
    pub bench: BenchEntryRunner,
    pub ty: Option<EntryType>,
    pub const_value: Option<EntryConst>,
}

/// How a bench function is called: by Divan (`real`) and by benchhost (`ours`).
#[derive(Clone, Copy)]
pub struct BenchEntryRunner {
    pub(crate) real: divan::__private::BenchEntryRunner,
    pub(crate) ours: Runner,
}

/// The bench function as benchhost calls it.
#[derive(Clone, Copy)]
pub(crate) enum Runner {
    Plain(fn(Bencher)),
    Args(fn() -> BenchArgsRunner),
}

/// A closure or function item that captures nothing, made from nothing: the macros hand over such values only,
/// so that a plain `fn` pointer can stand for each (Divan's own runner does the same).
fn conjure<F: Copy>() -> F {
    assert_eq!(size_of::<F>(), 0, "a bench closure is expected to capture nothing");
    // SAFETY: `F` is zero-sized and inhabited (a value of it was passed in), so any bytes are a value of it.
    unsafe { std::mem::zeroed() }
}

#[allow(non_snake_case)]
impl BenchEntryRunner {
    /// A bench function called with a [`Bencher`] (the macros' `BenchEntryRunner::Plain(f)`).
    pub const fn Plain<F: for<'a, 'b> Fn(Bencher<'a, 'b>) + Copy>(_f: F) -> Self {
        BenchEntryRunner {
            real: divan::__private::BenchEntryRunner::Plain(real_plain::<F>),
            ours: Runner::Plain(ours_plain::<F>),
        }
    }

    /// A bench function over `args` (the macros' `BenchEntryRunner::Args(|| __DIVAN_ARGS.runner(...))`).
    pub const fn Args<F: Fn() -> BenchArgsRunner + Copy>(_f: F) -> Self {
        BenchEntryRunner {
            // A closure, not a function: the type Divan's runner returns has no name outside Divan, and only a
            // closure's return type can be inferred (from the variant's `fn() -> _`).
            real: divan::__private::BenchEntryRunner::Args(|| match conjure::<F>()() {
                BenchArgsRunner::Real(runner) => *runner.downcast().expect("Divan's own args runner"),
                BenchArgsRunner::Ours(_) => {
                    unreachable!("Divan runs a bench's args while benchhost serves this thread")
                }
            }),
            ours: Runner::Args(conjure_call::<F>),
        }
    }
}

fn real_plain<F: for<'a, 'b> Fn(Bencher<'a, 'b>) + Copy>(bencher: divan::Bencher) {
    conjure::<F>()(Bencher::real(bencher))
}

fn ours_plain<F: for<'a, 'b> Fn(Bencher<'a, 'b>) + Copy>(bencher: Bencher) {
    conjure::<F>()(bencher)
}

fn conjure_call<F: Fn() -> BenchArgsRunner + Copy>() -> BenchArgsRunner {
    conjure::<F>()()
}

/// The `args` of one bench function, made once per process: for Divan or for benchhost.
pub struct BenchArgs {
    real: divan::__private::BenchArgs,
    ours: OnceLock<OurArgs>,
}

/// The args as benchhost runs them: each by its name, the bench function called with the one asked for.
#[derive(Clone, Copy)]
pub struct OurArgs {
    pub(crate) names: &'static [String],
    args: *const (),
    bench: unsafe fn(Bencher, *const (), usize),
}

// SAFETY: `args` points to a leaked slice of an `Any + Send + Sync` type, read only.
unsafe impl Send for OurArgs {}
unsafe impl Sync for OurArgs {}

impl OurArgs {
    /// Calls the bench function with arg `index`.
    pub(crate) fn bench(&self, bencher: Bencher, index: usize) {
        assert!(index < self.names.len(), "arg {index} of {}", self.names.len());
        // SAFETY: `bench` was made with the element type of `args`, of which there are `names.len()`.
        unsafe { (self.bench)(bencher, self.args, index) }
    }
}

/// What an `args` entry's runner gives: Divan's (boxed: its type has no name outside Divan), or ours.
pub enum BenchArgsRunner {
    Real(Box<dyn Any>),
    Ours(OurArgs),
}

impl BenchArgs {
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        BenchArgs { real: divan::__private::BenchArgs::new(), ours: OnceLock::new() }
    }

    /// The runner of `args` for whichever of Divan and benchhost runs this process.
    pub fn runner<I, B>(
        &'static self,
        make_args: impl FnOnce() -> I,
        arg_to_string: impl Fn(&I::Item) -> String,
        _bench: B,
    ) -> BenchArgsRunner
    where
        I: IntoIterator,
        I::Item: Any + Send + Sync,
        B: FnOnce(Bencher, &I::Item) + Copy,
    {
        if !SERVING.get() {
            let real =
                move |bencher: divan::Bencher<'_, '_>, arg: &I::Item| conjure::<B>()(Bencher::real(bencher), arg);
            return BenchArgsRunner::Real(Box::new(self.real.runner(make_args, arg_to_string, real)));
        }
        let ours = self.ours.get_or_init(|| {
            let args: &'static [I::Item] = Vec::leak(make_args().into_iter().collect());
            // Divan names an arg by its text (a `&str`, `String`), else as `arg_to_string` does: the same text.
            let names = Vec::leak(args.iter().map(&arg_to_string).collect());
            OurArgs { names, args: args.as_ptr().cast(), bench: bench_arg::<I::Item, B> }
        });
        BenchArgsRunner::Ours(*ours)
    }
}

/// # Safety
/// `args` points to at least `index + 1` values of `T`.
unsafe fn bench_arg<T, B: FnOnce(Bencher, &T) + Copy>(bencher: Bencher, args: *const (), index: usize) {
    // SAFETY: as the caller promises.
    let arg = unsafe { &*args.cast::<T>().add(index) };
    conjure::<B>()(bencher, arg)
}

/// A type of `types`: its name, and Divan's own entry of it.
pub struct EntryType {
    type_name: fn() -> &'static str,
    pub(crate) real: fn() -> divan::__private::EntryType,
}

impl EntryType {
    pub const fn new<T: Any>() -> Self {
        EntryType { type_name: std::any::type_name::<T>, real: divan::__private::EntryType::new::<T> }
    }

    /// The name Divan shows: the type's path without its leading modules (up to the first generic).
    pub(crate) fn display_name(&self) -> &'static str {
        let mut name = (self.type_name)();
        while let Some((before, after)) = name.split_once("::") {
            if before.contains('<') {
                break;
            }
            name = after;
        }
        name
    }
}

/// A value of `consts`: its text, and Divan's own entry of it.
pub struct EntryConst {
    value: *const (),
    to_string: unsafe fn(*const ()) -> String,
    real: unsafe fn(*const ()) -> divan::__private::EntryConst,
    name: OnceLock<String>,
}

// SAFETY: `value` is a `&'static T` of a `Send + Sync` type.
unsafe impl Send for EntryConst {}
unsafe impl Sync for EntryConst {}

impl EntryConst {
    pub const fn new<T: PartialOrd + ToString + Send + Sync>(value: &'static T) -> Self {
        /// # Safety
        /// `value` is a `&'static T`.
        unsafe fn to_string<T: ToString>(value: *const ()) -> String {
            unsafe { &*value.cast::<T>() }.to_string()
        }
        /// # Safety
        /// `value` is a `&'static T`.
        unsafe fn real<T: PartialOrd + ToString + Send + Sync + 'static>(
            value: *const (),
        ) -> divan::__private::EntryConst {
            divan::__private::EntryConst::new::<T>(unsafe { &*value.cast::<T>() })
        }
        EntryConst {
            value: (value as *const T).cast(),
            to_string: to_string::<T>,
            real: real::<T>,
            name: OnceLock::new(),
        }
    }

    /// The value's text, as Divan names the instance.
    pub(crate) fn name(&self) -> &str {
        // SAFETY: `value` and `to_string` were made from one `&'static T`.
        self.name.get_or_init(|| unsafe { (self.to_string)(self.value) })
    }

    /// Divan's entry of the same value.
    pub(crate) fn real(&self) -> divan::__private::EntryConst {
        // SAFETY: as in `name`.
        unsafe { (self.real)(self.value) }
    }
}

/// The entries the macros push before `main`, newest first (Divan's list, for this crate's entries).
pub struct EntryList<T: 'static> {
    entry: Option<&'static T>,
    next: AtomicPtr<Self>,
}

pub static BENCH_ENTRIES: EntryList<BenchEntry> = EntryList::root();
pub static GROUP_ENTRIES: EntryList<GroupEntry> = EntryList::root();

impl<T> EntryList<T> {
    const fn root() -> Self {
        EntryList { entry: None, next: AtomicPtr::new(std::ptr::null_mut()) }
    }

    pub const fn new(entry: &'static T) -> Self {
        EntryList { entry: Some(entry), next: AtomicPtr::new(std::ptr::null_mut()) }
    }

    /// Adds `node` after the root (the macros call it from the initializers that run before `main`).
    pub fn push(&'static self, node: &'static Self) {
        let mut next = self.next.load(Ordering::Relaxed);
        loop {
            node.next.store(next, Ordering::Release);
            match self.next.compare_exchange_weak(
                next,
                node as *const Self as *mut Self,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(now) => next = now,
            }
        }
    }

    /// The entries, in the order they were pushed.
    pub(crate) fn entries(&'static self) -> Vec<&'static T> {
        let mut out = Vec::new();
        let mut node = Some(self);
        while let Some(list) = node {
            out.extend(list.entry);
            // SAFETY: every `next` is null or a `&'static Self` pushed above.
            node = unsafe { list.next.load(Ordering::Acquire).as_ref() };
        }
        out.reverse();
        out
    }
}
