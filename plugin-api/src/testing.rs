//! Runs a rig in process, as plain Rust, for its unit tests: parameters from the descriptor's defaults,
//! setup, a few iterations or runs, teardown, and the declared invariants checked.
//!
//! # Examples
//! ```
//! use benchhost_plugin_api::{testing, Descriptor, Invariant, Metric, Outcome, Param, Rig, RigError, SetupContext};
//!
//! #[derive(serde::Deserialize)]
//! struct Params { n: i64 }
//! struct Count { n: u64, seen: u64 }
//! impl Rig for Count {
//!     type Params = Params;
//!     fn describe() -> Descriptor {
//!         Descriptor::iterations("count", "counts").param(Param::int("n", 3))
//!             .metric(Metric::iter_time("t")).invariant(Invariant::equal("seen", "n"))
//!     }
//!     fn setup(p: Params, _: &SetupContext) -> Result<Self, RigError> { Ok(Count { n: p.n as u64, seen: 0 }) }
//!     fn iterate(&mut self) -> Result<(), RigError> { self.seen += 1; Ok(()) }
//!     fn teardown(self) -> Result<Outcome, RigError> {
//!         Ok(Outcome::new().counter("seen", self.seen).counter("n", self.n))
//!     }
//! }
//!
//! let report = testing::run::<Count>(serde_json::json!({"n": 5}), 5).unwrap();
//! assert_eq!(report.outcome.counters["seen"], 5);
//! assert!(testing::run::<Count>(serde_json::json!({"n": 5}), 4).is_err());
//! ```

use serde_json::{Map, Value};

use crate::{Descriptor, Observation, Outcome, Rig, SetupContext, Style};

/// What an in-process run produced.
///
/// # Examples
/// See [`run`]: `report.outcome.counters` holds the teardown's counters, `report.observations` one entry per
/// run of a run-style rig.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The teardown's outcome.
    pub outcome: Outcome,
    /// One observation per run (run style only).
    pub observations: Vec<Observation>,
}

/// The parameters the host would send: the descriptor's defaults, overridden by the keys of `overrides`.
/// An override naming no declared parameter is an error.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::{Descriptor, Param, testing};
/// let d = Descriptor::iterations("wal", "round trip").param(Param::int("rows", 1000)).param(Param::bool("crc", true));
/// let p = testing::params(&d, &serde_json::json!({"rows": 10})).unwrap();
/// assert_eq!(p, serde_json::json!({"rows": 10, "crc": true}));
/// assert!(testing::params(&d, &serde_json::json!({"row": 10})).is_err());
/// ```
pub fn params(descriptor: &Descriptor, overrides: &Value) -> Result<Value, String> {
    let mut params: Map<String, Value> =
        descriptor.params.iter().map(|p| (p.name.clone(), p.default.clone())).collect();
    if let Value::Object(given) = overrides {
        for (key, value) in given {
            let Some(param) = descriptor.params.iter().find(|p| p.answers_to(key)) else {
                return Err(format!("rig `{}` has no parameter `{key}`", descriptor.name));
            };
            params.insert(param.name.clone(), value.clone());
        }
    }
    Ok(Value::Object(params))
}

/// Sets `R` up with its defaults plus `overrides`, then does `times` iterations (one `prepare` before them)
/// or `times` runs, tears it down and checks every invariant on the outcome and on each observation.
/// The scratch directory is a fresh temporary directory, removed afterwards.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::{Descriptor, Invariant, Metric, Outcome, Rig, RigError, SetupContext, testing};
/// struct Lossy;
/// impl Rig for Lossy {
///     type Params = serde::de::IgnoredAny;
///     fn describe() -> Descriptor {
///         Descriptor::iterations("lossy", "drops a row").metric(Metric::iter_time("t"))
///             .invariant(Invariant::equal("rows_out", "rows_in"))
///     }
///     fn setup(_: serde::de::IgnoredAny, _: &SetupContext) -> Result<Self, RigError> { Ok(Lossy) }
///     fn iterate(&mut self) -> Result<(), RigError> { Ok(()) }
///     fn teardown(self) -> Result<Outcome, RigError> {
///         Ok(Outcome::new().counter("rows_in", 10).counter("rows_out", 9))
///     }
/// }
/// let err = testing::run::<Lossy>(serde_json::json!({}), 3).unwrap_err();
/// assert_eq!(err, "rows_out == rows_in violated: rows_out = 9, rows_in = 10");
/// ```
pub fn run<R: Rig>(overrides: Value, times: u64) -> Result<Report, String> {
    run_in::<R>(overrides, times, SetupContext::default())
}

/// As [`run`], with [`SetupContext::window_ns`] set to `window_ns`, as in a duel: each run one window of a
/// workload that goes on from the previous one (for a rig whose descriptor declares `windows`).
pub fn run_windows<R: Rig>(overrides: Value, times: u64, window_ns: u64) -> Result<Report, String> {
    run_in::<R>(overrides, times, SetupContext { window_ns: Some(window_ns), ..SetupContext::default() })
}

/// As [`run`], with [`SetupContext::counting`] set, as `run --instructions` sets it: a rig whose counters
/// depend on how its threads interleave (which file a scan opens before a threshold tightens, say) gives the
/// same counters on every run and under any load.
pub fn run_counting<R: Rig>(overrides: Value, times: u64) -> Result<Report, String> {
    run_in::<R>(overrides, times, SetupContext { counting: true, ..SetupContext::default() })
}

fn run_in<R: Rig>(overrides: Value, times: u64, base: SetupContext) -> Result<Report, String> {
    let descriptor = R::describe();
    let params = params(&descriptor, &overrides)?;
    let invariants = descriptor.invariants_for(&serde_json::from_value(params.clone()).unwrap_or_default());
    let params: R::Params = serde_json::from_value(params).map_err(|e| format!("parameters: {e}"))?;
    // One directory per call: tests of one rig run in parallel threads of one process.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let scratch =
        std::env::temp_dir().join(format!("benchhost-test-{}-{}-{call}", descriptor.name, std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("creating {}: {e}", scratch.display()))?;
    let ctx = SetupContext { scratch_dir: scratch.clone(), quick: true, ..base };
    let result = drive::<R>(&descriptor, &invariants, params, &ctx, times);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn drive<R: Rig>(
    descriptor: &Descriptor,
    invariants: &[crate::Invariant],
    params: R::Params,
    ctx: &SetupContext,
    times: u64,
) -> Result<Report, String> {
    let fail = |phase: &str, e: crate::RigError| format!("{phase}: {:?}: {}", e.kind, e.message);
    let mut rig = R::setup(params, ctx).map_err(|e| fail("setup", e))?;
    let mut observations = Vec::new();
    match descriptor.style {
        Style::Iterations => {
            rig.prepare(times).map_err(|e| fail("prepare", e))?;
            for _ in 0..times {
                rig.iterate().map_err(|e| fail("iterate", e))?;
            }
        }
        Style::Run => {
            for _ in 0..times {
                observations.push(rig.run().map_err(|e| fail("run", e))?);
            }
        }
    }
    let outcome = rig.teardown().map_err(|e| fail("teardown", e))?;
    let labels: Vec<String> = (1..=observations.len()).map(|i| format!("run {i}")).collect();
    let mut sets = vec![("outcome", &outcome.counters)];
    sets.extend(labels.iter().map(String::as_str).zip(observations.iter().map(|o| &o.counters)));
    crate::check_invariants(invariants, &sets).map_err(|v| v.join("; "))?;
    Ok(Report { outcome, observations })
}

/// Times `op` as a bare loop, for comparing a rig's `iter_time` with the library call it wraps: on a heap
/// settled as in benchhost's cells ([`crate::heap::settle`]), 500 ms of warm-up, then 30 batches of about
/// 100 ms, each timed with one clock pair; returns the median time per call in nanoseconds.
///
/// # Examples
/// ```no_run
/// let data: Vec<u64> = (0..1000).collect();
/// let ns = benchhost_plugin_api::testing::bare_loop_ns(|| { std::hint::black_box(data.iter().sum::<u64>()); });
/// println!("{ns:.1} ns per sum");
/// ```
pub fn bare_loop_ns(mut op: impl FnMut()) -> f64 {
    crate::heap::settle();
    let start = std::time::Instant::now();
    let mut warm = 0u64;
    while start.elapsed().as_millis() < 500 {
        op();
        warm += 1;
    }
    let per_batch = (warm / 5).max(1);
    let mut samples: Vec<f64> = (0..30)
        .map(|_| {
            let t = std::time::Instant::now();
            for _ in 0..per_batch {
                op();
            }
            t.elapsed().as_nanos() as f64 / per_batch as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}
