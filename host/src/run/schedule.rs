//! A whole run's schedule: the duels of its arms first (`duels.rs`), then every other cell in rounds
//! (`in_rounds.rs`), with the arms of duels given up for rounds; a run without duels is rounds alone.

use anyhow::Result;

use crate::analysis::decision::Threshold;
use crate::plan::matrix::Cell;
use crate::run::context::{Outcome, RunContext};
use crate::run::duel_plan::Duel;
use crate::run::duels::{self, DuelOutcome};
use crate::run::in_rounds;
use benchhost_record::sink::Sink;

/// What [`run_all`] returns.
pub struct RunOutcome {
    /// Every cell's record and rounds, in cell order.
    pub all: Outcome,
    /// What the duels gave.
    pub duels: DuelOutcome,
}

/// Runs `cells`: the `duels` (in `asked` processes each, else their mode's default, extended while `threshold`
/// leaves them to chance), then the cells in no duel in rounds. Each record is written as its cell ends.
pub fn run_all(
    cells: &[Cell],
    duels: &[Duel],
    asked: Option<u32>,
    threshold: Threshold<'_>,
    ctx: &mut RunContext<'_>,
    sink: &mut Sink,
) -> Result<RunOutcome> {
    if duels.is_empty() {
        let all = in_rounds::run(cells, ctx, sink)?;
        return Ok(RunOutcome { all, duels: DuelOutcome::default() });
    }
    let dueled = duels::run(cells, duels, asked, threshold, ctx, sink)?;
    // The cells in no duel, and those of duels given up for rounds.
    let rest: Vec<Cell> =
        cells.iter().zip(&dueled.records).filter(|(_, r)| r.is_none()).map(|(c, _)| c.clone()).collect();
    let in_rounds = in_rounds::run(&rest, ctx, sink)?;
    let mut from_rounds = in_rounds.records.iter().zip(&in_rounds.rounds);
    let (mut records, mut rounds) = (Vec::new(), Vec::new());
    for (i, record) in dueled.records.iter().enumerate() {
        let (record, per_round) = match record {
            Some(record) => (record.clone(), dueled.rounds[i].clone()),
            None => {
                let (record, per_round) = from_rounds.next().expect("every cell not in a duel ran in rounds");
                (record.clone(), per_round.clone())
            }
        };
        records.push(record);
        rounds.push(per_round);
    }
    Ok(RunOutcome { all: Outcome { records, rounds }, duels: dueled })
}
