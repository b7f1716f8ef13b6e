//! What each command does, once the command line is parsed (`cli` holds the parsing).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use crate::cli::args::{CalibrateArgs, Format, MatrixArgs, PluginDirs, ReportArgs};
use crate::cli::reading;
use crate::cli::streamed::{self, Output};
use crate::plan::config::Config;
use crate::plan::matrix;
use crate::plan::settings::Overrides;
use crate::plugin::loader::{Loader, Trust};
use crate::report::{self, export, html};
use crate::run::child_executor::ChildExecutor;
use crate::run::context::{RunContext, WorkDir};
use crate::run::in_rounds;
use crate::run::output::{narrate, print};
use crate::run::provenance;
use benchhost_record::history::Needs;
use benchhost_record::sink::Sink;

pub(crate) fn resolve(args: &MatrixArgs) -> Result<(Loader, Vec<matrix::Cell>)> {
    let config = match &args.config {
        Some(path) => Config::load(path)?,
        None if Path::new("rigs.toml").exists() => Config::load(Path::new("rigs.toml"))?,
        None => Config::empty(),
    };
    if config.rigs.is_empty() && args.rigs.is_empty() {
        bail!("nothing to run: {} has no [rig.NAME] table and no --plugin was given", config.path.display());
    }
    let loader = discover(&args.dirs, &config.pins, true)?;
    let overrides = Overrides {
        rigs: args.rigs.clone(),
        sets: args.sets.clone(),
        quick: args.quick,
        deadline: args.deadline,
        max_cells: args.max_cells,
        sampling: args.sampling,
        target_ci: args.target_ci,
        budget: args.budget,
        resamples: args.resamples,
        warmup: args.warmup,
        measurement: args.measurement,
        samples: args.samples,
        repetitions: args.repetitions,
    };
    let mut cells = matrix::expand(&config, &loader, &overrides)?;
    let in_matrix = cells.len();
    if let Some(shard) = args.shard {
        cells.retain(|cell| shard.contains(cell.index));
    }
    warn_short_samples(&cells, &loader);
    // Cells keep their index in the whole matrix, so a filter never moves a cell to another shard.
    if let Some(filter) = &args.filter {
        cells.retain(|cell| filter.is_match(&cell.label()));
        if cells.is_empty() {
            bail!("no cell matches `{filter}` (the matrix has {in_matrix}; `benchhost plan` lists their labels)");
        }
    }
    Ok((loader, cells))
}

/// Samples shorter than this are mostly clock and call overhead (ten prepared batches of two clock reads
/// and two FFI calls each: about 1 µs per sample).
const MIN_SAMPLE_NS: u64 = 1_000_000;

/// One warning per rig whose planned samples are too short to time.
fn warn_short_samples(cells: &[matrix::Cell], loader: &Loader) {
    let mut warned = std::collections::BTreeSet::new();
    for cell in cells {
        let iterations = loader.rig(&cell.rig).is_some_and(|(_, d)| d.style == benchhost_plugin_api::Style::Iterations);
        if iterations && cell.plan.sample_ns < MIN_SAMPLE_NS && warned.insert(cell.rig.clone()) {
            eprintln!(
                "warning: {}: samples of {} (measurement / samples) are too short to time well; each carries about \
                 1 µs of clock and call overhead: give each sample at least 1 ms",
                cell.rig,
                report::format::quantity(cell.plan.sample_ns as f64, "ns")
            );
        }
    }
}

/// Finds the plugins (`pins`: `[sha256]` of the config in use); with `notes`, each library that did not load
/// gets a one-line note on stderr.
pub(crate) fn discover(dirs: &PluginDirs, pins: &BTreeMap<String, String>, notes: bool) -> Result<Loader> {
    if let Some(missing) = dirs.plugin_dirs.iter().find(|d| !d.is_dir()) {
        bail!("--plugin-dir {}: no such directory", missing.display());
    }
    let exe = current_exe()?;
    let env_path = std::env::var("BENCHHOST_PLUGIN_PATH").ok();
    let search = Loader::search_path(&dirs.plugin_dirs, env_path.as_deref(), &exe);
    let trust = Trust { allow_writable: dirs.allow_writable_plugins, pins: pins.clone() };
    let loader = Loader::discover(&search, &exe, &trust);
    for rejected in loader.rejected.iter().filter(|_| notes) {
        eprintln!("note: skipped {}: {}", rejected.path.display(), rejected.reason);
    }
    Ok(loader)
}

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
    let mut executor = ChildExecutor { exe: current_exe()?, loader: &loader, against: None, quick: args.matrix.quick };
    let mut ctx = RunContext {
        catalog: &loader,
        executor: &mut executor,
        run_info: &run_info,
        work_dir,
        rounds: args.rounds,
        instructions: None,
        written: 0,
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

/// `benchhost show`: the newest record of each series with its count and trend, or with `all` every record.
pub(crate) fn show(files: &[PathBuf], all: bool) -> Result<ExitCode> {
    if all {
        let mut out = Output::to(None)?;
        streamed::show_all(files, &mut out)?;
        out.finish()?;
        return Ok(ExitCode::SUCCESS);
    }
    let history = reading::history(files, Needs { trend: 8, ..Needs::newest(1) })?;
    print(&format!("{}\n", report::latest::latest_table(&history)))?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn verify(files: &[PathBuf]) -> Result<ExitCode> {
    let mut sound = true;
    for file in files {
        let problems = benchhost_record::verify::problems(file);
        sound &= problems.is_empty();
        match problems.is_empty() {
            true => print(&format!("{}: ok\n", file.display()))?,
            false => problems.iter().try_for_each(|p| print(&format!("{p}\n")))?,
        }
    }
    Ok(if sound { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

pub(crate) fn report_files(args: &ReportArgs) -> Result<ExitCode> {
    let mut files = args.files.clone();
    // A fresh file of a random name (deleted when dropped): no predictable path in a shared /tmp.
    let mut scratch = None;
    if let Some(warehouse) = &args.warehouse {
        let file = tempfile::Builder::new().prefix("benchhost-warehouse-").suffix(".jsonl").tempfile()?;
        // A report of the newest runs needs the newest records of each series only.
        let newest = match args.format {
            Format::Md => Some(2),
            Format::Bmf | Format::Gab => Some(1),
            Format::Csv | Format::Json | Format::Html => None,
        };
        crate::cli::delegate::export(warehouse, args.storage.as_deref(), file.path(), newest)?;
        files.push(file.path().to_owned());
        scratch = Some(file);
    }
    let text = match args.format {
        Format::Csv | Format::Json => {
            let mut out = Output::to(args.out.as_deref())?;
            match args.format {
                Format::Csv => streamed::csv(&files, &mut out)?,
                _ => streamed::json(&files, &mut out)?,
            }
            out.finish()?;
            return Ok(ExitCode::SUCCESS);
        }
        // What these formats say is the newest run of each series, against the one before for md.
        Format::Md => export::markdown(&reading::newest(&files, 2)?, args.threshold),
        Format::Html => html::page(&reading::history(&files, html::NEEDS)?),
        Format::Bmf | Format::Gab => {
            let records = reading::newest(&files, 1)?;
            warn_failed(&records, args.format);
            match args.format {
                Format::Bmf => export::bmf(&records),
                _ => return write_gab(&records, args.out.as_deref()),
            }
        }
    };
    match &args.out {
        Some(path) => std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?,
        None => print(&text)?,
    }
    drop(scratch);
    Ok(ExitCode::SUCCESS)
}

/// The series a format that holds numbers only leaves out, on stderr.
fn warn_failed(records: &[benchhost_record::Record], format: Format) {
    let failed = export::failed_series(records);
    if !failed.is_empty() {
        eprintln!(
            "warning: {} series failed in their newest run and are left out ({} has no place for a failure): {}",
            failed.len(),
            if format == Format::Bmf { "bmf" } else { "gab" },
            failed.join(", ")
        );
    }
}

/// gab: one file per direction, in the directory `out`.
fn write_gab(records: &[benchhost_record::Record], out: Option<&Path>) -> Result<ExitCode> {
    let Some(dir) = out else { bail!("gab writes one file per direction: give --out DIR") };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let (smaller, bigger) = export::gab(records);
    for (name, text) in [("smaller_is_better.json", smaller), ("bigger_is_better.json", bigger)] {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn current_exe() -> Result<PathBuf> {
    std::env::current_exe().context("finding the benchhost executable (children re-execute it)")
}

/// Appends the records of a Criterion output directory to `out`.
pub(crate) fn import_criterion(dir: &Path, out: &Path) -> Result<ExitCode> {
    let records = crate::import::criterion::import(dir, &provenance::current())?;
    Sink::append_all(out, &records)?;
    narrate(&format!("{} Criterion benchmarks imported into {}\n", records.len(), out.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// `benchhost merge`: appends to `out` the records of `inputs` it does not hold yet; exit code 1 on conflicts
/// or unreadable lines.
pub(crate) fn merge(out: &Path, inputs: &[PathBuf]) -> Result<ExitCode> {
    let merged = benchhost_record::merge::merge_files(out, inputs)?;
    for line in merged.unreadable.iter().chain(&merged.conflicts) {
        eprintln!("{line}");
    }
    print(&format!(
        "{} records in {} ({} added), {} identical duplicates dropped, {} conflicts, {} unreadable lines\n",
        merged.kept,
        out.display(),
        merged.added,
        merged.duplicates,
        merged.conflicts.len(),
        merged.unreadable.len()
    ))?;
    let sound = merged.conflicts.is_empty() && merged.unreadable.is_empty();
    Ok(if sound { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
