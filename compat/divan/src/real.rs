//! `cargo bench`: Divan itself runs the suite. Before its runner starts, every entry the macros kept here is
//! handed to Divan's own lists, with Divan's runner of the same bench function, so that Divan's command line,
//! filters, tree, statistics and output are all its own.

use std::cell::Cell;
use std::sync::{LazyLock, Once};
use std::time::Duration;

use divan::__private as real;
use divan::counter::{BytesFormat, IntoCounter};

use crate::__private::{BENCH_ENTRIES, BenchOptions, EntryMeta, GROUP_ENTRIES};

/// Hands every entry to Divan, once per process.
pub(crate) fn register() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        for entry in BENCH_ENTRIES.entries() {
            let made = leak(real::BenchEntry { meta: real_meta(&entry.meta), bench: entry.bench.real });
            real::BENCH_ENTRIES.push(leak(real::EntryList::new(made)));
        }
        for group in GROUP_ENTRIES.entries() {
            // A generic bench's instances point to their group, which points to them: they point to a copy of
            // it without them (Divan reads only its metadata through them; it finds groups by name).
            let generic_benches = group.generic_benches.map(|rows| {
                let of: &'static real::GroupEntry =
                    leak(real::GroupEntry { meta: real_meta(&group.meta), generic_benches: None });
                let rows: Vec<&'static [real::GenericBenchEntry]> = rows
                    .iter()
                    .map(|row| -> &'static [real::GenericBenchEntry] {
                        Vec::leak(
                            row.iter()
                                .map(|bench| real::GenericBenchEntry {
                                    group: of,
                                    bench: bench.bench.real,
                                    ty: bench.ty.as_ref().map(|ty| (ty.real)()),
                                    const_value: bench.const_value.as_ref().map(|value| value.real()),
                                })
                                .collect(),
                        )
                    })
                    .collect();
                &*Vec::leak(rows)
            });
            let made = leak(real::GroupEntry { meta: real_meta(&group.meta), generic_benches });
            real::GROUP_ENTRIES.push(leak(real::EntryList::new(made)));
        }
    });
}

fn leak<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

thread_local! {
    /// The options a [`forced`] `LazyLock` is made of, for the one moment it is forced.
    static PENDING: Cell<Option<BenchOptions<'static>>> = const { Cell::new(None) };
}

fn pending() -> BenchOptions<'static> {
    PENDING.take().expect("options are pending while a LazyLock of them is forced")
}

/// A `LazyLock` that holds `options` already: Divan's entry keeps its options in one made of a plain function,
/// and ours were made by a closure of the macro's that only our own `LazyLock` can run.
fn forced(options: BenchOptions<'static>) -> LazyLock<BenchOptions<'static>> {
    PENDING.set(Some(options));
    let lazy = LazyLock::new(pending as fn() -> BenchOptions<'static>);
    LazyLock::force(&lazy);
    lazy
}

fn real_meta(meta: &EntryMeta) -> real::EntryMeta {
    real::EntryMeta {
        display_name: meta.display_name,
        raw_name: meta.raw_name,
        module_path: meta.module_path,
        location: meta.location,
        bench_options: meta.bench_options.as_ref().map(|options| forced(BenchOptions::clone(options))),
    }
}

/// Divan's `main`: runs the suite's benches as `cargo bench` asks (its command line parsed by Divan).
pub fn main() {
    register();
    divan::main();
}

/// Divan's benchmark runner, configured as Divan's is; every entry handed to Divan before it runs.
#[derive(Default, Debug)]
pub struct Divan(divan::Divan);

/// A pattern of `skip_regex`: text, as Divan takes it.
pub trait IntoRegex {
    #[doc(hidden)]
    fn skip(self, divan: divan::Divan) -> divan::Divan;
}

impl IntoRegex for &str {
    fn skip(self, divan: divan::Divan) -> divan::Divan {
        divan.skip_regex(self)
    }
}

impl IntoRegex for String {
    fn skip(self, divan: divan::Divan) -> divan::Divan {
        divan.skip_regex(self)
    }
}

impl Divan {
    pub fn main(&self) {
        register();
        self.0.main()
    }
    pub fn run_benches(&self) {
        register();
        self.0.run_benches()
    }
    pub fn test_benches(&self) {
        register();
        self.0.test_benches()
    }
    pub fn list_benches(&self) {
        register();
        self.0.list_benches()
    }
    pub fn from_args() -> Self {
        Divan(divan::Divan::from_args())
    }
    #[must_use]
    pub fn config_with_args(self) -> Self {
        Divan(self.0.config_with_args())
    }
    #[must_use]
    pub fn color(self, yes: impl Into<Option<bool>>) -> Self {
        Divan(self.0.color(yes))
    }
    #[must_use]
    pub fn run_ignored(self) -> Self {
        Divan(self.0.run_ignored())
    }
    #[must_use]
    pub fn run_only_ignored(self) -> Self {
        Divan(self.0.run_only_ignored())
    }
    #[must_use]
    pub fn skip_regex(self, filter: impl IntoRegex) -> Self {
        Divan(filter.skip(self.0))
    }
    #[must_use]
    pub fn skip_exact(self, filter: impl Into<String>) -> Self {
        Divan(self.0.skip_exact(filter))
    }
    #[must_use]
    pub fn sample_count(self, count: u32) -> Self {
        Divan(self.0.sample_count(count))
    }
    #[must_use]
    pub fn sample_size(self, count: u32) -> Self {
        Divan(self.0.sample_size(count))
    }
    #[must_use]
    pub fn threads<T: IntoIterator<Item = usize>>(self, threads: T) -> Self {
        Divan(self.0.threads(threads))
    }
    #[must_use]
    pub fn min_time(self, time: Duration) -> Self {
        Divan(self.0.min_time(time))
    }
    #[must_use]
    pub fn max_time(self, time: Duration) -> Self {
        Divan(self.0.max_time(time))
    }
    #[must_use]
    pub fn skip_ext_time(self, skip: bool) -> Self {
        Divan(self.0.skip_ext_time(skip))
    }
    #[must_use]
    pub fn counter<C: IntoCounter>(self, counter: C) -> Self {
        Divan(self.0.counter(counter))
    }
    #[must_use]
    pub fn items_count<C: Into<divan::counter::ItemsCount>>(self, count: C) -> Self {
        Divan(self.0.items_count(count))
    }
    #[must_use]
    pub fn bytes_count<C: Into<divan::counter::BytesCount>>(self, count: C) -> Self {
        Divan(self.0.bytes_count(count))
    }
    #[must_use]
    pub fn bytes_format(self, format: BytesFormat) -> Self {
        Divan(self.0.bytes_format(format))
    }
    #[must_use]
    pub fn chars_count<C: Into<divan::counter::CharsCount>>(self, count: C) -> Self {
        Divan(self.0.chars_count(count))
    }
    #[must_use]
    pub fn cycles_count<C: Into<divan::counter::CyclesCount>>(self, count: C) -> Self {
        Divan(self.0.cycles_count(count))
    }
}
