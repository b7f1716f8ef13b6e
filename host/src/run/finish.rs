//! The end of a cell, whichever loop measured it (rounds or duels): its rounds combined, its instructions
//! counted, and its record kept the moment it is whole.

use anyhow::Result;

use crate::analysis::rounds;
use crate::plan::matrix::Cell;
use crate::run::context::RunContext;
use crate::run::count::count;
use benchhost_plugin_api::Style;
use benchhost_record::sink::Sink;
use benchhost_record::{Kind, Record};

/// Ends `cell`, measured in `rounds` (a round, or a duel's process): one round's record as it is, several
/// combined; its instructions counted under `--instructions`; then appended to `sink`, unless it is the other
/// build's measurement (those only feed the paired verdicts; its failures are reported). A signal during the
/// count stops the run, and the half-counted record is not written.
pub fn finish_cell(
    cell: &Cell,
    rounds: &[Record],
    pairing: Option<&str>,
    ctx: &mut RunContext<'_>,
    sink: &mut Sink,
) -> Result<Record> {
    let mut record = match rounds {
        [one] => one.clone(),
        _ => rounds::combine(rounds.to_vec()),
    };
    let run_style = ctx.catalog.descriptor(&cell.rig).is_some_and(|d| d.style == Style::Run);
    if let Some(info) = record.cell.as_mut() {
        info.method = method(cell, pairing, run_style);
    }
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

/// How `cell` was measured, as its record says (`CellInfo::method`): the pairing mode of its processes (a duel's,
/// or `rounds` for several processes combined), a run-style rig's repetitions where each is a whole run (a
/// duel's are its windows or runs, counted by the duel), and `quick`; `None` for a plain iterations-style cell.
pub(crate) fn method(cell: &Cell, pairing: Option<&str>, run_style: bool) -> Option<String> {
    let mut words: Vec<String> = pairing.map(str::to_string).into_iter().collect();
    if run_style && matches!(pairing, None | Some("rounds")) {
        words.push(format!("runs={}", cell.plan.repetitions));
    }
    if cell.plan.quick {
        words.push("quick".into());
    }
    (!words.is_empty()).then(|| words.join(" "))
}
