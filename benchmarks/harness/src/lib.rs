//! The side-by-side proof (issue 4): four workloads measured by benchhost, as the `harness` rig here, and by
//! Criterion 0.8 (`benches/criterion.rs`) on the very same functions. `spin_rounds` adds a fixed amount of
//! work, which `proof.py` sizes to a 5% slowdown, to check that a known regression is detected. (A delay
//! calibrated inside each process varied between processes, and a spin timed on its own overlapped with
//! memory-bound workloads: a "5%" spin added 1.2% to the 64 KiB copy.) `proof.py` runs both, interleaved, and writes the table.

pub mod workloads;

use std::hint::black_box;

use benchhost_plugin_api::{Descriptor, Metric, Outcome, Param, Rig, RigError, SetupContext, slower};
use serde::Deserialize;

use crate::workloads::{State, Workload, sort, spin};

/// The spin compiled into a build with the `slower` feature: `HARNESS_SLOWER_SPIN` rounds per iteration, read
/// when the plugin is compiled (0 without the feature). It makes a second build of the same tree with a
/// compiled-in change, as `proof.py` needs for `run --against`.
pub const BUILT_IN_SPIN: u64 =
    if cfg!(feature = "slower") { slower::rounds(option_env!("HARNESS_SLOWER_SPIN")) } else { 0 };

/// Parameters of `harness`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    workload: Workload,
    spin_rounds: i64,
    spin_every: i64,
    // Read by nobody: it only names an arm.
    #[allow(dead_code)]
    replica: i64,
}

/// The rig.
pub struct Harness {
    state: State,
    workload: Workload,
    /// Inputs for the next timed batch of `sort10k`, made by `prepare`.
    inputs: Vec<Vec<u64>>,
    extra_rounds: u64,
    /// The spin runs on one iteration in this many.
    spin_every: u64,
    /// Iterations left until the next spin.
    spin_in: u64,
}

impl Rig for Harness {
    type Params = Params;

    fn describe() -> Descriptor {
        Descriptor::iterations("harness", "the proof's workloads: noop, 64 KiB copy, sort 10k u64, wal IPC round trip")
            .param(Param::choice("workload", "noop", &["noop", "copy64k", "sort10k", "wal"]))
            .param(
                Param::int("spin_rounds", 0)
                    .range(0, 1_000_000_000)
                    .doc("extra dependent arithmetic per iteration: a known, identical slowdown in every process"),
            )
            .param(Param::int("spin_every", 1).range(1, 1_000_000).doc(
                "the spin runs on one iteration in this many: a fraction of a round per iteration, for slowdowns \
                 smaller than one round (instruction counts at +1% of the noop); compare with spin_rounds = 0 and \
                 the same spin_every",
            ))
            .param(
                Param::int("replica", 0)
                    .range(0, 1_000)
                    .doc("changes nothing: arms that differ only here run identical code (A/A comparisons)"),
            )
            .metric(Metric::iter_time("time"))
    }

    fn setup(p: Params, _: &SetupContext) -> Result<Self, RigError> {
        let rig = Harness {
            state: State::new(p.workload),
            workload: p.workload,
            inputs: vec![],
            extra_rounds: p.spin_rounds as u64 + BUILT_IN_SPIN,
            spin_every: p.spin_every as u64,
            spin_in: p.spin_every as u64,
        };
        Ok(rig)
    }

    fn prepare(&mut self, batch: u64) -> Result<(), RigError> {
        if self.workload == Workload::Sort10k {
            // Reversed so that `pop` sorts them in the order they were made, as Criterion's `iter_batched` does:
            // the oldest input, the one furthest out of cache, first.
            self.inputs = (0..batch).map(|_| self.state.unsorted()).collect();
            self.inputs.reverse();
        }
        Ok(())
    }

    // Inlined into the plugin-api's batch loop, as Criterion's closure is into its own: without it the noop
    // pays a call and a returned `Result` per iteration (~1 ns here: median 5.0 ns called, 3.7 ns inlined).
    #[inline]
    fn iterate(&mut self) -> Result<(), RigError> {
        let value = match self.workload {
            Workload::Sort10k => sort(self.inputs.pop().unwrap_or_else(|| self.state.unsorted())),
            _ => self.state.run(),
        };
        // As Criterion's `iter`, only the result goes through black_box: no extra work for the noop to carry.
        black_box(value);
        if self.spin_every > 1 {
            // Also with no rounds: an arm with `spin_rounds = 0` and the same `spin_every` is then the reference
            // that differs from a spun arm by the rounds alone, not by this countdown and call.
            self.spin_in -= 1;
            if self.spin_in == 0 {
                self.spin_in = self.spin_every;
                black_box(spin(self.extra_rounds));
            }
        } else if self.extra_rounds > 0 {
            black_box(spin(self.extra_rounds));
        }
        Ok(())
    }

    fn teardown(self) -> Result<Outcome, RigError> {
        Ok(Outcome::new())
    }
}

benchhost_plugin_api::export_rigs![Harness];

#[cfg(test)]
mod tests {
    use benchhost_plugin_api::testing;
    use serde_json::json;

    use super::*;

    #[test]
    fn every_workload_runs_and_sorting_really_sorts() {
        for w in Workload::ALL {
            testing::run::<Harness>(json!({ "workload": w.name() }), 3).unwrap();
        }
        assert_eq!(sort(vec![5, 3, 9]), 3);
        assert_eq!(State::new(Workload::Wal).run(), 1000, "the round trip returns every row");
        assert_eq!(State::new(Workload::Copy64k).run(), 7, "the copy's last byte is its source's");
    }

    #[test]
    fn both_arms_copy_between_buffers_placed_alike() {
        // The first state takes what the heap has, the second what is left: their buffers' places within a
        // page and from each other are the same all the same.
        let (first, second) = (State::new(Workload::Copy64k), State::new(Workload::Copy64k));
        for state in [&first, &second] {
            let (source, destination) = state.copy_places();
            assert_eq!((source % 4096, destination % 4096, destination - source), (0, 2048, 65536 + 2048));
        }
    }

    #[test]
    fn the_compiled_in_spin_is_read_as_a_number() {
        assert_eq!((slower::rounds(Some("25752")), slower::rounds(Some("")), slower::rounds(None)), (25752, 0, 0));
        assert_eq!(BUILT_IN_SPIN, 0, "the tests build without the `slower` feature");
    }
}
