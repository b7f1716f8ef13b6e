//! Runs any rig under Criterion, so a team can keep `cargo bench` and its baselines while the same rig also
//! runs in benchhost. Enable the `criterion` feature.
//!
//! Iterations-style rigs are timed per call to `iterate`, with `prepare` for each batch kept outside the timer
//! (`iter_custom`); run-style rigs are timed per whole `run`. After Criterion is done, teardown runs and
//! every declared invariant is checked: a rig whose answer is wrong panics the bench instead of reporting a
//! number.
//!
//! # Examples
//! ```no_run
//! # use benchhost_plugin_api::{Descriptor, Metric, Outcome, Rig, RigError, SetupContext};
//! # pub struct Noop;
//! # impl Rig for Noop {
//! #     type Params = serde::de::IgnoredAny;
//! #     fn describe() -> Descriptor { Descriptor::iterations("noop", "nothing").metric(Metric::iter_time("t")) }
//! #     fn setup(_: serde::de::IgnoredAny, _: &SetupContext) -> Result<Self, RigError> { Ok(Noop) }
//! #     fn iterate(&mut self) -> Result<(), RigError> { Ok(()) }
//! #     fn teardown(self) -> Result<Outcome, RigError> { Ok(Outcome::new()) }
//! # }
//! use criterion::Criterion;
//! fn benches(c: &mut Criterion) {
//!     benchhost_plugin_api::criterion::bench::<Noop>(c, serde_json::json!({}));
//! }
//! criterion::criterion_group!(group, benches);
//! criterion::criterion_main!(group);
//! ```

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{Rig, SetupContext, Style, testing};

/// Benchmarks rig `R` with its defaults overridden by `overrides`, as Criterion benchmark
/// `RIG/param=value,...`. Panics, with the phase and the rig's message, if the rig fails or an invariant
/// does not hold.
pub fn bench<R: Rig>(c: &mut criterion::Criterion, overrides: Value) {
    let descriptor = R::describe();
    let params = testing::params(&descriptor, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let invariants = descriptor.invariants_for(&serde_json::from_value(params.clone()).unwrap_or_default());
    let id = series_name(&descriptor.name, &overrides);
    let scratch = std::env::temp_dir().join(format!("benchhost-criterion-{}-{}", descriptor.name, std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap_or_else(|e| panic!("creating {}: {e}", scratch.display()));
    let ctx = SetupContext { scratch_dir: scratch.clone(), quick: false, seed_dir: None, ..SetupContext::default() };
    let params: R::Params = serde_json::from_value(params).unwrap_or_else(|e| panic!("{id}: parameters: {e}"));
    let mut rig = R::setup(params, &ctx).unwrap_or_else(|e| panic!("{id}: setup: {e}"));
    let mut observations = Vec::new();
    c.bench_function(&id, |b| {
        b.iter_custom(|iters| match descriptor.style {
            Style::Iterations => {
                rig.prepare(iters).unwrap_or_else(|e| panic!("{id}: prepare: {e}"));
                let start = Instant::now();
                for _ in 0..iters {
                    rig.iterate().unwrap_or_else(|e| panic!("{id}: iterate: {e}"));
                }
                start.elapsed()
            }
            Style::Run => {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    observations.push(rig.run().unwrap_or_else(|e| panic!("{id}: run: {e}")).counters);
                    total += start.elapsed();
                }
                total
            }
        })
    });
    let outcome = rig.teardown().unwrap_or_else(|e| panic!("{id}: teardown: {e}"));
    let _ = std::fs::remove_dir_all(&scratch);
    let mut sets = vec![("outcome".to_string(), &outcome.counters)];
    sets.extend(observations.iter().enumerate().map(|(i, c)| (format!("run {}", i + 1), c)));
    let sets: Vec<(&str, _)> = sets.iter().map(|(label, c)| (label.as_str(), *c)).collect();
    if let Err(broken) = crate::check_invariants(&invariants, &sets) {
        panic!("{id}: {}", broken.join("; "));
    }
}

/// `rig/key=value,...` over the overridden parameters only, so a series keeps its name when a default changes.
fn series_name(rig: &str, overrides: &Value) -> String {
    match overrides.as_object().filter(|o| !o.is_empty()) {
        None => rig.to_string(),
        Some(o) => {
            let pairs: Vec<String> = o
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().map_or_else(|| v.to_string(), str::to_string)))
                .collect();
            format!("{rig}/{}", pairs.join(","))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::{Descriptor, Invariant, Metric, Outcome, Param, Rig, RigError, SetupContext};

    #[derive(serde::Deserialize)]
    struct Params {
        lie: bool,
    }

    /// Counts its calls and prepared batches; with `lie`, reports one call too many.
    struct Counting {
        calls: u64,
        prepared: u64,
        lie: bool,
    }

    impl Rig for Counting {
        type Params = Params;
        fn describe() -> Descriptor {
            Descriptor::iterations("counting", "counts")
                .param(Param::bool("lie", false))
                .metric(Metric::iter_time("t"))
                .invariant(Invariant::equal("calls", "prepared"))
        }
        fn setup(p: Params, _: &SetupContext) -> Result<Self, RigError> {
            Ok(Counting { calls: 0, prepared: 0, lie: p.lie })
        }
        fn prepare(&mut self, batch: u64) -> Result<(), RigError> {
            self.prepared += batch;
            Ok(())
        }
        fn iterate(&mut self) -> Result<(), RigError> {
            self.calls += 1;
            Ok(())
        }
        fn teardown(self) -> Result<Outcome, RigError> {
            Ok(Outcome::new().counter("calls", self.calls + u64::from(self.lie)).counter("prepared", self.prepared))
        }
    }

    fn quick() -> criterion::Criterion {
        criterion::Criterion::default()
            .warm_up_time(Duration::from_millis(10))
            .measurement_time(Duration::from_millis(50))
            .sample_size(10)
            .without_plots()
            // Criterion's reports go to a scratch directory, not into the source tree.
            .output_directory(&std::env::temp_dir().join("benchhost-plugin-api-criterion-tests"))
    }

    #[test]
    fn every_timed_batch_is_prepared_and_the_invariants_are_checked_after() {
        // `calls == prepared` holds only if every batch Criterion timed was prepared first, untimed.
        super::bench::<Counting>(&mut quick(), serde_json::json!({}));
    }

    #[test]
    #[should_panic(expected = "counting/lie=true: calls == prepared violated")]
    fn a_broken_invariant_panics_the_bench() {
        super::bench::<Counting>(&mut quick(), serde_json::json!({"lie": true}));
    }

    #[test]
    fn series_names_hold_only_what_the_caller_set() {
        assert_eq!(super::series_name("wal", &serde_json::json!({})), "wal");
        let set = serde_json::json!({"compression": "zstd", "rows": 1000});
        assert_eq!(super::series_name("wal", &set), "wal/compression=zstd,rows=1000");
    }
}
