//! One measured step of a bisection: `benchhost run --against` of one commit's build against another's, with
//! the user's FILTER and run options, whose verdict records are marked as bisection steps (both commits named)
//! and appended to the stream.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result};
use benchhost_record::{BaselineRef, Kind, Record};

use crate::bisect::builds::short;

/// A build to measure: its commit and the directory of its plugin libraries.
#[derive(Clone, Copy)]
pub struct Build<'a> {
    pub commit: &'a str,
    pub dir: &'a Path,
}

/// Runs the steps of one bisection.
pub struct Stepper {
    /// The run options passed to every step (FILTER included).
    pub forwarded: Vec<String>,
    /// The metric that decides.
    pub metric: String,
    /// Where each step's own stream goes before its verdicts are appended to `out`.
    pub steps_dir: PathBuf,
    /// The user's stream.
    pub out: PathBuf,
    /// Steps measured so far (the confirmation and the final verdict included).
    pub measured: u32,
}

impl Stepper {
    /// Measures `new` against `old` (with `rounds` processes when given): the verdict on the metric, or why
    /// the step has none (its rig failed: a commit to skip).
    pub fn measure(
        &mut self,
        new: Build,
        old: Build,
        rounds: Option<u32>,
        label: &str,
    ) -> Result<Result<Record, String>> {
        self.measured += 1;
        std::fs::create_dir_all(&self.steps_dir)?;
        let file = self.steps_dir.join(format!("step-{}.jsonl", self.measured));
        let _ = std::fs::remove_file(&file);
        let exe = std::env::current_exe().context("finding benchhost's own executable")?;
        let mut run = Command::new(exe);
        run.arg("run").args(run_options(&self.forwarded, rounds));
        run.arg("--plugin-dir").arg(new.dir).arg("--against").arg(old.dir).arg("--out").arg(&file);
        eprintln!("bisect: {label}: {} against {}", short(new.commit), short(old.commit));
        // Its tables go to stderr: stdout is the bisection's answer.
        let output = crate::bisect::child::run(run.stdout(Stdio::from(std::io::stderr())))?;
        let records = if file.exists() { benchhost_record::reader::records(&file)? } else { Vec::new() };
        if let Some(failure) = records.iter().find(|r| r.kind == Kind::Failure) {
            let why = failure.failure.as_ref().map_or("failed", |f| f.message.as_str());
            return Ok(Err(format!("its rig failed: {why}")));
        }
        let mut verdicts: Vec<Record> = records.into_iter().filter(|r| r.kind == Kind::Verdict).collect();
        if verdicts.is_empty() {
            return Ok(Err(format!("benchhost run gave no verdict (exit {:?})", output.status.code())));
        }
        for verdict in &mut verdicts {
            mark(verdict, new.commit, old.commit, label);
        }
        benchhost_record::sink::Sink::append_all(&self.out, &verdicts)?;
        let mut deciding =
            verdicts.into_iter().filter(|r| r.verdict.as_ref().and_then(|v| v.metric.as_deref()) == Some(&self.metric));
        match (deciding.next(), deciding.next()) {
            (Some(one), None) => Ok(Ok(one)),
            (None, _) => Ok(Err(format!("no verdict on `{}` (--metric names one the rig reports)", self.metric))),
            (Some(_), Some(_)) => anyhow::bail!("the step measured more than one cell on `{}`", self.metric),
        }
    }
}

/// The user's run options for one step, with `rounds` in place of the user's own `--rounds` when given (run
/// refuses the option twice).
fn run_options(forwarded: &[String], rounds: Option<u32>) -> Vec<String> {
    match rounds {
        Some(rounds) => {
            let mut words = without_option(forwarded, "--rounds");
            words.push(format!("--rounds={rounds}"));
            words
        }
        None => forwarded.to_vec(),
    }
}

/// `words` without option `flag` and its value (`--flag VALUE` or `--flag=VALUE`).
pub fn without_option(words: &[String], flag: &str) -> Vec<String> {
    let mut kept = Vec::new();
    let mut words = words.iter();
    while let Some(word) = words.next() {
        if word == flag {
            words.next();
        } else if !word.strip_prefix(flag).is_some_and(|rest| rest.starts_with('=')) {
            kept.push(word.clone());
        }
    }
    kept
}

/// Marks a step's verdict: run by bisect, of commit `new`, against commit `old`.
fn mark(record: &mut Record, new: &str, old: &str, label: &str) {
    record.run.trigger = Some("bisect".into());
    record.run.commit = Some(new.into());
    if let Some(verdict) = &mut record.verdict {
        verdict.baseline =
            Some(BaselineRef { run_id: record.run.id.clone(), commit: Some(old.into()), ts_ms: record.run.ts_ms });
    }
    let note = format!("bisect {label}: {} against {}", short(new), short(old));
    record.note = Some(match record.note.take() {
        Some(before) => format!("{note}; {before}"),
        None => note,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_measured_again_takes_its_rounds_in_place_of_the_users() {
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let user = words("wal --rounds 6 --quick");
        assert_eq!(run_options(&user, None), user);
        assert_eq!(run_options(&user, Some(40)), words("wal --quick --rounds=40"), "one --rounds, the step's");
    }
}
