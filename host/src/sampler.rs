//! How a child measures one rig: warm-up, calibration, samples (iterations style) or repetitions (run
//! style). It talks to the rig through [`Measure`], so tests drive it with a fake rig and a fake clock.

use benchhost_plugin_api::{Observation, RigError};

use crate::protocol::{Message, Phase, Plan};

/// The rig as the sampler sees it.
pub trait Measure {
    /// Untimed preparation for a batch of `n` iterations.
    fn prepare(&mut self, n: u64) -> Result<(), RigError>;
    /// Runs `n` iterations under one clock pair; returns the elapsed nanoseconds.
    fn measure(&mut self, n: u64) -> Result<u64, RigError>;
    /// One run-style repetition and the wall time it took, in nanoseconds.
    fn run(&mut self) -> Result<(Observation, u64), RigError>;
}

/// A failed step: where, and the rig's error.
pub type Failed = (Phase, RigError);

/// Warms up for `plan.warmup_ns` with doubling batches, picks the batch size `n` so a sample lasts about
/// `plan.sample_ns`, then takes `plan.samples` samples of `n` iterations. Each message is emitted as soon as
/// it exists, so a crash later salvages what came before.
pub fn iterations(rig: &mut dyn Measure, plan: &Plan, emit: &mut dyn FnMut(Message)) -> Result<(), Failed> {
    emit(Message::Phase { phase: Phase::Warmup });
    let warm = |e| (Phase::Warmup, e);
    let (mut n, mut spent, mut done) = (1u64, 0u64, 0u64);
    let per_iteration = loop {
        rig.prepare(n).map_err(warm)?;
        let ns = rig.measure(n).map_err(warm)?;
        spent = spent.saturating_add(ns);
        done += n;
        let per_iteration = ns.max(1) as f64 / n as f64;
        if spent >= plan.warmup_ns {
            break per_iteration;
        }
        // Double, but never overshoot the remaining warm-up by more than one batch's worth.
        let remaining = (plan.warmup_ns - spent) as f64 / per_iteration;
        n = (n.saturating_mul(2)).min(remaining.ceil().max(1.0) as u64);
    };
    emit(Message::Warmup { iterations: done, ns: spent });

    emit(Message::Phase { phase: Phase::Measure });
    let batch = ((plan.sample_ns as f64 / per_iteration).ceil() as u64).max(1);
    for _ in 0..plan.samples {
        rig.prepare(batch).map_err(|e| (Phase::Measure, e))?;
        let ns = rig.measure(batch).map_err(|e| (Phase::Measure, e))?;
        emit(Message::Sample { iterations: batch, ns });
    }
    Ok(())
}

/// One discarded run when a warm-up is asked for, then `plan.repetitions` runs.
pub fn repetitions(rig: &mut dyn Measure, plan: &Plan, emit: &mut dyn FnMut(Message)) -> Result<(), Failed> {
    if plan.warmup_ns > 0 {
        emit(Message::Phase { phase: Phase::Warmup });
        let (_, ns) = rig.run().map_err(|e| (Phase::Warmup, e))?;
        emit(Message::Warmup { iterations: 1, ns });
    }
    emit(Message::Phase { phase: Phase::Measure });
    for _ in 0..plan.repetitions {
        let (observation, _) = rig.run().map_err(|e| (Phase::Measure, e))?;
        emit(Message::Observation {
            metrics: observation.metrics,
            counters: observation.counters,
            note: observation.note,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rig whose iterations take `ns_per_iter` of fake time, failing after `fail_after` iterations.
    struct Fake {
        ns_per_iter: u64,
        iterations: u64,
        prepared: Vec<u64>,
        fail_after: u64,
    }

    impl Measure for Fake {
        fn prepare(&mut self, n: u64) -> Result<(), RigError> {
            self.prepared.push(n);
            Ok(())
        }
        fn measure(&mut self, n: u64) -> Result<u64, RigError> {
            self.iterations += n;
            if self.iterations > self.fail_after {
                return Err(RigError::new("boom"));
            }
            Ok(n * self.ns_per_iter)
        }
        fn run(&mut self) -> Result<(Observation, u64), RigError> {
            self.iterations += 1;
            Ok((Observation::new().metric("m", self.iterations as f64), 10))
        }
    }

    fn fake(ns_per_iter: u64) -> Fake {
        Fake { ns_per_iter, iterations: 0, prepared: vec![], fail_after: u64::MAX }
    }

    fn plan() -> Plan {
        Plan { warmup_ns: 1_000_000, samples: 5, sample_ns: 100_000, repetitions: 3 }
    }

    #[test]
    fn calibrates_batches_to_the_sample_time() {
        let (mut rig, mut out) = (fake(100), vec![]);
        iterations(&mut rig, &plan(), &mut |m| out.push(m)).unwrap();
        let samples: Vec<_> = out
            .iter()
            .filter_map(|m| match m {
                Message::Sample { iterations, ns } => Some((*iterations, *ns)),
                _ => None,
            })
            .collect();
        assert_eq!(samples, vec![(1000, 100_000); 5]);
        let Some(Message::Warmup { ns, .. }) = out.iter().find(|m| matches!(m, Message::Warmup { .. })) else {
            panic!()
        };
        assert!(*ns >= 1_000_000 && *ns < 2_000_000, "warm-up {ns}");
        // Every timed batch was prepared with its own size first.
        assert_eq!(rig.prepared.last(), Some(&1000));
    }

    #[test]
    fn slow_iterations_get_batches_of_one() {
        let (mut rig, mut out) = (fake(10_000_000), vec![]);
        iterations(&mut rig, &plan(), &mut |m| out.push(m)).unwrap();
        assert!(out.contains(&Message::Sample { iterations: 1, ns: 10_000_000 }));
    }

    #[test]
    fn a_failure_reports_its_phase_after_the_samples_taken() {
        let mut rig = fake(100);
        rig.fail_after = 12_000; // warm-up uses ~10k iterations, so the failure lands in the samples
        let mut out = vec![];
        let (phase, err) = iterations(&mut rig, &plan(), &mut |m| out.push(m)).unwrap_err();
        assert_eq!((phase, err.message.as_str()), (Phase::Measure, "boom"));
        assert!(out.iter().any(|m| matches!(m, Message::Sample { .. })), "samples before the failure are kept");
    }

    #[test]
    fn run_style_discards_the_warmup_run() {
        let (mut rig, mut out) = (fake(1), vec![]);
        repetitions(&mut rig, &plan(), &mut |m| out.push(m)).unwrap();
        let values: Vec<f64> = out
            .iter()
            .filter_map(|m| match m {
                Message::Observation { metrics, .. } => Some(metrics["m"]),
                _ => None,
            })
            .collect();
        assert_eq!(values, [2.0, 3.0, 4.0]);
    }
}
