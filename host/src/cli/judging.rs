//! Turning comparisons into output a user and a CI can act on: the noise threshold (fixed, or calibrated for
//! the series on this host), the verdict table, the verdicts appended to the stream, and `--fail-on`, which
//! lets through a verdict that an acknowledgement (`benchhost accept`) covers.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use crate::analysis::calibrate;
use crate::plan::config::parse_threshold_fraction;
use crate::report;
use benchhost_record::Record;
use benchhost_record::sink::Sink;
use benchhost_record::{Decision, Kind};

/// Threshold used when `auto` finds no calibration.
pub const DEFAULT_THRESHOLD: f64 = 0.03;

/// `--threshold` and `--fail-on`.
#[derive(Debug, Args)]
pub struct Judging {
    /// Changes within ±this are noise: a percentage, or `auto` for the threshold `benchhost calibrate` found
    /// for the series on this host (3% where none was calibrated).
    #[arg(long, value_name = "PERCENT|auto", value_parser = parse_threshold, default_value = "3%")]
    pub threshold: ThresholdArg,
    /// Changes of instructions per iteration (`run --instructions`) within ±this are no change. The count is
    /// exact, so this only absorbs code-layout shifts: 1% is a change.
    #[arg(long, value_name = "PERCENT", value_parser = parse_threshold_fraction, default_value = "0.5%")]
    pub instruction_threshold: f64,
    /// Exit 1 when any verdict has this decision (repeatable): regressed, improved, no_change, inconclusive,
    /// added, removed, undefined. A `failed` verdict (the series' newest run failed) always exits 1.
    #[arg(long, value_name = "DECISION", value_parser = parse_decision)]
    pub fail_on: Vec<Decision>,
    /// Compare records that ran on different CPUs (refused without it: a change of machine is not the code's,
    /// and would be in every ratio).
    #[arg(long)]
    pub across_machines: bool,
    /// A results stream of acknowledgements (`benchhost accept --out FILE`, e.g. one committed with the code;
    /// repeatable): a verdict one covers does not fail `--fail-on`, and says who accepted it and why. Those in
    /// the stream the verdicts are appended to count as well. A FILE that does not exist holds none.
    #[arg(long, value_name = "FILE")]
    pub accepted: Vec<PathBuf>,
}

/// A fixed threshold or `auto`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThresholdArg {
    /// This fraction for every series.
    Fixed(f64),
    /// Calibrated per series and host.
    Auto,
}

fn parse_threshold(text: &str) -> Result<ThresholdArg, String> {
    match text {
        "auto" => Ok(ThresholdArg::Auto),
        _ => parse_threshold_fraction(text).map(ThresholdArg::Fixed).map_err(|why| format!("{why}, or auto")),
    }
}

fn parse_decision(text: &str) -> Result<Decision, String> {
    use Decision::*;
    let all = [Improved, Regressed, NoChange, Inconclusive, Added, Removed, Undefined, Failed];
    all.into_iter().find(|d| d.name() == text).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|d| d.name()).collect();
        format!("`{text}` is not one of {}", names.join(", "))
    })
}

impl Judging {
    /// The threshold of a series' metric: fixed, or found among `calibrations` for `host`.
    pub fn threshold<'a>(&'a self, calibrations: &[Record], host: &str) -> impl Fn(&Record, &str) -> f64 + 'a {
        let calibrated = match self.threshold {
            ThresholdArg::Auto => Some(calibrate::Thresholds::new(calibrations, host)),
            ThresholdArg::Fixed(_) => None,
        };
        move |record, metric| match (self.threshold, &calibrated) {
            _ if metric == benchhost_record::INSTRUCTIONS => self.instruction_threshold,
            (ThresholdArg::Fixed(t), _) => t,
            (ThresholdArg::Auto, calibrated) => {
                calibrated.as_ref().and_then(|c| c.get(record, metric)).unwrap_or(DEFAULT_THRESHOLD)
            }
        }
    }

    /// The threshold as one number, for reports that have one (`auto` reads as the default).
    pub fn fixed_threshold(&self) -> f64 {
        match self.threshold {
            ThresholdArg::Fixed(t) => t,
            ThresholdArg::Auto => DEFAULT_THRESHOLD,
        }
    }

    /// Prints `verdicts` (unless `-q`) as a table per what they compare against, each under a heading that
    /// names both sides and how they were measured; appends them to `out`, and applies `--fail-on`.
    pub fn judge(&self, verdicts: &[Record], out: Option<&Path>) -> Result<ExitCode> {
        let refs: Vec<&Record> = verdicts.iter().collect();
        crate::run::output::narrate(&report::grouped_verdicts_tables(&refs))?;
        self.record_and_gate(verdicts, out)
    }

    /// An error that names both CPUs when records of `old` and `new` of one series ran on different CPUs,
    /// unless `--across-machines`.
    pub fn same_machine(&self, old: &[Record], new: &[Record]) -> Result<()> {
        self.refuse_other_machines(crate::analysis::compare::other_machines(old, new))
    }

    /// As [`Judging::same_machine`], for a baseline that this machine's run (on `cpu`) is about to be judged
    /// against: refused before the run.
    pub fn baseline_on(&self, old: &[Record], cpu: &str) -> Result<()> {
        let mut changes = std::collections::BTreeMap::new();
        for record in crate::analysis::compare::latest(old).values().filter(|r| r.run.cpu != cpu) {
            *changes.entry((record.run.cpu.clone(), cpu.to_string())).or_insert(0) += 1;
        }
        self.refuse_other_machines(changes)
    }

    fn refuse_other_machines(&self, changes: std::collections::BTreeMap<(String, String), usize>) -> Result<()> {
        if self.across_machines || changes.is_empty() {
            return Ok(());
        }
        let said: Vec<String> =
            changes.iter().map(|((before, now), n)| format!("{n} series ran on {before}, now on {now}")).collect();
        anyhow::bail!(
            "not comparing records of different machines: {}; a change of machine is not the code's \
             (--across-machines to compare them anyway)",
            said.join("; ")
        )
    }

    /// Marks the verdicts that a standing acknowledgement covers, from `--accepted` and `also` (those of the
    /// stream the verdicts go to), and says in the note of each that exceeds one by how much.
    pub fn mark_accepted(&self, verdicts: &mut [Record], also: &[Record]) -> Result<()> {
        let mut all: Vec<Record> = also.to_vec();
        // A file not yet written holds none: the gate fails as it would without it.
        for path in self.accepted.iter().filter(|p| p.exists()) {
            let stream = benchhost_record::reader::read(path)
                .with_context(|| format!("reading acknowledgements from {}", path.display()))?;
            all.extend(stream.records.into_iter().map(|(_, r)| r).filter(|r| r.kind == Kind::Acknowledgement));
        }
        let standing = benchhost_record::standing_acknowledgements(&all);
        crate::analysis::acknowledgements::annotate(verdicts, &standing);
        Ok(())
    }

    /// Appends `verdicts` to `out` and applies `--fail-on` to those no acknowledgement covers: the exit code.
    pub fn record_and_gate(&self, verdicts: &[Record], out: Option<&Path>) -> Result<ExitCode> {
        if let Some(out) = out {
            Sink::append_all(out, verdicts)?;
        }
        // A series whose newest run failed has no number to pass any gate with: it always fails.
        let failed = |d: Decision| d == Decision::Failed || self.fail_on.contains(&d);
        let gated = |accepted: bool| {
            let failing = |v: &benchhost_record::Verdict| failed(v.decision) && v.accepted.is_some() == accepted;
            verdicts.iter().filter(|r| r.verdict.as_ref().is_some_and(failing)).count()
        };
        let (gated, accepted) = (gated(false), gated(true));
        if accepted > 0 {
            eprintln!("gate: {accepted} verdicts are accepted (benchhost accept): not failing on them");
        }
        if gated == 0 {
            return Ok(ExitCode::SUCCESS);
        }
        let mut names: Vec<&str> = self.fail_on.iter().map(|d| d.name()).collect();
        names.push(Decision::Failed.name());
        names.dedup();
        eprintln!("gate: {gated} verdicts are {}", names.join(" or "));
        Ok(ExitCode::from(1))
    }
}
