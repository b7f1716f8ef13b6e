//! A bench target as one benchhost rig: `criterion_main!` exports it (beside the `main` of `cargo bench`), its
//! cells are the benchmark ids the group functions reach, and a cell runs its bench function on a stack of its
//! own, stopped inside the benchmark's call while the host is between batches.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Mutex;
use std::thread::ThreadId;

use benchhost_plugin_api::__private::{RResult, RString, TD_Opaque, guard};
use benchhost_plugin_api::abi::{Entry, RigBox, RigObject, RigObject_TO};
use benchhost_plugin_api::{Descriptor, Metric, Outcome, Param, RigError, Unit};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult};
use criterion::Throughput;
use serde::Deserialize;

use crate::session::{self, Command, Listed, Reply};

/// A bench target: its name (the crate cargo compiles it as) and the groups `criterion_main!` lists.
pub trait Suite: 'static {
    /// `CARGO_CRATE_NAME` of the bench target: the rig's name.
    const NAME: &'static str;
    /// The group functions, in `criterion_main!`'s order.
    const GROUPS: &'static [fn()];
    /// `CARGO_MANIFEST_DIR` of the package: the working directory `cargo bench` gives its benches, and so
    /// the one their code runs in here (a relative path to a data file finds it).
    const DIR: &'static str;
}

/// The package's directory as the working directory, for as long as the suite's code runs: put back after, as
/// both arms of a comparison (two builds, two packages) share the process.
struct InPackage(Option<std::path::PathBuf>);

impl InPackage {
    fn enter(dir: &str) -> InPackage {
        let before = std::env::current_dir().ok();
        InPackage(before.filter(|_| std::env::set_current_dir(dir).is_ok()))
    }
}

impl Drop for InPackage {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            let _ = std::env::set_current_dir(dir);
        }
    }
}

/// The entry `criterion_main!` exports for suite `S`.
pub const fn entry<S: Suite>() -> Entry {
    Entry { describe: describe::<S>, create: create::<S>, name: Some(S::NAME) }
}

/// The suite's benchmarks, listed once per process (the group functions run, no benchmark does). A static of a
/// generic function is one for all its instances, so the lists are kept by suite name.
fn listed<S: Suite>() -> &'static [Listed] {
    static LISTED: Mutex<BTreeMap<&'static str, &'static [Listed]>> = Mutex::new(BTreeMap::new());
    if let Some(listed) = LISTED.lock().unwrap_or_else(|e| e.into_inner()).get(S::NAME) {
        return listed;
    }
    // Listed without the lock held: the group functions are the suite's code, and may take their time.
    let here = InPackage::enter(S::DIR);
    let listed: &'static [Listed] = Vec::leak(session::list(S::GROUPS));
    drop(here);
    let mut lists = LISTED.lock().unwrap_or_else(|e| e.into_inner());
    lists.entry(S::NAME).or_insert(listed);
    lists[S::NAME]
}

fn describe<S: Suite>() -> Descriptor {
    let listed = listed::<S>();
    assert!(!listed.is_empty(), "bench target `{}`: its groups reach no benchmark", S::NAME);
    let ids: Vec<&str> = listed.iter().map(|l| l.id.as_str()).collect();
    let with = |counter: fn(&Throughput) -> Option<u64>| -> Vec<&str> {
        listed.iter().filter(|l| l.throughput.as_ref().and_then(counter).is_some()).map(|l| l.id.as_str()).collect()
    };
    let mut d = Descriptor::iterations(
        S::NAME,
        &format!("bench target `{}` (benchhost-criterion): a cell per Criterion benchmark id", S::NAME),
    )
    .param(Param::choice("id", ids[0], &ids).doc("the benchmark's id, as `cargo bench -- --list` prints it"))
    .cell_per("id")
    .metric(Metric::iter_time("time").doc("time per iteration, as Criterion times the bench's `iter` method"));
    let (bytes, elements) = (with(bytes), with(elements));
    if !bytes.is_empty() {
        d = d.metric(Metric::rate("bytes_per_s", Unit::MegabytesPerSec, "bytes").only_where("id", bytes));
    }
    if !elements.is_empty() {
        d = d.metric(Metric::rate("elements_per_s", Unit::OpsPerSec, "elements").only_where("id", elements));
    }
    d
}

/// Bytes an iteration handles, by a group's `Throughput`.
fn bytes(t: &Throughput) -> Option<u64> {
    match *t {
        Throughput::Bytes(n) | Throughput::BytesDecimal(n) | Throughput::ElementsAndBytes { bytes: n, .. } => Some(n),
        Throughput::Bits(n) => Some(n / 8),
        _ => None,
    }
}

/// Elements an iteration handles, by a group's `Throughput`.
fn elements(t: &Throughput) -> Option<u64> {
    match *t {
        Throughput::Elements(n) | Throughput::ElementsAndBytes { elements: n, .. } => Some(n),
        _ => None,
    }
}

#[derive(Deserialize)]
struct Params {
    id: String,
}

/// Sets up the cell: the bench function runs on its own stack up to the cell's benchmark, and stops there.
fn create<S: Suite>(params: &str, _ctx: &str) -> Result<RigBox, RigError> {
    let Params { id } =
        serde_json::from_str(params).map_err(|e| RigError::invalid_params(format!("parameters: {e}")))?;
    // 8 MiB, the size of a main thread's stack, where `cargo bench` runs the same functions.
    let stack = DefaultStack::new(8 << 20).map_err(|e| RigError::new(format!("a stack for the bench: {e}")))?;
    let target = id.clone();
    let mut coroutine =
        Coroutine::with_stack(stack, move |yielder, _start: Command| session::serve(S::GROUPS, &target, yielder));
    let here = InPackage::enter(S::DIR);
    let started = coroutine.resume(Command::Start);
    drop(here);
    let throughput = match started {
        CoroutineResult::Yield(Reply::Ready(throughput)) => throughput,
        CoroutineResult::Yield(Reply::Failed(why)) => return Err(RigError::unsupported(why)),
        CoroutineResult::Yield(Reply::Elapsed(_)) => unreachable!("a bench answers a batch only when asked"),
        CoroutineResult::Return(_) => {
            return Err(RigError::invalid_params(format!(
                "bench target `{}` reaches no benchmark `{id}` (an id made of data that differs between builds?)",
                S::NAME
            )));
        }
    };
    let bench = Bench { id, coroutine: Some(coroutine), thread: std::thread::current().id(), throughput, dir: S::DIR };
    Ok(RigObject_TO::from_value(bench, TD_Opaque))
}

type Stack = Coroutine<Command, Reply, bool, DefaultStack>;

/// A cell: the bench function stopped inside its benchmark, on its own stack.
struct Bench {
    id: String,
    coroutine: Option<Stack>,
    /// The thread that made the stack: it alone may switch to it.
    thread: ThreadId,
    throughput: Option<Throughput>,
    /// The package's directory, the suite's working directory.
    dir: &'static str,
}

// SAFETY: the host calls a rig from the thread that set it up; `resume` checks that it is so before switching.
unsafe impl Send for Bench {}

impl Bench {
    fn resume(&mut self, command: Command) -> Result<CoroutineResult<Reply, bool>, RigError> {
        if std::thread::current().id() != self.thread {
            return Err(RigError::new("a bench is resumed on another thread than the one that set it up"));
        }
        let coroutine = self.coroutine.as_mut().ok_or_else(|| RigError::new("the bench has ended"))?;
        let here = InPackage::enter(self.dir);
        // A panic of the bench unwinds out of `resume`; the stack is done with, and so is the cell.
        let resumed = catch_unwind(AssertUnwindSafe(|| coroutine.resume(command)));
        drop(here);
        match resumed {
            Ok(result) => Ok(result),
            Err(panic) => {
                self.coroutine = None;
                resume_unwind(panic)
            }
        }
    }
}

impl RigObject for Bench {
    fn prepare(&mut self, _batch: u64) -> RResult<(), RString> {
        RResult::ROk(())
    }

    fn measure(&mut self, batch: u64) -> RResult<u64, RString> {
        guard(|| match self.resume(Command::Measure(batch))? {
            CoroutineResult::Yield(Reply::Elapsed(ns)) => Ok(ns),
            CoroutineResult::Yield(Reply::Failed(why)) => Err(RigError::new(why)),
            CoroutineResult::Yield(Reply::Ready(_)) => unreachable!("a bench is ready once"),
            CoroutineResult::Return(_) => {
                Err(RigError::new(format!("benchmark `{}` returned before its batch", self.id)))
            }
        })
    }

    fn run(&mut self) -> RResult<RString, RString> {
        guard(|| Err(RigError::unsupported("a bench target is iterations style: it has no `run`")))
    }

    fn teardown(&mut self) -> RResult<RString, RString> {
        guard(|| {
            // The benchmark's call returns and the group functions run to their end, the rest skipped.
            while let CoroutineResult::Yield(_) = self.resume(Command::Stop)? {}
            self.coroutine = None;
            let mut outcome = Outcome::new();
            if let Some(n) = self.throughput.as_ref().and_then(bytes) {
                outcome = outcome.counter("bytes", n);
            }
            if let Some(n) = self.throughput.as_ref().and_then(elements) {
                outcome = outcome.counter("elements", n);
            }
            Ok(RString::from(serde_json::to_string(&outcome).expect("an outcome serializes")))
        })
    }
}
