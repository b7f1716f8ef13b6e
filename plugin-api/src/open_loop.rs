//! Open-loop load for run-style rigs: operations started on a constant-rate schedule, each one's latency taken
//! from the time it was *meant* to start, as wrk2 and OpenMessaging Benchmark do.
//!
//! A closed loop starts the next operation when the last one ends, so a stall delays every operation that
//! should have started during it, and none of them is measured: coordinated omission (Gil Tene). Here
//! operation `i` is due at `start + i x interval`; when it runs late, the time it waited counts. Both views are
//! kept, in HDR histograms: `corrected` (from the intended start) and `uncorrected` (from the actual start, what
//! a closed loop reports), with the achieved rate, the operations that started late and the worst lateness.
//!
//! # Examples
//! ```
//! use benchhost_plugin_api::open_loop::Schedule;
//! let schedule = Schedule::per_second(2_000.0).unwrap();
//! let mut done = 0;
//! let run = schedule.drive(100, |_| { done += 1; Ok(()) }).unwrap();
//! assert_eq!((run.ops, done), (100, 100));
//! // The rate is reached unless the machine is busy: then the run is a failure, not a latency number.
//! if let Err(not_sustained) = run.sustained() {
//!     eprintln!("{}", not_sustained.message);
//! }
//! let observation = run.metrics(benchhost_plugin_api::Observation::new(), "append");
//! assert!(observation.metrics.contains_key("p99_append_us_uncorrected"));
//! ```

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::{Descriptor, Metric, Observation, RigError, Unit};

/// How far below its target rate a run may fall before it is a failure, not a latency number for a load that
/// was not applied: 5%.
pub const SUSTAIN_MARGIN: f64 = 0.05;

/// The one stall a run may take on top of [`SUSTAIN_MARGIN`]: a short run (a smoke run's 0.25 s window) cannot
/// hold a rate through one scheduling hiccup of a VM, which alone cost a kafka_topology `--quick` run 19% of its
/// rate (8,096/s of 10,000/s), failing it 1 time in 8. Over the 2 s of a measurement it is the margin itself.
pub const SUSTAIN_STALL: Duration = Duration::from_millis(100);

/// The most of its rate a run may lose to that stall: a quarter. A run shorter than the stall (200 fsyncs asked
/// for at 1,000,000/s) would otherwise be let off any shortfall.
pub const SUSTAIN_STALL_SHARE: f64 = 0.25;

/// Time before an operation is due from which the driver spins instead of sleeping: a sleep wakes up to
/// ~100 µs late on a loaded Linux VM, more than the interval of a rate of 10,000/s.
const SPIN: Duration = Duration::from_micros(200);

/// The percentiles an open-loop run reports, by name: enough points for a latency-by-percentile plot (the
/// reports draw one), few enough that a comparison does not drown in tails too thin to judge.
pub const PERCENTILES: [(&str, f64); 4] = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)];

/// A constant-rate schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    interval_ns: u64,
    per_s: f64,
}

/// What a run on a [`Schedule`] measured.
#[derive(Debug, Clone)]
pub struct OpenLoopRun {
    /// Latency of each operation from its intended start to its end, ns.
    pub corrected: Histogram<u64>,
    /// Latency of each operation from its actual start to its end, ns (what a closed loop reports).
    pub uncorrected: Histogram<u64>,
    /// Operations run.
    pub ops: u64,
    /// Operations that started at least one interval after they were due.
    pub late: u64,
    /// The most an operation started after it was due.
    pub worst_late: Duration,
    /// From the first operation's intended start to the last one's end.
    pub elapsed: Duration,
    /// The rate asked for, per second.
    pub target_per_s: f64,
}

impl Schedule {
    /// One operation every 1/`rate` seconds. A rate that is not a positive number, or whose interval is not a
    /// whole number of nanoseconds between 1 and `u64::MAX`, is invalid.
    pub fn per_second(rate: f64) -> Result<Schedule, RigError> {
        let interval = 1e9 / rate;
        if !(rate > 0.0 && interval.is_finite() && (1.0..=u64::MAX as f64).contains(&interval)) {
            return Err(RigError::invalid_params(format!(
                "rate {rate}/s has no interval between 1 ns and {} ns",
                u64::MAX
            )));
        }
        Ok(Schedule { interval_ns: interval.round() as u64, per_s: rate })
    }

    /// The time between two intended starts.
    pub fn interval(&self) -> Duration {
        Duration::from_nanos(self.interval_ns)
    }

    /// The rate asked for, per second (its interval is rounded to the nanosecond).
    pub fn rate(&self) -> f64 {
        self.per_s
    }

    /// When operation `i` of a run that started at `start` is due.
    pub fn due(&self, start: Instant, i: u64) -> Instant {
        start + Duration::from_nanos(self.interval_ns.saturating_mul(i))
    }

    /// Starts operations `0..ops` on the schedule without waiting for them to end, for rigs whose operations
    /// end where the caller cannot see (a record produced here is consumed by another thread): `begin(i, due)`
    /// is called for each when it is due, never early, the ones that came due while the thread slept or worked
    /// at once and in order. The rig records each operation's end itself, from the `due` it was given, with
    /// [`OpenLoopRun::record`]. Between operations it sleeps and never spins: a sender that held a core would
    /// take it from what is measured on a 2-core machine; its wake-up delay is part of the corrected latency,
    /// as a slow load generator's is in wrk2's.
    pub fn issue(
        &self,
        ops: u64,
        mut begin: impl FnMut(u64, Instant) -> Result<(), RigError>,
    ) -> Result<Issued, RigError> {
        let start = Instant::now();
        let mut issued = Issued { start, ops: 0, late: 0, worst_late: Duration::ZERO };
        for i in 0..ops {
            let due = self.due(start, i);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            let lateness = Instant::now().saturating_duration_since(due);
            issued.late += u64::from(lateness.as_nanos() >= u128::from(self.interval_ns));
            issued.worst_late = issued.worst_late.max(lateness);
            begin(i, due)?;
            issued.ops += 1;
        }
        Ok(issued)
    }

    /// A run with nothing recorded yet, to take the ends of operations started by [`Schedule::issue`].
    pub fn run_of(&self, issued: &Issued) -> OpenLoopRun {
        let mut run = self.empty_run();
        (run.ops, run.late, run.worst_late) = (issued.ops, issued.late, issued.worst_late);
        run
    }

    /// A run with nothing recorded, at this schedule's target: one thread's share of the operations'
    /// latencies, added to the run's with [`OpenLoopRun::add_latencies`].
    pub fn empty_run(&self) -> OpenLoopRun {
        let histogram = || Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds");
        OpenLoopRun {
            corrected: histogram(),
            uncorrected: histogram(),
            ops: 0,
            late: 0,
            worst_late: Duration::ZERO,
            elapsed: Duration::ZERO,
            target_per_s: self.rate(),
        }
    }

    /// Runs `op(i)` for `i` in `0..ops`, each at its intended time (never early; late ones as soon as the one
    /// before ends), and measures both latencies. The first error ends the run.
    pub fn drive(&self, ops: u64, mut op: impl FnMut(u64) -> Result<(), RigError>) -> Result<OpenLoopRun, RigError> {
        let mut run = self.empty_run();
        let start = Instant::now();
        for i in 0..ops {
            let due = self.due(start, i);
            wait_until(due);
            let began = Instant::now();
            op(i)?;
            let ended = Instant::now();
            let lateness = began - due;
            run.late += u64::from(lateness.as_nanos() >= u128::from(self.interval_ns));
            run.worst_late = run.worst_late.max(lateness);
            let _ = run.corrected.record(nanos(ended - due));
            let _ = run.uncorrected.record(nanos(ended - began));
            run.ops += 1;
        }
        run.elapsed = start.elapsed();
        Ok(run)
    }
}

/// What [`Schedule::issue`] did: when the run started and how late its operations began.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Issued {
    /// When operation 0 was due.
    pub start: Instant,
    /// Operations started.
    pub ops: u64,
    /// Operations that started at least one interval after they were due.
    pub late: u64,
    /// The most an operation started after it was due.
    pub worst_late: Duration,
}

impl OpenLoopRun {
    /// Records one operation: due at `due`, begun at `began`, ended at `ended` (durations from one epoch).
    pub fn record(&mut self, due: Duration, began: Duration, ended: Duration) {
        let _ = self.corrected.record(nanos(ended.saturating_sub(due)));
        let _ = self.uncorrected.record(nanos(ended.saturating_sub(began)));
    }

    /// Adds what `other` recorded (another thread's share of the same run's operations) to this run's
    /// histograms.
    pub fn add_latencies(&mut self, other: &OpenLoopRun) {
        // Same bounds on both sides: adding cannot fail.
        let _ = self.corrected.add(&other.corrected);
        let _ = self.uncorrected.add(&other.uncorrected);
    }

    /// Operations per second over the run.
    pub fn achieved_per_s(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// An error when the achieved rate fell below the target by more than [`SUSTAIN_MARGIN`], or than one
    /// [`SUSTAIN_STALL`] of the run's time where that is more (up to [`SUSTAIN_STALL_SHARE`]): its latencies are
    /// those of a lighter load than the one asked for. A shortfall within that is kept, in `achieved_per_s`.
    pub fn sustained(&self) -> Result<(), RigError> {
        let achieved = self.achieved_per_s();
        let stall = (SUSTAIN_STALL.as_secs_f64() / self.elapsed.as_secs_f64().max(1e-9)).min(SUSTAIN_STALL_SHARE);
        match achieved < self.target_per_s * (1.0 - SUSTAIN_MARGIN.max(stall)) {
            true => Err(RigError::new(format!(
                "could not sustain {}/s: achieved {}/s",
                thousands(self.target_per_s),
                thousands(achieved)
            ))),
            false => Ok(()),
        }
    }

    /// `observation` with this run's metrics: `p50_{what}_us`, `p90_{what}_us`, `p99_{what}_us` and
    /// `p999_{what}_us` corrected, the same with `_uncorrected` appended, `achieved_per_s`, `late_ops` and
    /// `worst_late_us`.
    pub fn metrics(&self, mut observation: Observation, what: &str) -> Observation {
        for (suffix, histogram) in [("", &self.corrected), ("_uncorrected", &self.uncorrected)] {
            for (name, q) in PERCENTILES {
                let us = histogram.value_at_quantile(q) as f64 / 1e3;
                observation = observation.metric(&format!("{name}_{what}_us{suffix}"), us);
            }
        }
        observation
            .metric("achieved_per_s", self.achieved_per_s())
            .metric("late_ops", self.late as f64)
            .metric("worst_late_us", self.worst_late.as_secs_f64() * 1e6)
    }
}

/// `descriptor` with the metrics [`OpenLoopRun::metrics`] gives for `what` (those a closed-loop run of the
/// rig also reports, `p50`, `p99` and `p999_{what}_us`, are declared by the rig itself, with its own docs).
pub fn declare(descriptor: Descriptor, what: &str) -> Descriptor {
    let mut descriptor = descriptor.metric(
        Metric::observed(&format!("p90_{what}_us"), Unit::Micros, false).doc("open loop: from the intended start"),
    );
    for (name, _) in PERCENTILES {
        let doc = "the same operations from their actual start, as a closed loop measures them (coordinated omission)";
        let metric = Metric::observed(&format!("{name}_{what}_us_uncorrected"), Unit::Micros, false).doc(doc);
        descriptor = descriptor.metric(metric);
    }
    descriptor
        .metric(Metric::observed("achieved_per_s", Unit::OpsPerSec, true).doc("operations per second over the run"))
        .metric(
            Metric::observed("late_ops", Unit::Records, false).doc("operations started one interval or more after due"),
        )
        .metric(Metric::observed("worst_late_us", Unit::Micros, false).doc("the most an operation started after due"))
}

/// Sleeps until shortly before `due`, then spins to it.
fn wait_until(due: Instant) {
    let now = Instant::now();
    if due > now + SPIN {
        std::thread::sleep(due - now - SPIN);
    }
    while Instant::now() < due {
        std::hint::spin_loop();
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1)
}

/// `61200` as `61,200`.
fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[path = "open_loop_tests.rs"]
mod tests;
