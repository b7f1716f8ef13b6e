//! Each `Bencher` method run as the host runs a cell: listed, set up on its own stack, asked for batches, torn
//! down. Counts, not times: the iterations asked are the iterations run, and a setup that sleeps is never in
//! the batch's time (2 ms a setup beside a routine of nanoseconds: timed, 20 setups would be 40 ms).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use benchhost_plugin_api::abi::{RigBox, decode_error};
use benchhost_plugin_api::{Outcome, RigError};
use criterion::BatchSize;

use crate::rig::{Suite, entry};
use crate::{BenchmarkId, Criterion, Throughput};

static CALLS: AtomicU64 = AtomicU64::new(0);
static SETUPS: AtomicU64 = AtomicU64::new(0);

const SLEEP: Duration = Duration::from_millis(2);

fn sleepy() -> Vec<u8> {
    SETUPS.fetch_add(1, Ordering::SeqCst);
    std::thread::sleep(SLEEP);
    vec![1, 2, 3]
}

fn methods(c: &mut Criterion) {
    // Borrowed by the closures below: alive while the host is between batches.
    let local: Vec<u64> = std::iter::repeat_n(7, 16).collect();
    c.bench_function("iter", |b| b.iter(|| CALLS.fetch_add(local.len() as u64 / 16, Ordering::SeqCst)));
    c.bench_function("iter_custom", |b| b.iter_custom(|iters| Duration::from_nanos(7 * iters)));
    let mut group = c.benchmark_group("batched");
    group.throughput(Throughput::Bytes(3));
    for (name, size) in
        [("small", BatchSize::SmallInput), ("large", BatchSize::LargeInput), ("each", BatchSize::PerIteration)]
    {
        group.bench_function(BenchmarkId::new("value", name), |b| {
            b.iter_batched(sleepy, |v| CALLS.fetch_add(v.len() as u64 / 3, Ordering::SeqCst), size)
        });
        group.bench_function(BenchmarkId::new("ref", name), |b| {
            b.iter_batched_ref(sleepy, |v| CALLS.fetch_add(v.len() as u64 / 3, Ordering::SeqCst), size)
        });
    }
    group.finish();
    c.bench_function("with_setup", |b| {
        b.iter_with_setup(sleepy, |v| CALLS.fetch_add(v.len() as u64 / 3, Ordering::SeqCst))
    });
    c.bench_function("large_drop", |b| b.iter_with_large_drop(|| CALLS.fetch_add(1, Ordering::SeqCst)));
    #[cfg(feature = "async")]
    {
        let runner = Spin;
        c.bench_function("async", |b| b.to_async(&runner).iter(|| async { CALLS.fetch_add(1, Ordering::SeqCst) }));
        c.bench_function("async_batched", |b| {
            b.to_async(&runner).iter_batched(
                sleepy,
                |v| async move { CALLS.fetch_add(v.len() as u64 / 3, Ordering::SeqCst) },
                BatchSize::SmallInput,
            )
        });
    }
    c.bench_function("no_iter", |_b| {});
    c.bench_function("panics", |b| b.iter(|| panic!("the routine broke")));
}

/// An executor that polls a future to its end on the calling thread: enough for futures that never wait.
#[cfg(feature = "async")]
struct Spin;

#[cfg(feature = "async")]
impl criterion::async_executor::AsyncExecutor for &Spin {
    fn block_on<T>(&self, future: impl std::future::Future<Output = T>) -> T {
        let mut future = std::pin::pin!(future);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        loop {
            if let std::task::Poll::Ready(value) = future.as_mut().poll(&mut cx) {
                return value;
            }
        }
    }
}

fn methods_group() {
    let mut c = Criterion::default().configure_from_args();
    methods(&mut c);
}

struct Methods;
impl Suite for Methods {
    const NAME: &'static str = "methods";
    const GROUPS: &'static [fn()] = &[methods_group];
    const DIR: &'static str = env!("CARGO_MANIFEST_DIR");
}

fn setup(id: &str) -> Result<RigBox, RigError> {
    (entry::<Methods>().create)(&serde_json::json!({ "id": id }).to_string(), "{}")
}

fn measure(rig: &mut RigBox, iters: u64) -> Result<u64, RigError> {
    rig.measure(iters).into_result().map_err(|e| decode_error(&e))
}

fn teardown(rig: &mut RigBox) -> Outcome {
    serde_json::from_str(&rig.teardown().into_result().expect("teardown")).expect("an outcome")
}

/// Serialises the tests that count (they share the counters).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn the_ids_are_criterions_and_a_throughput_is_a_rate_of_its_cells() {
    let d = (entry::<Methods>().describe)();
    let id = d.params.iter().find(|p| p.name == "id").unwrap();
    let ids: Vec<&str> = id.allowed.as_ref().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(ids[..4], ["iter", "iter_custom", "batched/value/small", "batched/ref/small"]);
    assert_eq!(ids.len(), if cfg!(feature = "async") { 14 } else { 12 });
    assert_eq!(d.cell_per.as_deref(), Some("id"));
    let rate = d.metrics.iter().find(|m| m.name == "bytes_per_s").unwrap();
    assert_eq!(rate.only_where.as_ref().unwrap().values.len(), 6, "the batched group's six");
}

#[test]
fn iter_runs_the_iterations_asked_and_keeps_the_closures_borrows_alive() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut rig = setup("iter").unwrap();
    for iters in [1, 10, 1000] {
        let before = CALLS.load(Ordering::SeqCst);
        measure(&mut rig, iters).unwrap();
        assert_eq!(CALLS.load(Ordering::SeqCst) - before, iters);
    }
    assert!(teardown(&mut rig).counters.is_empty(), "no throughput, no counter");
}

#[test]
fn iter_custom_is_the_benchs_own_clock() {
    let mut rig = setup("iter_custom").unwrap();
    assert_eq!(measure(&mut rig, 1000).unwrap(), 7000);
    teardown(&mut rig);
}

#[test]
fn a_setup_is_run_once_an_iteration_and_never_timed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let ids = [
        "batched/value/small",
        "batched/value/large",
        "batched/value/each",
        "batched/ref/small",
        "batched/ref/large",
        "batched/ref/each",
        "with_setup",
    ];
    for id in ids {
        let mut rig = setup(id).unwrap();
        let (calls, setups) = (CALLS.load(Ordering::SeqCst), SETUPS.load(Ordering::SeqCst));
        let elapsed = measure(&mut rig, 20).unwrap();
        assert_eq!(CALLS.load(Ordering::SeqCst) - calls, 20, "{id}: routine calls");
        assert_eq!(SETUPS.load(Ordering::SeqCst) - setups, 20, "{id}: setups");
        assert!(elapsed < (20 * SLEEP).as_nanos() as u64 / 2, "{id}: {elapsed} ns holds the setups' sleep");
        let outcome = teardown(&mut rig);
        if id.starts_with("batched") {
            assert_eq!(outcome.counters["bytes"], 3, "{id}: the group's throughput");
        }
    }
}

#[test]
fn iter_with_large_drop_runs_the_iterations_asked() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut rig = setup("large_drop").unwrap();
    let before = CALLS.load(Ordering::SeqCst);
    measure(&mut rig, 25).unwrap();
    assert_eq!(CALLS.load(Ordering::SeqCst) - before, 25);
    teardown(&mut rig);
}

#[test]
fn a_bench_that_times_nothing_or_panics_fails_its_cell_with_the_reason() {
    let mut rig = setup("no_iter").unwrap();
    let err = measure(&mut rig, 3).unwrap_err();
    assert!(err.message.contains("called no `iter` method"), "{}", err.message);
    let mut rig = setup("panics").unwrap();
    let err = measure(&mut rig, 3).unwrap_err();
    assert!(err.message.contains("the routine broke"), "{}", err.message);
    let err = setup("not/an/id").err().unwrap();
    assert!(err.message.contains("reaches no benchmark `not/an/id`"), "{}", err.message);
}

#[cfg(feature = "async")]
#[test]
fn an_async_routine_runs_the_iterations_asked_its_setup_untimed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut rig = setup("async").unwrap();
    let before = CALLS.load(Ordering::SeqCst);
    measure(&mut rig, 100).unwrap();
    assert_eq!(CALLS.load(Ordering::SeqCst) - before, 100);
    teardown(&mut rig);
    let mut rig = setup("async_batched").unwrap();
    let (calls, setups) = (CALLS.load(Ordering::SeqCst), SETUPS.load(Ordering::SeqCst));
    let elapsed = measure(&mut rig, 20).unwrap();
    assert_eq!((CALLS.load(Ordering::SeqCst) - calls, SETUPS.load(Ordering::SeqCst) - setups), (20, 20));
    assert!(elapsed < (20 * SLEEP).as_nanos() as u64 / 2, "{elapsed} ns holds the setups' sleep");
    teardown(&mut rig);
}

/// A measurement of its own, as a suite that counts cycles has one.
struct Ticks;

impl criterion::measurement::Measurement for Ticks {
    type Intermediate = ();
    type Value = u64;
    fn start(&self) {}
    fn end(&self, _: ()) -> u64 {
        1
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }
    fn formatter(&self) -> &dyn criterion::measurement::ValueFormatter {
        criterion::measurement::WallTime.formatter()
    }
}

fn ticks_group() {
    let mut c = Criterion::default().with_measurement(Ticks).configure_from_args();
    c.bench_function("ticks", |b| b.iter(|| 1 + 1));
}

struct Custom;
impl Suite for Custom {
    const NAME: &'static str = "custom";
    const GROUPS: &'static [fn()] = &[ticks_group];
    const DIR: &'static str = env!("CARGO_MANIFEST_DIR");
}

#[test]
fn a_custom_measurement_is_refused_by_name_not_timed() {
    let err = (entry::<Custom>().create)(r#"{"id": "ticks"}"#, "{}").err().unwrap();
    assert!(err.message.contains("tests::Ticks`, a custom `Measurement`"), "{}", err.message);
}
