//! The side-by-side proof (issue 4): four workloads measured by benchhost, as the `harness` rig here, and by
//! Criterion 0.8 (`benches/criterion.rs`) on the very same functions. `slowdown_pct` adds a calibrated delay,
//! to check that a known regression is detected. `proof.py` runs both, interleaved, and writes the table.

pub mod workloads;

use std::hint::black_box;
use std::time::Instant;

use benchhost_plugin_api::{Descriptor, Metric, Outcome, Param, Rig, RigError, SetupContext};
use serde::Deserialize;

use crate::workloads::{State, Workload, sort};

/// Parameters of `harness`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    workload: Workload,
    slowdown_pct: f64,
}

/// The rig.
pub struct Harness {
    state: State,
    workload: Workload,
    /// Inputs for the next timed batch of `sort10k`, made by `prepare`.
    inputs: Vec<Vec<u64>>,
    extra_rounds: u64,
    sink: u64,
}

impl Rig for Harness {
    type Params = Params;

    fn describe() -> Descriptor {
        Descriptor::iterations("harness", "the proof's workloads: noop, 64 KiB copy, sort 10k u64, wal IPC round trip")
            .param(Param::choice("workload", "noop", &["noop", "copy64k", "sort10k", "wal"]))
            .param(Param::float("slowdown_pct", 0.0).range(0, 100).doc("calibrated extra work, % of one iteration"))
            .metric(Metric::iter_time("time"))
    }

    fn setup(p: Params, _: &SetupContext) -> Result<Self, RigError> {
        let mut rig =
            Harness { state: State::new(p.workload), workload: p.workload, inputs: vec![], extra_rounds: 0, sink: 0 };
        if p.slowdown_pct > 0.0 {
            // Extra spin worth slowdown_pct of one iteration, calibrated on this machine.
            let per_iteration = rig.time_per_iteration();
            rig.extra_rounds = (per_iteration * p.slowdown_pct / 100.0 * rounds_per_ns()).round() as u64;
        }
        Ok(rig)
    }

    fn prepare(&mut self, batch: u64) -> Result<(), RigError> {
        if self.workload == Workload::Sort10k {
            self.inputs = (0..batch).map(|_| self.state.unsorted()).collect();
        }
        Ok(())
    }

    fn iterate(&mut self) -> Result<(), RigError> {
        let value = match self.workload {
            Workload::Sort10k => sort(self.inputs.pop().unwrap_or_else(|| self.state.unsorted())),
            _ => self.state.run(),
        };
        self.sink = self.sink.wrapping_add(black_box(value)).wrapping_add(spin(self.extra_rounds));
        Ok(())
    }

    fn teardown(self) -> Result<Outcome, RigError> {
        Ok(Outcome::new().counter("sink", self.sink))
    }
}

impl Harness {
    fn time_per_iteration(&mut self) -> f64 {
        let (mut n, start) = (0u64, Instant::now());
        while start.elapsed().as_millis() < 200 {
            black_box(self.state.run());
            n += 1;
        }
        start.elapsed().as_nanos() as f64 / n as f64
    }
}

fn spin(rounds: u64) -> u64 {
    let mut x = black_box(1u64);
    for _ in 0..rounds {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407));
    }
    x
}

fn rounds_per_ns() -> f64 {
    let rounds = 5_000_000;
    let start = Instant::now();
    black_box(spin(rounds));
    rounds as f64 / start.elapsed().as_nanos() as f64
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
    }
}
