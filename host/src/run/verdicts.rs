//! The verdicts of a run's own pairing, assembled from what it measured: each comparison of the run (a cell
//! against its twin on the other build, `--against DIR`, or an arm against its reference arm, `--interleave`)
//! from the duel that measured it, or from its interleaved rounds; and from instruction counts. The judging
//! itself is `analysis`'s.

use std::collections::BTreeMap;
use std::path::Path;

use crate::analysis::decision::Threshold;
use crate::analysis::{duel, instructions, rounds};
use crate::run::duel_plan::{Duel, Mode};
use crate::run::schedule::RunOutcome;
use benchhost_record::{Kind, Record, RunInfo};

/// What a run compared: its comparisons (`[reference, arm]` indices into its cells), the duels among them,
/// the other build's directory (`--against`), and the rounds of the cells in no duel.
pub struct Comparisons<'a> {
    pub pairs: &'a [[usize; 2]],
    pub duels: &'a [Duel],
    pub against: Option<&'a Path>,
    pub rounds: u32,
}

/// Every paired verdict of a run that measured `outcome`.
pub fn paired_verdicts(
    outcome: &RunOutcome,
    run: &Comparisons<'_>,
    threshold: Threshold<'_>,
    run_info: &RunInfo,
) -> Vec<Record> {
    let judging = Judging { run, threshold, run_info };
    let duel_of = |pair: &[usize; 2]| run.duels.iter().position(|d| d.arms == *pair);
    let fell_back = |d: usize| outcome.duels.fell_back.get(d).cloned().flatten();
    let in_rounds: Vec<[usize; 2]> = run.pairs.iter().copied().filter(|p| duel_of(p).is_none()).collect();
    let mut verdicts = judging.of_rounds(outcome, &in_rounds);
    // A duel given up for rounds is judged from its rounds, and its verdict says why.
    for (d, why) in (0..run.duels.len()).filter_map(|d| Some((d, fell_back(d)?))) {
        for mut verdict in judging.of_rounds(outcome, &[run.duels[d].arms]) {
            if let Some(method) = verdict.verdict.as_mut().and_then(|v| v.method.as_mut()) {
                method.fallback = Some(why.clone());
            }
            verdicts.push(verdict);
        }
    }
    verdicts.extend(judging.of_duels(outcome));
    verdicts.extend(judging.of_counts(&outcome.all.records));
    verdicts
}

/// What every verdict of a run is judged with.
struct Judging<'a> {
    run: &'a Comparisons<'a>,
    threshold: Threshold<'a>,
    run_info: &'a RunInfo,
}

impl Judging<'_> {
    /// The verdicts of interleaved rounds over `pairs`, when there are several rounds (always against another
    /// build). Only comparisons whose rounds all measured take part.
    fn of_rounds(&self, outcome: &RunOutcome, pairs: &[[usize; 2]]) -> Vec<Record> {
        let (run, threshold, run_info) = (self.run, self.threshold, self.run_info);
        let measured = |rounds: &[Record]| !rounds.is_empty() && rounds.iter().all(|r| r.kind == Kind::Measurement);
        let rounds = |i: usize| outcome.all.rounds[i].as_slice();
        let sides: Vec<(&[Record], &[Record])> = pairs
            .iter()
            .map(|&[reference, arm]| (rounds(arm), rounds(reference)))
            .filter(|(arm, reference)| measured(arm) && measured(reference))
            .collect();
        match run.against {
            Some(dir) => rounds::against(&sides, &dir.display().to_string(), threshold, run_info),
            None if run.rounds > 1 => rounds::paired(&sides, threshold, run_info),
            None => Vec::new(),
        }
    }

    /// The verdicts of the duels (`--pairing alternate` or `concurrent`): each arm against its reference, or this
    /// build against the other. Duels with a failed arm have none (their failures are records of their own).
    fn of_duels(&self, outcome: &RunOutcome) -> Vec<Record> {
        let (run, threshold, run_info) = (self.run, self.threshold, self.run_info);
        let mut verdicts = Vec::new();
        let duels = run.duels.iter().zip(&outcome.duels.estimates).zip(&outcome.duels.fell_back);
        for ((duel, estimates), _) in duels.filter(|(_, fell)| fell.is_none()) {
            let [a, b] = duel.arms;
            let (reference, arm) = (&outcome.all.records[a], &outcome.all.records[b]);
            if reference.kind != Kind::Measurement || arm.kind != Kind::Measurement {
                continue;
            }
            let label = against_label(reference, run.against);
            // A windowed duel whose rig ran whole runs for these parameters (a drain, an open loop) says so.
            let whole_runs = duel.mode == Mode::Windows && !estimates.iter().all(|e| e.windows);
            let mode = if whole_runs { Mode::Runs.name() } else { duel.mode.name() };
            let paired = duel::Paired { arm, reference, against: label, estimates, mode };
            verdicts.extend(duel::verdicts(&paired, threshold, run_info));
        }
        verdicts
    }

    /// The verdicts on instruction counts (`--instructions`) of every comparison of the run, whatever measured it.
    fn of_counts(&self, records: &[Record]) -> Vec<Record> {
        let (run, threshold, run_info) = (self.run, self.threshold, self.run_info);
        let verdict = |&[a, b]: &[usize; 2]| {
            let (reference, arm) = (&records[a], &records[b]);
            instructions::verdict(arm, reference, against_label(reference, run.against), threshold, run_info)
        };
        run.pairs.iter().filter_map(verdict).collect()
    }
}

/// What a paired verdict is against: the other build (`--against DIR`), or the reference arm's variant.
fn against_label(reference: &Record, against: Option<&Path>) -> BTreeMap<String, serde_json::Value> {
    match against {
        Some(dir) => [("build".to_string(), serde_json::Value::from(dir.display().to_string()))].into(),
        None => reference.variant.clone(),
    }
}
