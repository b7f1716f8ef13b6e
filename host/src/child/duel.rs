//! A duel (`--pairing alternate`): two arms of one rig measured in this one process. Both libraries are loaded
//! and both rigs set up, then the child takes pairs of samples, one of each arm back to back with the same
//! number of iterations, the arm that goes first swapped every pair. A slow phase of the machine (this VM has
//! ones ~1.5x slower, seconds long) then falls on both samples of a pair, and their ratio keeps what separates
//! the arms. Tango's original design (bazhenov/tango), with its order swap. A run-style rig's pairs are whole
//! runs, one of each arm, in the order A B B A ...

use std::time::{Duration, Instant};

use benchhost_plugin_api::{RigError, Style};

use crate::child::channel::Protocol;
use crate::child::heap;
use crate::child::idle::{self, IdleArms};
use crate::child::rig::{PluginRig, load_prepared, prepare, set_up, tear_down};
use crate::child::sampler::{Measure, timed};
use crate::proc::protocol::{DuelTask, Message, Phase};
use benchhost_record::Stop;

/// Runs the duel, speaking the protocol: messages about one arm go inside [`Message::Side`], the samples as
/// [`Message::Pair`].
pub(super) fn run(task: &DuelTask, out: &mut Protocol) {
    let side = |s: usize, message: Message| Message::Side { side: s, message: Box::new(message) };
    let fail = |out: &mut Protocol, s: usize, phase: Phase, err: RigError| {
        out.send(&side(s, Message::Error { phase, kind: err.kind, message: err.message }));
    };
    let order = [task.first.min(1), 1 - task.first.min(1)];
    out.send(&Message::Phase { phase: Phase::Load });
    if let Some(Err(e)) = task.sides[0].plan.memory_limit.map(heap::limit) {
        return out.error(Phase::Load, RigError::new(format!("setting the memory limit: {e}")));
    }
    // The private copies are most of the loading (~0.09 s each for a 151 MB library, on two threads): both
    // made at once.
    let copies = crate::in_order::map_in_order(order.to_vec(), 2, |s| prepare(&task.sides[s]));
    let (mut roots, mut styles) = ([None, None], [Style::Iterations; 2]);
    for (s, copy) in order.into_iter().zip(copies) {
        match load_prepared(&task.sides[s], copy, &mut |m| out.send(&side(s, m))) {
            Ok((root, style)) => (roots[s], styles[s]) = (Some(root), style),
            Err((phase, err)) => return fail(out, s, phase, err),
        }
    }
    if styles[0] != styles[1] {
        let why = "the two builds declare this rig in different styles (iterations and run): they cannot be paired";
        return fail(out, 1, Phase::Load, RigError::new(why));
    }
    out.send(&Message::Phase { phase: Phase::Setup });
    let (mut rigs, mut idle): ([Option<PluginRig>; 2], _) = ([None, None], IdleArms::default());
    for s in order {
        let root = roots[s].as_ref().expect("both sides loaded");
        let before = idle::threads();
        match set_up(root, &task.sides[s]) {
            Ok(rig) => rigs[s] = Some(rig),
            Err(err) => return fail(out, s, Phase::Setup, err),
        }
        idle.adopt(s, &before, &idle::threads());
    }
    let mut rigs = rigs.map(|r| r.expect("both sides set up"));
    let faults_before = heap::minor_faults();
    let measured = match styles[0] {
        Style::Iterations => measure(task, order, &mut rigs, &mut idle, &mut |m| out.send(&m)),
        Style::Run => measure_runs(task, order, &mut rigs, &mut idle, &mut |m| out.send(&m)),
    };
    if let Err((s, phase, err)) = measured {
        return fail(out, s, phase, err);
    }
    for s in order {
        if let Some(message) = idle.message(s) {
            out.send(&side(s, message));
        }
    }
    if let (Some(before), Some(after)) = (faults_before, heap::minor_faults()) {
        out.send(&Message::PageFaults { minor: after - before });
    }
    out.send(&Message::Phase { phase: Phase::Teardown });
    let [a, b] = rigs;
    let mut rigs = [Some(a), Some(b)];
    for s in order {
        match tear_down(rigs[s].take().expect("torn down once")) {
            Ok(outcome) => out.send(&side(s, outcome)),
            Err(err) => return fail(out, s, Phase::Teardown, err),
        }
    }
}

/// A failed step of one side: which side, where, and the rig's error.
type SideFailed = (usize, Phase, RigError);

/// Warm-up of both sides, then the pairs.
fn measure(
    task: &DuelTask,
    order: [usize; 2],
    rigs: &mut [PluginRig; 2],
    idle: &mut IdleArms,
    emit: &mut dyn FnMut(Message),
) -> Result<(), SideFailed> {
    emit(Message::Phase { phase: Phase::Warmup });
    let per_iteration = warm_up(order, rigs, idle, task.warmup_ns, emit)?;
    emit(Message::Phase { phase: Phase::Measure });
    // One batch size for both, sized on the slower side: the ratio of two samples is then the ratio of the
    // arms' times per iteration.
    let batch = ((task.sample_ns as f64 / per_iteration).ceil() as u64).max(1);
    let pairs = pairs_within_budget(task, batch as f64 * per_iteration);
    let (start, budget) = (Instant::now(), Duration::from_nanos(2 * u64::from(task.pairs) * task.sample_ns));
    for pair in 0..pairs {
        if !more_pairs(pair, pairs, start.elapsed(), budget) {
            break;
        }
        let turn = if pair % 2 == 0 { order } else { [order[1], order[0]] };
        let mut ns = [0u64; 2];
        for s in turn {
            let sample = || timed(&mut rigs[s], batch).map(|ns| (ns, ns));
            ns[s] = idle.while_timed(s, sample).map_err(|e| (s, Phase::Measure, e))?;
        }
        emit(Message::Pair { iterations: batch, ns });
    }
    emit(Message::Stopped { reason: Stop::Samples });
    Ok(())
}

/// The pairs to take when a sample lasts `sample_ns`: the task's pairs were counted at its `sample_ns`, and a
/// rig whose one iteration is longer (a 26 ms compaction against 10 ms samples) would spend that many times the
/// plan's measurement time; it takes as many as fit in it instead, at least [`MIN_PAIRS`]. The verdict's
/// interval is made of the spread between processes, so fewer pairs in each widen it honestly.
fn pairs_within_budget(task: &DuelTask, sample_ns: f64) -> u32 {
    let budget = task.pairs as f64 * task.sample_ns as f64;
    ((budget / sample_ns.max(1.0)).round() as u32).clamp(MIN_PAIRS.min(task.pairs), task.pairs)
}

/// Pairs of samples in a process, at least (unless the task asks for fewer).
pub const MIN_PAIRS: u32 = 10;

/// Whether to take pair `pair` of `pairs` when `elapsed` has passed since the first: not once `budget`, both
/// arms' share of the plan's measurement time, is spent in wall time, after at least [`MIN_PAIRS`] and an even
/// number of pairs (each arm first as often). The samples time only the rig; what lies between them (parking
/// the idle arm's worker threads, reading the clock) took a querier's processes ~1.5x the plan's time.
fn more_pairs(pair: u32, pairs: u32, elapsed: Duration, budget: Duration) -> bool {
    pair < pairs && (pair < MIN_PAIRS.min(pairs) || !pair.is_multiple_of(2) || elapsed < budget)
}

/// A run-style duel: pairs of runs, one of each side, the side that goes first swapped every pair (A B B A
/// ...), so a drift of the machine over the process falls on both sides alike: blocks of two pairs until
/// `task.sample_ns` is spent (at least one block, at most `task.pairs` pairs). No warm-up run (see
/// `run::duel_plan::Shape::runs`): threads a side starts in a run are watched from then on. Each run is an
/// [`Message::Observation`] of its side; the parent pairs the k-th of one side with the k-th of the other.
///
/// With a window (`SetupContext::window_ns`), each run is a short window of a workload that goes on from one
/// run of its side to the next; the first of each side starts it and is not counted. A side that ran a whole
/// run instead (a rig that cannot pause with these parameters) makes it a duel of whole runs: the first pair
/// counts, and the rest are whole runs too.
fn measure_runs(
    task: &DuelTask,
    order: [usize; 2],
    rigs: &mut [PluginRig; 2],
    idle: &mut IdleArms,
    emit: &mut dyn FnMut(Message),
) -> Result<(), SideFailed> {
    let on = |s: usize, message: Message| Message::Side { side: s, message: Box::new(message) };
    emit(Message::Phase { phase: if task.sides[0].window_ns.is_some() { Phase::Warmup } else { Phase::Measure } });
    let mut run = |s: usize| -> Result<Message, SideFailed> {
        let before = idle::threads();
        let o = idle.while_timed(s, || rigs[s].run()).map_err(|e| (s, Phase::Measure, e))?;
        idle.adopt(s, &before, &idle::threads());
        let (metrics, counters, note, window) = (o.metrics, o.counters, o.note, o.window);
        Ok(on(s, Message::Observation { metrics, counters, note, window }))
    };
    let mut first = None;
    if task.sides[0].window_ns.is_some() {
        let started = [run(order[0])?, run(order[1])?];
        let windows = started.iter().all(|m| matches!(m, Message::Side { message, .. } if window_of(message)));
        emit(Message::Phase { phase: Phase::Measure });
        first = (!windows).then_some(started);
    }
    let (start, budget) = (Instant::now(), Duration::from_nanos(task.sample_ns));
    let mut pair = 0;
    if let Some(started) = first {
        started.into_iter().for_each(&mut *emit);
        pair = 1;
    }
    while pair < task.pairs.max(2) && (pair % 2 == 1 || pair < 2 || start.elapsed() < budget) {
        let turn = if pair % 2 == 0 { order } else { [order[1], order[0]] };
        for s in turn {
            emit(run(s)?);
        }
        pair += 1;
    }
    Ok(())
}

/// Whether `message` is an observation of one window.
fn window_of(message: &Message) -> bool {
    matches!(message, Message::Observation { window: true, .. })
}

/// Doubling batches, taken by both sides in turn with the same size, until each has run `warmup_ns`; the
/// slower side's time per iteration in its last batch.
fn warm_up(
    order: [usize; 2],
    rigs: &mut [PluginRig; 2],
    idle: &mut IdleArms,
    warmup_ns: u64,
    emit: &mut dyn FnMut(Message),
) -> Result<f64, SideFailed> {
    let (mut n, mut spent, mut done, mut last) = (1u64, [0u64; 2], 0u64, [1f64; 2]);
    loop {
        for s in order {
            let before = idle::threads();
            let ns = timed(&mut rigs[s], n).map_err(|e| (s, Phase::Warmup, e))?;
            idle.adopt(s, &before, &idle::threads());
            spent[s] = spent[s].saturating_add(ns);
            last[s] = ns.max(1) as f64 / n as f64;
        }
        done += n;
        let slower = last[0].max(last[1]);
        let least = spent[0].min(spent[1]);
        if least >= warmup_ns {
            for s in order {
                let message = Message::Warmup { iterations: done, ns: spent[s], counters: None };
                emit(Message::Side { side: s, message: Box::new(message) });
            }
            return Ok(slower);
        }
        let remaining = (warmup_ns - least) as f64 / slower;
        n = n.saturating_mul(2).min(remaining.ceil().max(1.0) as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_stop_at_the_wall_time_budget_after_the_least_and_on_an_even_count() {
        let (budget, over, under) = (Duration::from_secs(1), Duration::from_secs(2), Duration::from_millis(10));
        let taken = |elapsed| (0..40).take_while(|&pair| more_pairs(pair, 40, elapsed, budget)).count();
        assert_eq!(taken(under), 40, "within the budget: every planned pair");
        assert_eq!(taken(over), MIN_PAIRS as usize, "over it: the least");
        assert!(more_pairs(11, 40, over, budget), "a block of two is finished");
        assert!(!more_pairs(12, 40, over, budget));
        assert_eq!((0..40).take_while(|&pair| more_pairs(pair, 4, over, budget)).count(), 4, "a task of 4 pairs");
    }
}
