//! `benchhost calibrate`: the matrix in rounds, into a scratch stream, and from their spread one calibration
//! record per series and metric (the noise threshold `--threshold auto` uses) appended to the results.

use std::process::ExitCode;

use anyhow::{Result, bail};

use crate::cli::args::CalibrateArgs;
use crate::cli::matrix_setup::{current_exe, resolve};
use crate::report;
use crate::run::child_executor::ChildExecutor;
use crate::run::context::{RunContext, WorkDir};
use crate::run::in_rounds;
use crate::run::output::narrate;
use crate::run::provenance;
use benchhost_record::sink::Sink;

/// Calibrates the matrix of `args`.
pub(crate) fn calibrate_matrix(args: CalibrateArgs) -> Result<ExitCode> {
    if args.rounds < 2 {
        bail!("calibration needs at least 2 rounds");
    }
    let (loader, cells) = resolve(&args.matrix)?;
    let run_info = provenance::current();
    let work_dir = WorkDir::new("calibrate")?;
    // The rounds' own measurements are scaffolding: they go to a scratch stream, not the results.
    let scratch = work_dir.path().join("rounds.jsonl");
    let mut sink = benchhost_record::sink::Sink::open(&scratch)?;
    let seeds = Some(work_dir.path().join("seeds"));
    let mut executor =
        ChildExecutor { exe: current_exe()?, loader: &loader, against: None, quick: args.matrix.quick, seeds };
    let mut ctx = RunContext {
        catalog: &loader,
        executor: &mut executor,
        run_info: &run_info,
        work_dir,
        rounds: args.rounds,
        instructions: None,
        written: 0,
        layouts: None,
    };
    let ran = in_rounds::run(&cells, &mut ctx, &mut sink);
    let _ = std::fs::remove_file(&scratch);
    let records = crate::analysis::calibrate::calibrate(&ran?.rounds, args.threshold, &run_info);
    Sink::append_all(&args.out, &records)?;
    let refs: Vec<_> = records.iter().collect();
    narrate(&format!(
        "{}\n{} calibration records appended to {}\n",
        report::records_table(&refs),
        records.len(),
        args.out.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}
