//! Divan's own macros on benches of every form, run as the host runs a cell (listed, set up on its own stack,
//! asked for batches, torn down) and as `cargo bench` runs them (Divan's runner). Counts, not times: the
//! iterations asked are the iterations run, and an input maker that sleeps is never in the batch's time (2 ms an
//! input beside a routine of nanoseconds: timed, 20 inputs would be 40 ms).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use benchhost_plugin_api::abi::{RigBox, decode_error};
use benchhost_plugin_api::{Outcome, RigError};
use divan::counter::{BytesCount, ItemsCount};

use crate::Bencher;
use crate::plugin::{ENTRY, counter_set};

static CALLS: AtomicU64 = AtomicU64::new(0);
static INPUTS: AtomicU64 = AtomicU64::new(0);

const SLEEP: Duration = Duration::from_millis(2);

fn sleepy() -> Vec<u8> {
    INPUTS.fetch_add(1, Ordering::SeqCst);
    std::thread::sleep(SLEEP);
    vec![1, 2, 3]
}

fn call(v: &[u8]) -> u64 {
    CALLS.fetch_add(v.len() as u64 / 3, Ordering::SeqCst)
}

#[divan::bench(crate = crate)]
fn plain() -> u64 {
    CALLS.fetch_add(1, Ordering::SeqCst)
}

#[divan::bench(crate = crate)]
fn values(bencher: Bencher) {
    bencher.with_inputs(sleepy).bench_values(|v| call(&v));
}

#[divan::bench(crate = crate)]
fn local_values(bencher: Bencher) {
    bencher.with_inputs(sleepy).bench_local_values(|v| call(&v));
}

#[divan::bench(crate = crate)]
fn refs(bencher: Bencher) {
    bencher.with_inputs(sleepy).input_counter(BytesCount::of_slice).bench_refs(|v| call(v));
}

#[divan::bench(crate = crate)]
fn local_refs(bencher: Bencher) {
    // Borrowed by the routine: alive while the host is between batches.
    let local = [7u8; 3];
    bencher.with_inputs(sleepy).bench_local_refs(|v| call(v) + local.len() as u64);
}

#[divan::bench(crate = crate, args = [1, 2, 3])]
fn args(n: u64) -> u64 {
    CALLS.fetch_add(1, Ordering::SeqCst) + n
}

#[divan::bench(crate = crate, types = [u8, String])]
fn typed<T: Default>() -> T {
    CALLS.fetch_add(1, Ordering::SeqCst);
    T::default()
}

#[divan::bench(crate = crate, consts = [4, 8])]
fn sized<const N: usize>() -> [u8; N] {
    CALLS.fetch_add(1, Ordering::SeqCst);
    [0; N]
}

#[divan::bench(crate = crate, counters = [BytesCount::new(64usize)])]
fn counted(bencher: Bencher) {
    bencher.counter(ItemsCount::new(10usize)).bench(|| CALLS.fetch_add(1, Ordering::SeqCst));
}

#[divan::bench(crate = crate, threads = [2])]
fn threaded() -> u64 {
    1
}

#[divan::bench(crate = crate)]
fn no_bench(_bencher: Bencher) {}

#[divan::bench(crate = crate, ignore)]
fn ignored() {}

#[divan::bench_group(crate = crate, name = "renamed", counters = [divan::counter::CharsCount::new(5usize)])]
mod grouped {
    #[divan::bench(crate = crate)]
    fn inner() -> u64 {
        super::CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    }

    // The group's counter is its benches' unless they set their own.
    #[divan::bench(crate = crate, counters = [divan::counter::CharsCount::new(7usize)])]
    fn own_counter() {}

    #[divan::bench_group(crate = crate, threads = [4])]
    mod threaded_group {
        // The group's threads are its benches'.
        #[divan::bench(crate = crate)]
        fn in_threads() {}
    }
}

fn setup(id: &str) -> Result<RigBox, RigError> {
    (ENTRY.create)(&serde_json::json!({ "id": format!("benchhost_divan::tests::{id}") }).to_string(), "{}")
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
fn the_ids_are_divans_paths_each_arg_type_and_const_its_own() {
    let d = (ENTRY.describe)();
    assert_eq!(d.name, "benchhost_divan");
    let id = d.params.iter().find(|p| p.name == "id").unwrap();
    let ids: Vec<&str> = id.allowed.as_ref().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let ids: Vec<&str> = ids.iter().map(|i| i.strip_prefix("benchhost_divan::tests::").unwrap()).collect();
    let want = [
        "args::1",
        "args::2",
        "args::3",
        "counted",
        "local_refs",
        "local_values",
        "no_bench",
        "plain",
        "refs",
        "renamed::inner",
        "renamed::own_counter",
        "renamed::threaded_group::in_threads",
        "sized::4",
        "sized::8",
        "threaded",
        "typed::String",
        "typed::u8",
        "values",
    ];
    assert_eq!(ids, want, "sorted, `ignored` left out as Divan leaves it");
    assert_eq!(d.cell_per.as_deref(), Some("id"));
    assert!(d.metrics.iter().filter(|m| m.name.ends_with("_per_s")).all(|m| m.if_counted));
}

#[test]
fn each_method_runs_the_iterations_asked() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for id in ["plain", "args::2", "typed::String", "sized::8", "renamed::inner", "counted"] {
        let mut rig = setup(id).unwrap();
        for iters in [1, 10, 1000] {
            let before = CALLS.load(Ordering::SeqCst);
            measure(&mut rig, iters).unwrap();
            assert_eq!(CALLS.load(Ordering::SeqCst) - before, iters, "{id}");
        }
        teardown(&mut rig);
    }
}

#[test]
fn an_input_is_made_once_an_iteration_and_never_timed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for id in ["values", "local_values", "refs", "local_refs"] {
        let mut rig = setup(id).unwrap();
        let (calls, inputs) = (CALLS.load(Ordering::SeqCst), INPUTS.load(Ordering::SeqCst));
        let elapsed = measure(&mut rig, 20).unwrap();
        assert_eq!(CALLS.load(Ordering::SeqCst) - calls, 20, "{id}: routine calls");
        assert_eq!(INPUTS.load(Ordering::SeqCst) - inputs, 20, "{id}: inputs made");
        assert!(elapsed < (20 * SLEEP).as_nanos() as u64 / 2, "{id}: {elapsed} ns holds the inputs' sleep");
        let outcome = teardown(&mut rig);
        let bytes = if id == "refs" { Some(&3) } else { None };
        assert_eq!(outcome.counters.get("bytes"), bytes, "{id}: an input counter counts each input");
    }
}

#[test]
fn a_counter_of_the_options_or_the_bencher_is_a_counter_of_the_outcome() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut rig = setup("counted").unwrap();
    measure(&mut rig, 5).unwrap();
    let outcome = teardown(&mut rig);
    assert_eq!((outcome.counters.get("bytes"), outcome.counters.get("items")), (Some(&64), Some(&10)));
    assert_eq!(
        counter_set(&format!("{:?}", divan::__private::new_counter_set().with(ItemsCount::new(3usize)))),
        [None, None, None, Some(3)]
    );
}

#[test]
fn a_groups_options_are_its_benches_unless_they_set_their_own() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for (id, chars) in [("renamed::inner", 5), ("renamed::own_counter", 7)] {
        let mut rig = setup(id).unwrap();
        measure(&mut rig, 3).unwrap();
        assert_eq!(teardown(&mut rig).counters.get("chars"), Some(&chars), "{id}");
    }
    let err = setup("renamed::threaded_group::in_threads").err().unwrap();
    assert!(err.message.contains("`threads = [4]`"), "{}", err.message);
}

#[test]
fn what_cannot_run_here_fails_its_cell_with_the_reason() {
    let err = setup("threaded").err().unwrap();
    assert!(err.message.contains("`threads = [2]`"), "{}", err.message);
    let err = setup("no_bench").err().unwrap();
    assert!(err.message.contains("called no `bench` method"), "{}", err.message);
    let err = setup("not::a::bench").err().unwrap();
    assert!(err.message.contains("has no benchmark `benchhost_divan::tests::not::a::bench`"), "{}", err.message);
}

#[test]
fn under_cargo_bench_divan_runs_every_entry_itself() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // On a thread of its own: a thread that served the host makes args for benchhost, this one for Divan.
    std::thread::spawn(|| {
        crate::real::register();
        let names: Vec<&str> = divan::__private::BENCH_ENTRIES.iter().map(|e| e.meta.display_name).collect();
        for name in ["plain", "values", "refs", "args", "counted", "inner", "ignored"] {
            assert!(names.contains(&name), "{name} is not among Divan's entries: {names:?}");
        }
        let groups = divan::__private::GROUP_ENTRIES.iter().map(|g| g.meta.display_name).collect::<Vec<_>>();
        for name in ["typed", "sized", "renamed"] {
            assert!(groups.contains(&name), "{name} is not among Divan's groups: {groups:?}");
        }
        let before = CALLS.load(Ordering::SeqCst);
        // Divan's test mode: each bench once, through Divan's runner and the `Bencher` it makes.
        crate::Divan::default().skip_exact("benchhost_divan::tests::no_bench").test_benches();
        assert!(CALLS.load(Ordering::SeqCst) > before, "Divan ran none of the benches");
    })
    .join()
    .unwrap();
}
