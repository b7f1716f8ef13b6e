//! The plain schedule: every cell in a child process of its own, once per round (the order reversed every
//! other round), each cell's record written the moment its last round ends, so a later crash or a Ctrl-C
//! loses nothing already measured.

use anyhow::Result;
use indicatif::ProgressBar;

use crate::plan::matrix::Cell;
use crate::proc::executor::failed_spawn;
use crate::run::conditions::CpuTimes;
use crate::run::context::{Outcome, RunContext, cell_note, kept_log, progress_bar, round_order, show_phase};
use crate::run::finish::finish_cell;
use benchhost_record::sink::Sink;
use benchhost_record::{Kind, Record};

/// Runs `cells` for `ctx.rounds` rounds (every cell once per round, the order reversed every other round: A B,
/// B A, A B ...), appending each cell's record to `sink` when its last round ends. A cell that failed is not run
/// again. The returned records are in cell order.
pub fn run(cells: &[Cell], ctx: &mut RunContext<'_>, sink: &mut Sink) -> Result<Outcome> {
    let rounds = ctx.rounds.max(1) as usize;
    let progress = progress_bar(cells.len() * rounds);
    let mut per_cell: Vec<Vec<Record>> = vec![Vec::new(); cells.len()];
    let mut records = vec![None; cells.len()];
    for round in 0..rounds {
        for i in round_order(cells.len(), round) {
            let (cell, done) = (&cells[i], &mut per_cell[i]);
            if !done.last().is_some_and(|r| r.kind == Kind::Failure) {
                let label = match rounds {
                    1 => cell.label(),
                    _ => format!("{} (round {}/{rounds})", cell.label(), round + 1),
                };
                if let Some(signal) = crate::proc::interrupt::received() {
                    progress.finish_and_clear();
                    let during = format!("the run, before cell {}/{} ({label})", i + 1, cells.len());
                    return Err(ctx.interrupted(signal, during, sink));
                }
                let record = run_cell(cell, ctx, round, &label, &progress);
                // A signal during the cell: the child is dead and its files are gone; its record would be half a
                // measurement, so none is written.
                if let Some(signal) = crate::proc::interrupt::received() {
                    progress.finish_and_clear();
                    // The cell's place in this run, from 1 (its index in the whole matrix read "cell 2" when a
                    // filter ran one cell).
                    let during = format!("cell {}/{} ({label})", i + 1, cells.len());
                    return Err(ctx.interrupted(signal, during, sink));
                }
                crate::run::output::note(&cell_note(&record, &label));
                done.push(record);
            }
            progress.inc(1);
            if round + 1 == rounds {
                let pairing = (rounds > 1).then_some("rounds");
                let record =
                    finish_cell(cell, done, pairing, ctx, sink).inspect_err(|_| progress.finish_and_clear())?;
                records[i] = Some(record);
            }
        }
    }
    progress.finish_and_clear();
    let records = records.into_iter().map(|r| r.expect("every cell ends in the last round")).collect();
    Ok(Outcome { records, rounds: per_cell })
}

/// One child for one cell (in `round`); its record.
fn run_cell(cell: &Cell, ctx: &mut RunContext<'_>, round: usize, label: &str, progress: &ProgressBar) -> Record {
    progress.set_message(label.to_string());
    let name = match ctx.rounds {
        0 | 1 => format!("cell-{:03}", cell.index),
        _ => format!("cell-{:03}-r{round}", cell.index),
    };
    let before = CpuTimes::now();
    let scratch = ctx.work_dir.path().join(&name);
    let log = ctx.work_dir.path().join(format!("{name}.log"));
    let child = match std::fs::create_dir(&scratch) {
        Ok(()) => ctx.executor.execute(cell, &scratch, &log, &mut show_phase(label, progress)),
        Err(e) => failed_spawn(format!("creating {}: {e}", scratch.display())),
    };
    // The cell's scratch files go with it, also after a crash; an interrupted cell's log goes too.
    let _ = std::fs::remove_dir_all(&scratch);
    ctx.record_from_child(cell, &child, before, kept_log(&log))
}
