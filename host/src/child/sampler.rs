//! How a child measures one rig: warm-up, calibration, samples (iterations style) or repetitions (run
//! style). It talks to the rig through [`Measure`], so tests drive it with a fake rig and a fake clock.

use benchhost_plugin_api::{Observation, RigError};

use crate::plan::settings::{MIN_TARGET_SAMPLES, Plan};
use crate::proc::protocol::{Message, Phase};
use crate::stats::{self, Sampling};
use benchhost_record::Stop;

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
/// `plan.sample_ns` (from the warm-up as a whole: [`per_iteration`]), then takes `plan.samples` samples of `n`
/// iterations. Each message is emitted as soon as it exists, so a crash later salvages what came before.
pub fn iterations(rig: &mut dyn Measure, plan: &Plan, emit: &mut dyn FnMut(Message)) -> Result<(), Failed> {
    emit(Message::Phase { phase: Phase::Warmup });
    let warm = |e| (Phase::Warmup, e);
    let (mut n, mut spent, mut batches) = (1u64, 0u64, Vec::new());
    loop {
        let ns = timed(rig, n).map_err(warm)?;
        spent = spent.saturating_add(ns);
        batches.push((n, ns));
        if spent >= plan.warmup_ns {
            break;
        }
        // Double, but never overshoot the remaining warm-up by more than one batch's worth.
        let remaining = (plan.warmup_ns - spent) as f64 / (ns.max(1) as f64 / n as f64);
        n = (n.saturating_mul(2)).min(remaining.ceil().max(1.0) as u64);
    }
    let done = batches.iter().map(|&(n, _)| n).sum();
    emit(Message::Warmup { iterations: done, ns: spent, counters: None });
    let per_iteration = per_iteration(&batches);

    emit(Message::Phase { phase: Phase::Measure });
    // Flat: every sample runs `batch` iterations. Linear: sample i runs i·d, with d chosen so the planned
    // samples together last about as long as the flat ones would.
    let batch = ((plan.sample_ns as f64 / per_iteration).ceil() as u64).max(1);
    let samples = u64::from(plan.samples);
    let step = ((batch * samples) as f64 / (samples * (samples + 1) / 2) as f64).ceil().max(1.0) as u64;
    let (mut taken, mut spent) = (Vec::new(), 0u64);
    let reason = loop {
        let n = match plan.sampling {
            Sampling::Flat => batch,
            Sampling::Linear => step * (taken.len() as u64 + 1),
        };
        let ns = timed(rig, n).map_err(|e| (Phase::Measure, e))?;
        emit(Message::Sample { iterations: n, ns });
        taken.push((n, ns));
        spent = spent.saturating_add(ns);
        match plan.target_ci {
            Some(target) if taken.len() >= MIN_TARGET_SAMPLES && precision(&taken, plan.sampling) <= target => {
                break Stop::Target;
            }
            Some(_) if spent >= plan.budget_ns => break Stop::Budget,
            Some(_) => {}
            None if taken.len() as u64 >= samples => break Stop::Samples,
            None => {}
        }
    };
    emit(Message::Stopped { reason });
    Ok(())
}

/// Batches of the warm-up whose time per iteration sizes the samples: those of at least this share of the
/// largest batch's iterations (the doubling batches' last four or five, and the final one unless it was clamped
/// to a few iterations, whose time is mostly the clock's and the call's).
const SIZING_SHARE: u64 = 16;

/// The time per iteration the samples are sized from: the median over the warm-up's large batches
/// (`(iterations, ns)` each, in order). One batch alone moved the batch size by up to 9x: a preemption in it,
/// or a final batch clamped to a few iterations; the median of four or more is moved by neither. Criterion
/// sizes its samples from all of its warm-up too (its total), and the doubling batches make the median of
/// the large ones a fit over most of it.
fn per_iteration(batches: &[(u64, u64)]) -> f64 {
    let largest = batches.iter().map(|&(n, _)| n).max().unwrap_or(1);
    let times: Vec<f64> = batches
        .iter()
        .filter(|&&(n, _)| n.saturating_mul(SIZING_SHARE) >= largest)
        .map(|&(n, ns)| ns.max(1) as f64 / n as f64)
        .collect();
    stats::median(&times)
}

/// Batches per sample: a sample of `n` iterations runs as this many batches of at most `ceil(n / 10)`, each
/// prepared (untimed) right before it is timed, and the sample is their summed time.
pub const BATCHES_PER_SAMPLE: u64 = 10;

/// `n` iterations in [`BATCHES_PER_SAMPLE`] prepared-then-timed batches; their summed time. As Criterion's
/// `iter_batched` with `SmallInput`: what a rig makes in `prepare` is made a tenth of a sample at a time, so
/// the inputs of a long sample are not pushed out of cache by the ones made after them (the harness rig's sort
/// of 10,000 u64, fed a whole 100 ms sample's ~650 inputs of 80 KB at once, read 17% slower than under
/// Criterion). The extra FFI calls and clock pairs cost under 1 µs per sample: 0.01% of a 10 ms sample.
pub(crate) fn timed(rig: &mut dyn Measure, n: u64) -> Result<u64, RigError> {
    let batch = n.div_ceil(BATCHES_PER_SAMPLE).max(1);
    let (mut left, mut ns) = (n, 0u64);
    while left > 0 {
        let k = batch.min(left);
        rig.prepare(k)?;
        ns = ns.saturating_add(rig.measure(k)?);
        left -= k;
    }
    Ok(ns)
}

/// Relative CI95 half-width of the time per iteration so far. Cheap on purpose (it runs after every sample):
/// order statistics for the median, 200 bootstrap resamples for the slope.
fn precision(samples: &[(u64, u64)], sampling: Sampling) -> f64 {
    let (value, ci) = match sampling {
        Sampling::Flat => {
            let times: Vec<f64> = samples.iter().map(|&(n, ns)| ns as f64 / n as f64).collect();
            (stats::median(&times), stats::median_ci95_fast(&times))
        }
        Sampling::Linear => match stats::time_per_iteration(samples, sampling, 200) {
            Some(e) => (e.value, e.ci95),
            None => return f64::INFINITY,
        },
    };
    ci.map_or(f64::INFINITY, |[lo, hi]| (hi - lo) / 2.0 / value.abs())
}

/// One warm-up run when the plan asks for it (its metrics discarded, its counters reported for the
/// invariants), then `plan.repetitions` runs.
pub fn repetitions(rig: &mut dyn Measure, plan: &Plan, emit: &mut dyn FnMut(Message)) -> Result<(), Failed> {
    if plan.warmup_run {
        emit(Message::Phase { phase: Phase::Warmup });
        let (observation, ns) = rig.run().map_err(|e| (Phase::Warmup, e))?;
        emit(Message::Warmup { iterations: 1, ns, counters: Some(observation.counters) });
    }
    emit(Message::Phase { phase: Phase::Measure });
    for _ in 0..plan.repetitions {
        let (observation, _) = rig.run().map_err(|e| (Phase::Measure, e))?;
        emit(Message::Observation {
            metrics: observation.metrics,
            counters: observation.counters,
            note: observation.note,
            window: observation.window,
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
        measured: Vec<u64>,
        fail_after: u64,
    }

    impl Measure for Fake {
        fn prepare(&mut self, n: u64) -> Result<(), RigError> {
            self.prepared.push(n);
            Ok(())
        }
        fn measure(&mut self, n: u64) -> Result<u64, RigError> {
            self.measured.push(n);
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
        Fake { ns_per_iter, iterations: 0, prepared: vec![], measured: vec![], fail_after: u64::MAX }
    }

    fn plan() -> Plan {
        Plan::flat(1_000_000, 5, 100_000, 3)
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
        // Every sample ran as 10 batches of 100, each prepared with its own size first.
        assert_eq!(rig.prepared[rig.prepared.len() - 10..], [100; 10]);
        assert_eq!(rig.measured[rig.measured.len() - 10..], [100; 10]);
    }

    fn sizes(out: &[Message]) -> Vec<u64> {
        out.iter()
            .filter_map(|m| if let Message::Sample { iterations, .. } = m { Some(*iterations) } else { None })
            .collect()
    }

    #[test]
    fn linear_sampling_grows_the_batches_by_a_constant_step() {
        let (mut rig, mut out) = (fake(100), vec![]);
        let linear = Plan { sampling: Sampling::Linear, ..plan() };
        iterations(&mut rig, &linear, &mut |m| out.push(m)).unwrap();
        // flat would be 5 x 1000; linear spreads the same 5000 as d, 2d, ..., 5d with d = ceil(5000 / 15).
        assert_eq!(sizes(&out), [334, 668, 1002, 1336, 1670]);
        assert!(out.contains(&Message::Stopped { reason: Stop::Samples }));
    }

    #[test]
    fn a_target_precision_stops_early_and_a_budget_stops_the_noisy() {
        // Constant time per iteration: the CI is zero wide, so the minimum sample count suffices.
        let (mut rig, mut out) = (fake(100), vec![]);
        let targeted = Plan { target_ci: Some(0.01), budget_ns: 10_000_000, ..plan() };
        iterations(&mut rig, &targeted, &mut |m| out.push(m)).unwrap();
        assert_eq!(sizes(&out).len(), MIN_TARGET_SAMPLES);
        assert!(out.contains(&Message::Stopped { reason: Stop::Target }));
        // A target no sample set can reach: the budget (10 samples of 100 µs = 1 ms) ends it.
        let (mut rig, mut out) = (Noisy(0), vec![]);
        let hopeless = Plan { target_ci: Some(1e-9), budget_ns: 1_000_000, ..plan() };
        iterations(&mut rig, &hopeless, &mut |m| out.push(m)).unwrap();
        assert!(out.contains(&Message::Stopped { reason: Stop::Budget }));
        assert!((10..=12).contains(&sizes(&out).len()), "{}", sizes(&out).len());
    }

    /// A rig whose batches cycle through three speeds (so samples of ten batches differ).
    struct Noisy(u64);

    impl Measure for Noisy {
        fn prepare(&mut self, _: u64) -> Result<(), RigError> {
            Ok(())
        }
        fn measure(&mut self, n: u64) -> Result<u64, RigError> {
            self.0 += 1;
            Ok(n * [90, 110, 100][(self.0 % 3) as usize])
        }
        fn run(&mut self) -> Result<(Observation, u64), RigError> {
            unreachable!()
        }
    }

    #[test]
    fn a_sample_is_split_into_prepared_batches_that_add_up_to_it() {
        let mut rig = fake(7);
        assert_eq!(timed(&mut rig, 95).unwrap(), 95 * 7);
        assert_eq!(rig.prepared, [10, 10, 10, 10, 10, 10, 10, 10, 10, 5]);
        assert_eq!(rig.measured, rig.prepared, "each batch is measured with the size it was prepared for");
        let mut rig = fake(7);
        assert_eq!(timed(&mut rig, 3).unwrap(), 21);
        assert_eq!(rig.prepared, [1, 1, 1], "fewer iterations than batches: batches of one");
    }

    /// A rig of `ns_per_iter` whose batch that ends the warm-up of `warmup_ns` stalls for `stall_ns` more (a
    /// preemption).
    struct Stalling {
        ns_per_iter: u64,
        warmup_ns: u64,
        stall_ns: u64,
        spent: u64,
    }

    impl Measure for Stalling {
        fn prepare(&mut self, _: u64) -> Result<(), RigError> {
            Ok(())
        }
        fn measure(&mut self, n: u64) -> Result<u64, RigError> {
            let mut ns = n * self.ns_per_iter;
            if self.spent < self.warmup_ns && self.spent + ns >= self.warmup_ns {
                ns += self.stall_ns;
            }
            self.spent += ns;
            Ok(ns)
        }
        fn run(&mut self) -> Result<(Observation, u64), RigError> {
            unreachable!()
        }
    }

    #[test]
    fn a_stall_in_the_last_warm_up_batch_does_not_size_the_samples() {
        // regression: the batch came from the last warm-up batch alone; one preemption in it (or a last batch
        // clamped to a few iterations) gave cells 47-100% of their planned sample time, once a ninth.
        let plan = Plan::flat(20_000_000, 10, 2_000_000, 3);
        let mut rig = Stalling { ns_per_iter: 100, warmup_ns: plan.warmup_ns, stall_ns: 20_000_000, spent: 0 };
        let mut out = vec![];
        iterations(&mut rig, &plan, &mut |m| out.push(m)).unwrap();
        let planned = plan.sample_ns / 100;
        let batch = sizes(&out)[0];
        assert!(batch.abs_diff(planned) * 10 <= planned, "batch {batch} for a plan of {planned}");
    }

    #[test]
    fn a_last_warm_up_batch_of_a_few_iterations_does_not_size_the_samples() {
        // A rig of 1.4 ns per iteration and 50 ns per timed call: doubling batches of up to ten calls, then a
        // last batch clamped to 3 iterations, whose time is mostly its three calls (51 ns per iteration).
        let time = |n: u64| (n as f64 * 1.4) as u64 + n.min(BATCHES_PER_SAMPLE) * 50;
        let mut batches: Vec<(u64, u64)> = (0..23).map(|k| (1u64 << k, time(1 << k))).collect();
        batches.push((3, time(3)));
        let estimate = per_iteration(&batches);
        assert!((estimate / 1.4 - 1.0).abs() < 0.02, "{estimate} ns per iteration");
        let last = batches.last().map(|&(n, ns)| ns as f64 / n as f64).unwrap();
        assert!(last > 50.0, "the last batch alone would size samples {:.0}x too small", last / 1.4);
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
        let (mut rig, mut out) = (fake(1), vec![]);
        repetitions(&mut rig, &Plan { warmup_run: false, ..plan() }, &mut |m| out.push(m)).unwrap();
        assert!(!out.iter().any(|m| matches!(m, Message::Warmup { .. })), "a plan without one has no warm-up run");
        assert_eq!(out.iter().filter(|m| matches!(m, Message::Observation { .. })).count(), 3);
    }
}
