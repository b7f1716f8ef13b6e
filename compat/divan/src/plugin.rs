//! A Divan bench target as one benchhost rig, exported by this crate into the plugin library `benchhost build
//! --benches` makes of it: the rig is named after the target (its crate), a cell per benchmark, each id Divan's
//! own path of it (`crate::module::function::arg`, as `cargo bench -- --list --format terse` prints it), and a
//! cell runs its bench function on a stack of its own, stopped inside its `Bencher` method between batches.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::OnceLock;
use std::thread::ThreadId;

use benchhost_plugin_api::__private::{RResult, RString, TD_Opaque, guard};
use benchhost_plugin_api::abi::{Entry, RigBox, RigObject, RigObject_TO};
use benchhost_plugin_api::{Descriptor, Metric, Outcome, Param, RigError, Unit};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult};
use serde::Deserialize;

use crate::__private::{BENCH_ENTRIES, BenchArgsRunner, EntryMeta, GROUP_ENTRIES, GroupEntry, Runner, SERVING};
use crate::Bencher;
use crate::serve::{COUNTERS, Command, Reply, Serve, Tally};

/// The rig of the bench target this crate is linked into.
pub(crate) const ENTRY: Entry = Entry { describe, create, name: None };

/// One benchmark: its id, its bench function (with the index of its arg), and what its options say.
struct Leaf {
    id: String,
    runner: Runner,
    arg: Option<usize>,
    /// The options' counters (`counters = [...]`), per counter kind.
    fixed: [Option<u64>; 4],
    /// Why it cannot be run here.
    refused: Option<String>,
}

impl Leaf {
    fn call(&self, bencher: Bencher) {
        match (self.runner, self.arg) {
            (Runner::Plain(bench), _) => bench(bencher),
            (Runner::Args(runner), Some(index)) => match runner() {
                BenchArgsRunner::Ours(args) => args.bench(bencher, index),
                BenchArgsRunner::Real(_) => unreachable!("args are made for benchhost once it serves"),
            },
            (Runner::Args(_), None) => unreachable!("an args bench is listed by its args"),
        }
    }
}

/// The target's name (its crate's, the first part of every module path) and its benchmarks, Divan's ignored
/// ones left out as `cargo bench` leaves them out. Listed once per process: each `args` made once.
fn listed() -> &'static (String, Vec<Leaf>) {
    static LISTED: OnceLock<(String, Vec<Leaf>)> = OnceLock::new();
    LISTED.get_or_init(|| {
        SERVING.set(true);
        let groups = GROUP_ENTRIES.entries();
        let mut leaves = Vec::new();
        for entry in BENCH_ENTRIES.entries() {
            let (mut path, mut metas) = parents(entry.meta.module_path, &groups);
            path.push(entry.meta.display_name.to_owned());
            metas.push(&entry.meta);
            add(&mut leaves, path, &metas, entry.bench.ours);
        }
        for group in &groups {
            for bench in group.generic_benches.into_iter().flatten().flat_map(|row| row.iter()) {
                let (mut path, mut metas) = parents(group.meta.module_path, &groups);
                path.push(shown(group.meta.raw_name, Some(*group)));
                metas.push(&group.meta);
                let ty = bench.ty.as_ref().map(|ty| ty.display_name().to_owned());
                match (&bench.const_value, ty) {
                    (Some(value), ty) => path.extend(ty.into_iter().chain([value.name().to_owned()])),
                    (None, Some(ty)) => path.push(ty),
                    (None, None) => continue,
                }
                add(&mut leaves, path, &metas, bench.bench.ours);
            }
        }
        leaves.sort_by(|a, b| a.id.cmp(&b.id));
        let name =
            BENCH_ENTRIES.entries().first().map(|e| e.meta.module_path).or(groups.first().map(|g| g.meta.module_path));
        let name = name.unwrap_or_default().split("::").next().unwrap_or_default().to_owned();
        (name, leaves)
    })
}

/// The path of a module's benches (each module by its group's name where `#[divan::bench_group]` gives one),
/// and the groups' metadata along it, outermost first.
fn parents(module_path: &'static str, groups: &[&'static GroupEntry]) -> (Vec<String>, Vec<&'static EntryMeta>) {
    let (mut path, mut metas) = (Vec::new(), Vec::new());
    let parts: Vec<&str> = module_path.split("::").collect();
    for (i, part) in parts.iter().enumerate() {
        let within = parts[..i].join("::");
        let group = groups.iter().find(|g| g.meta.module_path == within && g.meta.raw_name == *part).copied();
        path.push(shown(part, group));
        metas.extend(group.map(|g| &g.meta));
    }
    (path, metas)
}

/// A part of a path as Divan shows it: its group's name, else itself without `r#`.
fn shown(raw: &str, group: Option<&GroupEntry>) -> String {
    match group {
        Some(group) => group.meta.display_name.to_owned(),
        None => raw.strip_prefix("r#").unwrap_or(raw).to_owned(),
    }
}

/// Adds the benchmark at `path` (each of its args, for an args bench), its options those of `metas`, the
/// innermost winning as in Divan.
fn add(leaves: &mut Vec<Leaf>, path: Vec<String>, metas: &[&EntryMeta], runner: Runner) {
    let options: Vec<_> = metas.iter().rev().filter_map(|m| m.bench_options.as_deref()).collect();
    if options.iter().find_map(|o| o.ignore).unwrap_or(false) {
        return;
    }
    let counters: Vec<[Option<u64>; 4]> = options.iter().map(|o| counter_set(&format!("{:?}", o.counters))).collect();
    let fixed = std::array::from_fn(|k| counters.iter().find_map(|c| c[k]));
    let threads = options.iter().find_map(|o| o.threads.as_deref());
    let refused = threads.filter(|t| !t.is_empty() && **t != [1]).map(|t| {
        format!("`threads = {t:?}`: benchhost times a bench on one thread (each process pairs two builds on it)")
    });
    let id = path.join("::");
    match runner {
        Runner::Plain(_) => leaves.push(Leaf { id, runner, arg: None, fixed, refused }),
        Runner::Args(make) => {
            let BenchArgsRunner::Ours(args) = make() else {
                unreachable!("args are made for benchhost once it serves")
            };
            for (index, name) in args.names.iter().enumerate() {
                let id = format!("{id}::{name}");
                leaves.push(Leaf { id, runner, arg: Some(index), fixed, refused: refused.clone() });
            }
        }
    }
}

/// The counts of a Divan `CounterSet`, read from its `Debug` (`CounterSet { counts: [Some(64), None, ...] }`;
/// Divan keeps them private), in the order of its counter kinds.
pub(crate) fn counter_set(text: &str) -> [Option<u64>; 4] {
    let inner = text.split_once('[').and_then(|(_, rest)| rest.split_once(']')).map(|(inner, _)| inner);
    let counts: Vec<Option<u64>> = inner
        .unwrap_or_else(|| panic!("a Divan CounterSet of another format than this crate reads: {text}"))
        .split(", ")
        .map(|c| c.strip_prefix("Some(").and_then(|c| c.strip_suffix(')')).and_then(|n| n.parse().ok()))
        .collect();
    assert_eq!(counts.len(), 4, "a Divan CounterSet of another format than this crate reads: {text}");
    std::array::from_fn(|k| counts[k])
}

fn describe() -> Descriptor {
    let (name, leaves) = listed();
    assert!(!leaves.is_empty(), "bench target `{name}`: no `#[divan::bench]` to run");
    let ids: Vec<&str> = leaves.iter().map(|l| l.id.as_str()).collect();
    let mut d =
        Descriptor::iterations(name, &format!("bench target `{name}` (benchhost-divan): a cell per Divan benchmark"))
            .param(Param::choice("id", ids[0], &ids).doc("the benchmark's path, as `cargo bench -- --list` shows it"))
            .cell_per("id")
            .metric(Metric::iter_time("time").doc("time per iteration, as Divan times the bench's `Bencher` method"));
    for (counter, unit) in
        COUNTERS.iter().zip([Unit::MegabytesPerSec, Unit::OpsPerSec, Unit::OpsPerSec, Unit::OpsPerSec])
    {
        let doc = format!("{counter} per second, of the bench's {counter} counter");
        d = d.metric(Metric::rate(&format!("{counter}_per_s"), unit, counter).if_counted().doc(&doc));
    }
    d
}

#[derive(Deserialize)]
struct Params {
    id: String,
}

type Stack = Coroutine<Command, Reply, (bool, Tally), DefaultStack>;

/// Sets up the cell: the bench function runs on its own stack up to its `Bencher` method, and stops there.
fn create(params: &str, _ctx: &str) -> Result<RigBox, RigError> {
    let Params { id } =
        serde_json::from_str(params).map_err(|e| RigError::invalid_params(format!("parameters: {e}")))?;
    SERVING.set(true);
    let (name, leaves) = listed();
    let Some(leaf) = leaves.iter().find(|l| l.id == id) else {
        return Err(RigError::invalid_params(format!(
            "bench target `{name}` has no benchmark `{id}` (an arg whose text differs between builds?)"
        )));
    };
    // 8 MiB, the size of a main thread's stack, where `cargo bench` runs the same functions.
    let stack = DefaultStack::new(8 << 20).map_err(|e| RigError::new(format!("a stack for the bench: {e}")))?;
    let mut coroutine: Stack = Coroutine::with_stack(stack, move |yielder, _start: Command| {
        let mut serve = Serve::new(yielder, leaf.refused.clone(), leaf.fixed);
        leaf.call(Bencher::serving(&mut serve));
        (serve.reached, serve.tally)
    });
    match coroutine.resume(Command::Start) {
        CoroutineResult::Yield(Reply::Ready) => {}
        CoroutineResult::Yield(Reply::Failed(why)) => {
            return Err(RigError::unsupported(format!("benchmark `{id}`: {why}")));
        }
        CoroutineResult::Yield(Reply::Elapsed(_)) => unreachable!("a bench answers a batch only when asked"),
        CoroutineResult::Return(_) => {
            return Err(RigError::new(format!("benchmark `{id}` called no `bench` method of its Bencher")));
        }
    }
    let bench = Bench { id, coroutine: Some(coroutine), thread: std::thread::current().id() };
    Ok(RigObject_TO::from_value(bench, TD_Opaque))
}

/// A cell: the bench function stopped inside its `Bencher` method, on its own stack.
struct Bench {
    id: String,
    coroutine: Option<Stack>,
    /// The thread that made the stack: it alone may switch to it.
    thread: ThreadId,
}

// SAFETY: the host calls a rig from the thread that set it up; `resume` checks that it is so before switching.
unsafe impl Send for Bench {}

impl Bench {
    fn resume(&mut self, command: Command) -> Result<CoroutineResult<Reply, (bool, Tally)>, RigError> {
        if std::thread::current().id() != self.thread {
            return Err(RigError::new("a bench is resumed on another thread than the one that set it up"));
        }
        let coroutine = self.coroutine.as_mut().ok_or_else(|| RigError::new("the bench has ended"))?;
        // A panic of the bench unwinds out of `resume`; the stack is done with, and so is the cell.
        match catch_unwind(AssertUnwindSafe(|| coroutine.resume(command))) {
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
            CoroutineResult::Yield(Reply::Ready) => unreachable!("a bench is ready once"),
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
            let tally = loop {
                match self.resume(Command::Stop)? {
                    CoroutineResult::Return((_, tally)) => break tally,
                    CoroutineResult::Yield(_) => continue,
                }
            };
            self.coroutine = None;
            let mut outcome = Outcome::new();
            for (counter, count) in COUNTERS.iter().zip(tally.per_iteration()) {
                if let Some(count) = count {
                    outcome = outcome.counter(counter, count);
                }
            }
            Ok(RString::from(serde_json::to_string(&outcome).expect("an outcome serializes")))
        })
    }
}
