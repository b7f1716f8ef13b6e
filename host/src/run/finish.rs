//! The end of a cell, whichever loop measured it (rounds or duels): its rounds combined, its instructions
//! counted, and its record kept the moment it is whole.

use anyhow::Result;

use crate::analysis::rounds;
use crate::plan::matrix::Cell;
use crate::run::context::RunContext;
use crate::run::count::count;
use benchhost_record::sink::Sink;
use benchhost_record::{Kind, Record};

/// Ends `cell`, measured in `rounds` (a round, or a duel's process): one round's record as it is, several
/// combined; its instructions counted under `--instructions`; then appended to `sink`, unless it is the other
/// build's measurement (those only feed the paired verdicts; its failures are reported). A signal during the
/// count stops the run, and the half-counted record is not written.
pub fn finish_cell(cell: &Cell, rounds: &[Record], ctx: &mut RunContext<'_>, sink: &mut Sink) -> Result<Record> {
    let mut record = match rounds {
        [one] => one.clone(),
        _ => rounds::combine(rounds.to_vec()),
    };
    count(cell, &mut record, ctx, &format!("cell-{:03}", cell.index));
    if let Some(signal) = crate::proc::interrupt::received() {
        return Err(ctx.interrupted(signal, format!("counting cell {} ({})", cell.index, cell.label()), sink));
    }
    if !cell.against || record.kind == Kind::Failure {
        sink.keep(&record).map_err(|e| e.context(format!("cell {} ({})", cell.index, cell.label())))?;
        ctx.written += 1;
    }
    Ok(record)
}
