//! The verdicts of a run's own pairing, assembled from what it measured: each cell against its twin on the
//! other build (`--against DIR`), or each arm against its rig's reference arm; from the duels' paired samples,
//! from interleaved rounds, and from instruction counts. The judging itself is `analysis`'s.

use std::collections::BTreeMap;
use std::path::Path;

use crate::analysis::decision::Threshold;
use crate::analysis::{duel, instructions, rounds};
use crate::plan::matrix::Cell;
use crate::run::context::Outcome;
use crate::run::duel_plan::{Duel, Mode, duels_of};
use crate::run::schedule::RunOutcome;
use benchhost_record::{Kind, Record, RunInfo};

/// Every paired verdict of a run of `cells` that measured `outcome` (its `duels`, and `rounds` rounds of the
/// rest), against the build in `against` or between arms.
pub fn paired_verdicts(
    outcome: &RunOutcome,
    cells: &[Cell],
    duels: &[Duel],
    against: Option<&Path>,
    rounds: u32,
    threshold: Threshold<'_>,
    run_info: &RunInfo,
) -> Vec<Record> {
    let mut verdicts = round_verdicts(&outcome.in_rounds, against, rounds, threshold, run_info);
    verdicts.extend(duel_verdicts(outcome, duels, against, threshold, run_info));
    verdicts.extend(instruction_verdicts(&outcome.all.records, cells, against, threshold, run_info));
    verdicts
}

/// The verdicts of interleaved rounds: each cell against its twin on the other build, or each arm against its
/// rig's first arm. Only rounds that all measured take part.
fn round_verdicts(
    ran: &Outcome,
    against: Option<&Path>,
    rounds: u32,
    threshold: Threshold<'_>,
    run_info: &RunInfo,
) -> Vec<Record> {
    let measured = |r: &&Vec<Record>| r.iter().all(|r| r.kind == Kind::Measurement);
    if let Some(dir) = against {
        let pairs: Vec<_> = ran
            .rounds
            .chunks(2)
            .filter(|p| p.iter().all(|r| measured(&r)))
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect();
        return rounds::against(&pairs, &dir.display().to_string(), threshold, run_info);
    }
    if rounds > 1 {
        let arms: Vec<_> = ran.rounds.iter().filter(measured).cloned().collect();
        return rounds::paired(&arms, threshold, run_info);
    }
    Vec::new()
}

/// The verdicts of the duels (`--pairing alternate` or `concurrent`): each arm against its reference, or this
/// build against the other. Duels with a failed arm have none (their failures are records of their own).
fn duel_verdicts(
    outcome: &RunOutcome,
    duels: &[Duel],
    against: Option<&Path>,
    threshold: Threshold<'_>,
    run_info: &RunInfo,
) -> Vec<Record> {
    let mut verdicts = Vec::new();
    for (duel, estimates) in duels.iter().zip(&outcome.duels.estimates) {
        let [a, b] = duel.arms;
        let (reference, arm) = (&outcome.all.records[a], &outcome.all.records[b]);
        if reference.kind != Kind::Measurement || arm.kind != Kind::Measurement {
            continue;
        }
        let label = against_label(reference, against);
        let paired = duel::Paired { arm, reference, against: label, estimates, mode: duel.mode.name() };
        verdicts.extend(duel::verdicts(&paired, threshold, run_info));
    }
    verdicts
}

/// What a paired verdict is against: the other build (`--against DIR`), or the reference arm's variant.
fn against_label(reference: &Record, against: Option<&Path>) -> BTreeMap<String, serde_json::Value> {
    match against {
        Some(dir) => [("build".to_string(), serde_json::Value::from(dir.display().to_string()))].into(),
        None => reference.variant.clone(),
    }
}

/// The verdicts on instruction counts (`--instructions`) between the arms a paired run compares, whatever their
/// pairing mode: each arm against its rig's first, or this build against the other.
fn instruction_verdicts(
    records: &[Record],
    cells: &[Cell],
    against: Option<&Path>,
    threshold: Threshold<'_>,
    run_info: &RunInfo,
) -> Vec<Record> {
    let pairs = duels_of(cells, against.is_some(), &|_| Some(Mode::Alternate));
    let verdict = |[a, b]: [usize; 2]| {
        let (reference, arm) = (&records[a], &records[b]);
        instructions::verdict(arm, reference, against_label(reference, against), threshold, run_info)
    };
    pairs.iter().filter_map(|d| verdict(d.arms)).collect()
}
