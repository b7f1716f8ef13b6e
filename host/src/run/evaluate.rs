//! Turns what a child did into a record: a `measurement` when the cell completed and every check held, a
//! `failure` with its cause and the salvaged samples otherwise. Pure: tests feed it hand-made runs.

use std::collections::BTreeMap;

use benchhost_plugin_api::abi::PluginInfo;
use benchhost_plugin_api::{Descriptor, ErrorKind, Source, Style, Unit, check_invariants};

use crate::plan::matrix::Cell;
use crate::plan::settings::Plan;
use crate::proc::executor::{ChildRun, End, OUT_OF_MEMORY_REPORT, STACK_OVERFLOW_REPORT};
use crate::proc::interrupt::signal_name;
use crate::proc::protocol::{Message, Phase};
use crate::stats;
use benchhost_record::{
    Cause, CellInfo, Check, Failure, Kind, MetricTable, MetricValue, PluginBuild, Record, RunInfo, Stop,
};

/// Builds the record of one cell.
pub fn evaluate(cell: &Cell, descriptor: &Descriptor, child: &ChildRun, run: &RunInfo, log: Option<String>) -> Record {
    let seen = Seen::of(&child.messages);
    let run = RunInfo { rustc: seen.plugin.map(|p| p.build.rustc.clone()), ..run.clone() };
    let mut record = Record {
        note: seen.note.map(str::to_owned),
        plugin: seen.plugin.map(|p| PluginBuild {
            name: p.name.clone(),
            version: p.version.clone(),
            api: p.api_version.clone(),
            profile: Some(p.build.profile.clone()),
            sha256: seen.sha256.map(str::to_owned),
        }),
        cell: Some(cell_info(cell, child, &seen)),
        ..Record::new(cell.rig.clone(), Kind::Measurement, run, cell.shown_params())
    };
    if let Some(profile) = seen.plugin.map(|p| &p.build.profile) {
        record.run.profile = profile.clone();
    }
    let failure = match ended_badly(child, &seen, cell.plan.memory_limit) {
        Some(mut failure) => {
            if !child.escaped.is_empty() {
                failure.message = clauses(&[&failure.message, &escape_note(&child.escaped)]);
            }
            Some(failure)
        }
        // A process that left the cell's group ran on beside the measurement, and after it until killed: the
        // rig broke the contract (stop what you start in teardown), and its numbers may be another's.
        None if !child.escaped.is_empty() => Some(failure_of(Cause::Escaped, None, escape_note(&child.escaped))),
        None => {
            record.checks = checks(descriptor, &record.variant, &seen);
            match record.checks.iter().find(|c| !c.ok) {
                Some(broken) => Some(failure_of(Cause::Invariant, None, broken.detail.clone().unwrap_or_default())),
                None => metrics(descriptor, &cell.plan, &seen, &mut record)
                    .err()
                    .map(|m| failure_of(Cause::Metrics, None, m)),
            }
        }
    };
    if let Some(mut failure) = failure {
        failure.stderr_tail = child.stderr_tail.clone();
        failure.log = log;
        failure.salvaged = salvaged(&child.messages);
        record.kind = Kind::Failure;
        record.metrics.clear();
        record.failure = Some(failure);
    }
    record.tables = tables(descriptor, &record.metrics);
    record
}

/// The rig's tables of metrics, each keeping only the metrics the record carries (none when it failed).
fn tables(descriptor: &Descriptor, carried: &BTreeMap<String, MetricValue>) -> Vec<MetricTable> {
    let of = |t: &benchhost_plugin_api::MetricTable| MetricTable {
        name: t.name.clone(),
        metrics: t.metrics.iter().filter(|m| carried.contains_key(*m)).cloned().collect(),
    };
    descriptor.tables.iter().map(of).filter(|t| !t.metrics.is_empty()).collect()
}

type Values = BTreeMap<String, f64>;
type Counters = BTreeMap<String, u64>;

/// What the messages said, gathered.
struct Seen<'a> {
    plugin: Option<&'a PluginInfo>,
    sha256: Option<&'a str>,
    phase: Option<Phase>,
    warmup: (u64, u64),
    warmup_counters: Option<&'a Counters>,
    samples: Vec<(u64, u64)>,
    observations: Vec<(&'a Values, &'a Counters)>,
    outcome: Option<&'a BTreeMap<String, u64>>,
    error: Option<(Phase, ErrorKind, &'a str)>,
    note: Option<&'a str>,
    stop: Option<Stop>,
    page_faults: Option<u64>,
    done: bool,
}

impl<'a> Seen<'a> {
    fn of(messages: &'a [Message]) -> Seen<'a> {
        let mut seen = Seen {
            plugin: None,
            sha256: None,
            phase: None,
            warmup: (0, 0),
            warmup_counters: None,
            samples: vec![],
            observations: vec![],
            outcome: None,
            error: None,
            note: None,
            stop: None,
            page_faults: None,
            done: false,
        };
        for message in messages {
            match message {
                Message::Plugin { info, sha256 } => {
                    seen.plugin = Some(info);
                    seen.sha256 = sha256.as_deref();
                }
                Message::Phase { phase } => seen.phase = Some(*phase),
                Message::Warmup { iterations, ns, counters } => {
                    seen.warmup = (*iterations, *ns);
                    seen.warmup_counters = counters.as_ref();
                }
                Message::Sample { iterations, ns } => seen.samples.push((*iterations, *ns)),
                Message::Observation { metrics, counters, note, .. } => {
                    seen.observations.push((metrics, counters));
                    if seen.note.is_none() {
                        seen.note = note.as_deref();
                    }
                }
                Message::Outcome { counters, note } => {
                    seen.outcome = Some(counters);
                    if seen.note.is_none() {
                        seen.note = note.as_deref();
                    }
                }
                Message::Error { phase, kind, message } => seen.error = Some((*phase, *kind, message)),
                Message::Done => seen.done = true,
                Message::Stopped { reason } => seen.stop = Some(*reason),
                Message::PageFaults { minor } => seen.page_faults = Some(*minor),
                // A duel's messages are split per side before they get here; a count's are read where it is taken.
                Message::Hello { .. }
                | Message::Rejected { .. }
                | Message::Pair { .. }
                | Message::IdleCpu { .. }
                | Message::Side { .. }
                | Message::Counted { .. } => {}
            }
        }
        seen
    }
}

fn ended_badly(child: &ChildRun, seen: &Seen<'_>, memory_limit: Option<u64>) -> Option<Failure> {
    let phase = seen.phase;
    if let Some((phase, kind, message)) = seen.error {
        let cause = match kind {
            ErrorKind::Panic => Cause::Panic,
            ErrorKind::Verification => Cause::Verification,
            _ => Cause::RigError,
        };
        return Some(failure_of(cause, Some(phase), message.to_string()));
    }
    let where_ = phase.map(|p| format!(" during {}", p.as_str())).unwrap_or_default();
    match &child.end {
        End::Deadline => Some(failure_of(
            Cause::Deadline,
            phase,
            format!("deadline of the cell exceeded{where_}; the child was killed"),
        )),
        End::Violation(why) => Some(failure_of(Cause::Protocol, phase, format!("protocol violation: {why}"))),
        End::SpawnFailed(why) => Some(failure_of(Cause::Spawn, None, why.clone())),
        End::Interrupted(signal) => Some(failure_of(
            Cause::Interrupted,
            phase,
            format!("benchhost was interrupted by {}{where_}", signal_name(*signal)),
        )),
        // Rust reports a failed allocation on stderr, then aborts; under a memory_limit that is the limit.
        End::Signaled(signal) if child.stderr_tail.iter().any(|l| l.contains(OUT_OF_MEMORY_REPORT)) => {
            let limit = memory_limit.map(|b| format!(": the memory_limit of {} MiB was reached", b >> 20));
            let message = format!(
                "out of memory{where_}{} (the child aborted: {})",
                limit.unwrap_or_default(),
                signal_name(*signal)
            );
            let mut f = failure_of(Cause::OutOfMemory, phase, message);
            f.signal = Some(signal_name(*signal));
            Some(f)
        }
        // Rust's guard-page handler reports a stack overflow on stderr, then aborts: name it, not just SIGABRT.
        End::Signaled(signal) if child.stderr_tail.iter().any(|l| l.contains(STACK_OVERFLOW_REPORT)) => {
            let message = format!("stack overflow{where_} (the child aborted: {})", signal_name(*signal));
            let mut f = failure_of(Cause::StackOverflow, phase, message);
            f.signal = Some(signal_name(*signal));
            Some(f)
        }
        End::Signaled(signal) => {
            let mut f = failure_of(Cause::Signal, phase, format!("killed by {}{where_}", signal_name(*signal)));
            f.signal = Some(signal_name(*signal));
            Some(f)
        }
        End::Exited(code) if *code != 0 => {
            let mut f = failure_of(Cause::Exit, phase, format!("the child exited with code {code}{where_}"));
            f.exit_code = Some(*code);
            Some(f)
        }
        // A clean exit code is not success: the child must have said `done` after an outcome.
        End::Exited(_) if !seen.done => {
            Some(failure_of(Cause::Protocol, phase, format!("the child exited{where_} without finishing the cell")))
        }
        End::Exited(_) if seen.outcome.is_none() => {
            Some(failure_of(Cause::Protocol, phase, "the child finished without a teardown outcome".into()))
        }
        End::Exited(_) => None,
    }
}

/// The clauses of one message joined by `; `, each without a separator of its own at its end and the empty ones
/// left out, so the message never ends in a dangling `; `.
fn clauses(parts: &[&str]) -> String {
    let parts = parts.iter().map(|p| p.trim_end_matches([';', ' '])).filter(|p| !p.is_empty());
    parts.collect::<Vec<_>>().join("; ")
}

fn escape_note(escaped: &[String]) -> String {
    format!(
        "{} left the cell's process group (setsid) and outlived the cell; killed: {}",
        if escaped.len() == 1 { "a process" } else { "processes" },
        escaped.join(", ")
    )
}

fn failure_of(cause: Cause, phase: Option<Phase>, message: String) -> Failure {
    Failure { cause, phase, message, signal: None, exit_code: None, stderr_tail: vec![], log: None, salvaged: vec![] }
}

/// The cell's invariants (those its `variant` meets) checked over the outcome, the warm-up run and each
/// repetition; each check keeps the sides it compared: the outcome's, else the smallest a repetition had.
fn checks(descriptor: &Descriptor, variant: &BTreeMap<String, serde_json::Value>, seen: &Seen<'_>) -> Vec<Check> {
    let outcome = seen.outcome.cloned().unwrap_or_default();
    let labels: Vec<String> = (1..=seen.observations.len()).map(|i| format!("repetition {i}")).collect();
    let mut sets = vec![("outcome", &outcome)];
    sets.extend(seen.warmup_counters.map(|c| ("the warm-up run", c)));
    sets.extend(labels.iter().map(String::as_str).zip(seen.observations.iter().map(|(_, c)| *c)));
    descriptor
        .invariants_for(variant)
        .into_iter()
        .map(|inv| {
            let values = inv.sides(&outcome).or_else(|| {
                seen.observations.iter().filter_map(|(_, c)| inv.sides(c)).min_by_key(|[l, r]| (*l).max(*r))
            });
            let (ok, detail) = match check_invariants(std::slice::from_ref(&inv), &sets) {
                Ok(()) => (true, None),
                Err(violations) => (false, Some(violations.join("; "))),
            };
            Check { invariant: inv.to_string(), ok, detail, values }
        })
        .collect()
}

fn metrics(descriptor: &Descriptor, plan: &Plan, seen: &Seen<'_>, record: &mut Record) -> Result<(), String> {
    let outcome = seen.outcome.cloned().unwrap_or_default();
    let counter = |name: &str, metric: &str| {
        outcome
            .get(name)
            .copied()
            .ok_or_else(|| format!("metric `{metric}` needs counter `{name}`, which the outcome lacks"))
    };
    let times: Vec<f64> = seen.samples.iter().map(|&(n, ns)| ns as f64 / n.max(1) as f64).collect();
    // Median (flat) or slope (linear) with a seeded bootstrap CI; computed once, shared by time and rates.
    let estimate = stats::time_per_iteration(&seen.samples, plan.sampling, plan.resamples as usize);
    let mut stats = BTreeMap::new();
    let variant = record.variant.clone();
    for metric in descriptor.metrics_for(&variant) {
        let (unit, hib) = (metric.unit.as_str().to_string(), metric.higher_is_better);
        let value = match (&metric.source, descriptor.style) {
            (Source::IterTime, Style::Iterations) => {
                let estimate = estimate.ok_or("no samples were taken")?;
                stats.insert(metric.name.clone(), crate::stats::summarize(&times).ok_or("no samples were taken")?);
                let n = Some(times.len() as u64);
                MetricValue { value: estimate.value, unit, higher_is_better: hib, ci95: estimate.ci95, n }
            }
            // A rate of what a cell may count or not (`Metric::if_counted`): not counted, not reported.
            (Source::Rate { counter: c }, Style::Iterations) if metric.if_counted && !outcome.contains_key(c) => {
                continue;
            }
            (Source::Rate { counter: c }, Style::Iterations) => {
                let estimate = estimate.ok_or("no samples were taken")?;
                let per_iteration = counter(c, &metric.name)? as f64;
                let scale = per_iteration * per_second(metric.unit);
                let rates: Vec<f64> = times.iter().map(|t| scale / t).collect();
                stats.insert(metric.name.clone(), crate::stats::summarize(&rates).ok_or("no samples were taken")?);
                // The rate's CI is the time's CI inverted, so the two metrics never disagree.
                let ci95 = estimate.ci95.map(|[lo, hi]| [scale / hi, scale / lo]);
                MetricValue {
                    value: scale / estimate.value,
                    unit,
                    higher_is_better: hib,
                    ci95,
                    n: Some(times.len() as u64),
                }
            }
            // Absent is not zero: a counter the rig did not report (a lookup's missed rows where no trace was
            // looked up) leaves its metric out of the record.
            (Source::Counter { counter: c }, _) if !outcome.contains_key(c) => continue,
            (Source::Counter { counter: c }, _) => MetricValue {
                value: counter(c, &metric.name)? as f64,
                unit,
                higher_is_better: hib,
                ci95: None,
                n: None,
            },
            (Source::Share { counter: c, of }, _) => {
                // Absent is not zero: a share of nothing (no query ran its way), or of a part the rig did not
                // report (a sort where no order was asked), is left out of the record.
                let whole = counter(of, &metric.name)?;
                if whole == 0 || !outcome.contains_key(c) {
                    continue;
                }
                let value = counter(c, &metric.name)? as f64 / whole as f64;
                MetricValue { value, unit, higher_is_better: hib, ci95: None, n: None }
            }
            (Source::Observed, Style::Run) => {
                let values: Vec<f64> =
                    seen.observations.iter().filter_map(|(m, _)| m.get(&metric.name).copied()).collect();
                // Absent is not zero: a metric no repetition measured is left out of the record.
                let Some(summary) = crate::stats::summarize(&values) else { continue };
                stats.insert(metric.name.clone(), summary);
                let n = Some(values.len() as u64);
                MetricValue {
                    value: summary.mean,
                    unit,
                    higher_is_better: hib,
                    ci95: stats::metric_mean_ci95(&values),
                    n,
                }
            }
            (source, style) => {
                return Err(format!(
                    "metric `{}` comes from {source:?}, which a {style:?} rig cannot provide",
                    metric.name
                ));
            }
        };
        record.metrics.insert(metric.name.clone(), value);
    }
    if let Some(info) = record.cell.as_mut() {
        info.stats = stats;
    }
    Ok(())
}

/// Units per second of a rate metric whose counter gives units per iteration and time is in ns.
fn per_second(unit: Unit) -> f64 {
    match unit {
        Unit::MegabytesPerSec => 1e9 / 1e6,
        _ => 1e9,
    }
}

fn cell_info(cell: &Cell, child: &ChildRun, seen: &Seen<'_>) -> CellInfo {
    let samples = seen.samples.len().max(seen.observations.len()) as u64;
    CellInfo {
        index: cell.index,
        warmup_ns: seen.warmup.1,
        warmup_iterations: seen.warmup.0,
        samples,
        iterations_per_sample: seen.samples.first().map(|&(n, _)| n),
        sampling: (!seen.samples.is_empty()).then_some(cell.plan.sampling),
        stop: seen.stop,
        target_ci: cell.plan.target_ci.filter(|_| !seen.samples.is_empty()),
        sampled_ns: (!seen.samples.is_empty()).then(|| seen.samples.iter().map(|&(_, ns)| ns).sum()),
        // A CI target samples until it is met: its plan is the target, not a time.
        planned_ns: (!seen.samples.is_empty() && cell.plan.target_ci.is_none())
            .then(|| cell.plan.sample_ns * u64::from(cell.plan.samples)),
        rounds: None,
        wall_ms: child.wall.as_millis() as u64,
        peak_rss_kib: child.peak_rss_kib,
        page_faults: seen.page_faults,
        conditions: None,
        escaped: child.escaped.clone(),
        stats: BTreeMap::new(),
        instructions: None,
        // How the cell was measured is known where its processes are combined (`finish::method`).
        method: None,
    }
}

fn salvaged(messages: &[Message]) -> Vec<serde_json::Value> {
    messages
        .iter()
        .filter(|m| matches!(m, Message::Sample { .. } | Message::Observation { .. }))
        .filter_map(|m| serde_json::to_value(m).ok())
        .collect()
}

#[cfg(test)]
#[path = "evaluate_tests.rs"]
mod tests;
