//! How much to measure in a cell: built-in defaults, then `[defaults]`, then the rig's table, then `--quick`,
//! then the command line.

use std::time::Duration;

use toml::Spanned;

use crate::plan::config::{Config, ConfigError, RigEntry, Settings, nanos, parse_duration, parse_fraction};
use benchhost_record::Sampling;
use serde::{Deserialize, Serialize};

/// What the command line adds to the file.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--plugin NAME`: only these rigs, in this order.
    pub rigs: Vec<String>,
    /// `--set key=value`, in order.
    pub sets: Vec<(String, String)>,
    /// `--quick`: short warm-up and few samples.
    pub quick: bool,
    /// `--deadline`.
    pub deadline: Option<Duration>,
    /// `--max-cells`.
    pub max_cells: Option<u64>,
    /// `--sampling`.
    pub sampling: Option<Sampling>,
    /// `--target-ci`, a fraction (0.01 for 1%).
    pub target_ci: Option<f64>,
    /// `--budget`.
    pub budget: Option<Duration>,
    /// `--resamples`.
    pub resamples: Option<u32>,
    /// `--warmup`.
    pub warmup: Option<Duration>,
    /// `--measurement`.
    pub measurement: Option<Duration>,
    /// `--samples`.
    pub samples: Option<u32>,
    /// `--repetitions`.
    pub repetitions: Option<u32>,
}

/// The sampling plan and deadline of `entry`'s cells.
pub fn resolve(
    config: &Config,
    entry: Option<&RigEntry>,
    overrides: &Overrides,
) -> Result<(Plan, Duration), ConfigError> {
    let d: &Settings = &config.defaults;
    let e = entry.cloned().unwrap_or_default();
    let at = |s: &Spanned<String>, m: String| config.error_at(s.span().start, m);
    let duration = |rig: &Option<Spanned<String>>, file: &Option<Spanned<String>>, default: Duration| match rig
        .as_ref()
        .or(file.as_ref())
    {
        Some(s) => parse_duration(s.get_ref()).map_err(|m| at(s, m)),
        None => Ok(default),
    };
    let count = |rig: &Option<Spanned<u32>>, file: &Option<Spanned<u32>>, default: u32| -> Result<u32, ConfigError> {
        match rig.as_ref().or(file.as_ref()) {
            Some(s) if *s.get_ref() == 0 => Err(config.error_at(s.span().start, "must be at least 1")),
            Some(s) => Ok(*s.get_ref()),
            None => Ok(default),
        }
    };
    // Zero cannot measure: a zero deadline fails every cell, a zero measurement time gives samples of one
    // iteration that time the clock, not the code.
    let positive = |rig: &Option<Spanned<String>>, file: &Option<Spanned<String>>, default: Duration| {
        let value = duration(rig, file, default)?;
        match rig.as_ref().or(file.as_ref()) {
            Some(s) if value.is_zero() => {
                Err(at(s, format!("`{}` is zero: nothing can be measured in no time", s.get_ref())))
            }
            _ => Ok(value),
        }
    };
    let mut warmup = duration(&e.warmup, &d.warmup, Duration::from_secs(1))?;
    let mut measurement = positive(&e.measurement, &d.measurement, Duration::from_secs(3))?;
    let mut samples = count(&e.samples, &d.samples, 30)?;
    let mut repetitions = count(&e.repetitions, &d.repetitions, 5)?;
    let mut deadline = positive(&e.deadline, &d.deadline, Duration::from_secs(600))?;
    let resamples = count(&e.resamples, &d.resamples, DEFAULT_RESAMPLES)?;
    let sampling = match e.sampling.as_ref().or(d.sampling.as_ref()) {
        Some(s) => s
            .get_ref()
            .parse::<Sampling>()
            .map_err(|_| at(s, format!("`sampling = \"{}\"` is not `flat` or `linear`", s.get_ref())))?,
        None => Sampling::Flat,
    };
    let target_ci = match e.target_ci.as_ref().or(d.target_ci.as_ref()) {
        Some(s) => Some(parse_fraction(s.get_ref()).map_err(|m| at(s, m))?),
        None => None,
    };
    // A run-style rig's discarded first run, unless `--quick` skips it (a kafka_topology run is ~0.5 s of
    // prefill, consumers' start and window: a third of a quick cell) or no warm-up is asked for.
    let mut warmup_run = true;
    if overrides.quick {
        warmup_run = false;
        warmup = warmup.min(Duration::from_millis(100));
        measurement = measurement.min(Duration::from_millis(200));
        samples = samples.min(10);
        repetitions = repetitions.min(2);
    }
    // The command line has the last word (clap has already refused zeros there).
    warmup_run |= overrides.warmup.is_some();
    warmup = overrides.warmup.unwrap_or(warmup);
    measurement = overrides.measurement.unwrap_or(measurement);
    samples = overrides.samples.unwrap_or(samples);
    repetitions = overrides.repetitions.unwrap_or(repetitions);
    deadline = overrides.deadline.unwrap_or(deadline);
    let budget = positive(&e.budget, &d.budget, measurement.saturating_mul(3))?;
    let plan = Plan {
        warmup_ns: nanos(warmup),
        warmup_run: warmup_run && !warmup.is_zero(),
        samples,
        sample_ns: nanos(measurement) / u64::from(samples),
        repetitions,
        sampling: overrides.sampling.unwrap_or(sampling),
        target_ci: overrides.target_ci.or(target_ci),
        budget_ns: nanos(overrides.budget.unwrap_or(budget)),
        resamples: overrides.resamples.unwrap_or(resamples),
        memory_limit: match e.memory_limit.as_ref().or(d.memory_limit.as_ref()) {
            Some(s) => Some(crate::plan::config::parse_size(s.get_ref()).map_err(|m| at(s, m))?),
            None => None,
        },
        quick: overrides.quick,
    };
    Ok((plan, deadline))
}

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Warm-up time (iterations style).
    pub warmup_ns: u64,
    /// Run style: one discarded run before the repetitions (with a warm-up time, but not under `--quick`).
    #[serde(default = "yes")]
    pub warmup_run: bool,
    /// Samples to take (iterations style).
    pub samples: u32,
    /// Target duration of one sample (iterations style).
    pub sample_ns: u64,
    /// Runs to do (run style).
    pub repetitions: u32,
    /// Flat or linear growth of the iterations per sample.
    #[serde(default)]
    pub sampling: Sampling,
    /// With a target: stop sampling once the CI95 half-width of the time per iteration is within this fraction
    /// of the estimate (after at least [`MIN_TARGET_SAMPLES`]), or when `budget_ns` of sampling is spent.
    #[serde(default)]
    pub target_ci: Option<f64>,
    /// Sampling time allowed when `target_ci` is set.
    #[serde(default)]
    pub budget_ns: u64,
    /// Bootstrap resamples for the CI95 (analysis in the parent; seeded, so reproducible).
    #[serde(default = "default_resamples")]
    pub resamples: u32,
    /// Cap on the child's data memory in bytes (`RLIMIT_DATA`), set by the child before loading the plugin.
    #[serde(default)]
    pub memory_limit: Option<u64>,
    /// Shortened by `--quick`: its records are another series than a full plan's (`CellInfo::method`).
    #[serde(default)]
    pub quick: bool,
}

/// Fewest samples before a target precision may stop sampling.
pub const MIN_TARGET_SAMPLES: usize = 5;

/// Bootstrap resamples for each CI95 unless `--resamples` or `rigs.toml` says otherwise.
pub const DEFAULT_RESAMPLES: u32 = 10_000;

fn default_resamples() -> u32 {
    DEFAULT_RESAMPLES
}

fn yes() -> bool {
    true
}

impl Plan {
    /// A flat plan without target, for tests.
    #[cfg(test)]
    pub fn flat(warmup_ns: u64, samples: u32, sample_ns: u64, repetitions: u32) -> Plan {
        Plan {
            warmup_ns,
            warmup_run: warmup_ns > 0,
            samples,
            sample_ns,
            repetitions,
            sampling: Sampling::Flat,
            target_ci: None,
            budget_ns: 0,
            resamples: DEFAULT_RESAMPLES,
            memory_limit: None,
            quick: false,
        }
    }
}
