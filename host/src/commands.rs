//! What each command does, once the command line is parsed (`cli` holds the parsing).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use crate::cli::{CalibrateArgs, MatrixArgs, PluginDirs, ReportArgs, RunArgs};
use crate::compare;
use crate::config::Config;
use crate::loader::{Loader, Trust};
use crate::matrix::{self, Overrides};
use crate::record::Kind;
use crate::runner::{self, ChildExecutor};
use crate::{baseline, export, provenance, reader, report};

pub(crate) fn run_matrix(args: RunArgs) -> Result<ExitCode> {
    let (loader, mut cells) = resolve(&args.matrix)?;
    let allow_writable = args.matrix.dirs.allow_writable_plugins;
    let other = args.against.as_deref().map(|dir| against_loader(dir, &cells, allow_writable)).transpose()?;
    if other.is_some() {
        cells = matrix::with_twins(cells);
    }
    let mut run_info = provenance::current();
    run_info.shard = args.matrix.shard.map(|s| s.to_string());
    let work_dir = std::env::temp_dir().join("benchhost").join(run_info.id.clone().unwrap_or_default());
    if let Some(id) = &args.run_id {
        run_info.id = Some(id.clone());
    }
    let mut sink = crate::sink::Sink::open(&args.out)?;
    let mut executor =
        ChildExecutor { exe: current_exe()?, loader: &loader, against: other.as_ref(), quick: args.matrix.quick };
    let rounds = args.rounds.unwrap_or(if args.interleave || other.is_some() { 5 } else { 1 });
    let ran = runner::run(&cells, &loader, &mut executor, &mut sink, &run_info, &work_dir, rounds)?;
    // This build's records (and the other build's failures); the other build's numbers only feed verdicts.
    let records: Vec<_> = ran
        .records
        .iter()
        .zip(&cells)
        .filter(|(r, c)| !c.against || r.kind == Kind::Failure)
        .map(|(r, _)| r.clone())
        .collect();
    let refs: Vec<_> = records.iter().collect();
    print(&format!("{}\n", report::records_table(&refs)))?;
    let failed = records.iter().filter(|r| r.kind == Kind::Failure).count();
    print(&format!("{} cells, {failed} failed; records appended to {}\n", records.len(), sink.path().display()))?;
    let mut code = if failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS };
    let calibrations = calibrations(&args.out);
    let threshold = args.judging.threshold(&calibrations, &run_info.host);
    let measured = |r: &&Vec<crate::record::Record>| r.iter().all(|r| r.kind == Kind::Measurement);
    let mut verdicts = Vec::new();
    if let Some(dir) = &args.against {
        let pairs: Vec<_> = ran
            .rounds
            .chunks(2)
            .filter(|p| p.iter().all(|r| measured(&r)))
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect();
        verdicts.extend(crate::rounds::against(&pairs, &dir.display().to_string(), &threshold, &run_info));
    } else if rounds > 1 {
        let arms: Vec<_> = ran.rounds.iter().filter(measured).cloned().collect();
        verdicts.extend(crate::rounds::paired(&arms, &threshold, &run_info));
    }
    if let Some(name) = &args.baseline {
        let old = baseline::load(name, &args.out)?;
        verdicts.extend(compare::compare(&old, &records, &threshold, &run_info));
    }
    if !verdicts.is_empty() && args.judging.judge(&verdicts, Some(&args.out))? != ExitCode::SUCCESS {
        code = ExitCode::from(1);
    }
    if let Some(name) = &args.save_baseline {
        let path = baseline::path(&args.out, name)?;
        baseline::save(&path, &records)?;
        print(&format!("baseline `{name}` saved to {}\n", path.display()))?;
    }
    Ok(code)
}

/// The plugins of the other build (`run --against DIR`), which must provide every rig of the run.
fn against_loader(dir: &Path, cells: &[matrix::Cell], allow_writable: bool) -> Result<Loader> {
    // The other build's libraries differ from this one's by design: `rigs.toml`'s pins are not theirs.
    let trust = Trust { allow_writable, ..Trust::default() };
    let loader = Loader::discover(&[dir.to_owned()], &current_exe()?, &trust);
    for rejected in &loader.rejected {
        eprintln!("note: skipped {}: {}", rejected.path.display(), rejected.reason);
    }
    if let Some(cell) = cells.iter().find(|c| loader.rig(&c.rig).is_none()) {
        bail!(
            "--against {}: no plugin there provides rig `{}` (build the other tree's plugins into it)",
            dir.display(),
            cell.rig
        );
    }
    Ok(loader)
}

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
    // Cells keep their index in the whole matrix, so a filter never moves a cell to another shard.
    if let Some(filter) = &args.filter {
        cells.retain(|cell| filter.is_match(&runner::label(cell)));
        if cells.is_empty() {
            bail!("no cell matches `{filter}` (the matrix has {in_matrix}; `benchhost plan` lists their labels)");
        }
    }
    Ok((loader, cells))
}

/// Finds the plugins (`pins`: `[sha256]` of the config in use); with `notes`, each library that did not load
/// gets a one-line note on stderr.
pub(crate) fn discover(dirs: &PluginDirs, pins: &BTreeMap<String, String>, notes: bool) -> Result<Loader> {
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

/// Calibration records in the stream `path` (none when it does not exist yet).
pub(crate) fn calibrations(path: &Path) -> Vec<crate::record::Record> {
    reader::read(path)
        .map(|s| {
            s.records.into_iter().map(|(_, r)| r).filter(|r| r.variant.contains_key(crate::calibrate::MARK)).collect()
        })
        .unwrap_or_default()
}

pub(crate) fn calibrate_matrix(args: CalibrateArgs) -> Result<ExitCode> {
    if args.rounds < 2 {
        bail!("calibration needs at least 2 rounds");
    }
    let (loader, cells) = resolve(&args.matrix)?;
    let run_info = provenance::current();
    let work_dir = std::env::temp_dir().join("benchhost").join(run_info.id.clone().unwrap_or_default());
    // The rounds' own measurements are scaffolding: they go to a scratch stream, not the results.
    let scratch = work_dir.with_extension("calibration.jsonl");
    let mut sink = crate::sink::Sink::open(&scratch)?;
    let mut executor = ChildExecutor { exe: current_exe()?, loader: &loader, against: None, quick: args.matrix.quick };
    let ran = runner::run(&cells, &loader, &mut executor, &mut sink, &run_info, &work_dir, args.rounds);
    let _ = std::fs::remove_file(&scratch);
    let records = crate::calibrate::calibrate(&ran?.rounds, args.threshold, &run_info);
    let mut out = crate::sink::Sink::open(&args.out)?;
    for record in &records {
        out.append(record)?;
    }
    out.sync()?;
    let refs: Vec<_> = records.iter().collect();
    print(&format!(
        "{}\n{} calibration records appended to {}\n",
        report::records_table(&refs),
        records.len(),
        args.out.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Every record of `files`, with each file's skipped lines reported on stderr.
fn read_all(files: &[PathBuf]) -> Result<Vec<crate::record::Record>> {
    let mut records = Vec::new();
    for file in files {
        let stream = reader::read(file)?;
        for problem in &stream.problems {
            eprintln!("warning: {problem}");
        }
        records.extend(stream.records.into_iter().map(|(_, r)| r));
    }
    Ok(records)
}

pub(crate) fn show(files: &[PathBuf]) -> Result<ExitCode> {
    let records = read_all(files)?;
    let refs: Vec<_> = records.iter().collect();
    print(&format!("{}\n", report::records_table(&refs)))?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn verify(files: &[PathBuf]) -> Result<ExitCode> {
    let mut sound = true;
    for file in files {
        let problems = crate::verify::problems(file);
        sound &= problems.is_empty();
        match problems.is_empty() {
            true => print(&format!("{}: ok\n", file.display()))?,
            false => problems.iter().try_for_each(|p| print(&format!("{p}\n")))?,
        }
    }
    Ok(if sound { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

pub(crate) fn report_files(args: &ReportArgs) -> Result<ExitCode> {
    let mut records = read_all(&args.files)?;
    if let Some(dir) = &args.warehouse {
        let scratch = std::env::temp_dir().join(format!("benchhost-warehouse-{}.jsonl", std::process::id()));
        let exported = crate::delegate::export(dir, &scratch).and_then(|()| read_all(std::slice::from_ref(&scratch)));
        let _ = std::fs::remove_file(&scratch);
        records.extend(exported?);
    }
    let write =
        |path: &Path, text: &str| std::fs::write(path, text).with_context(|| format!("writing {}", path.display()));
    let text = match args.format.as_str() {
        "md" => export::markdown(&records, args.threshold),
        "csv" => export::csv(&records),
        "json" => export::json(&records),
        "bmf" => export::bmf(&records),
        "html" => crate::html::page(&records),
        _ => {
            let Some(dir) = &args.out else { bail!("gab writes one file per direction: give --out DIR") };
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            let (smaller, bigger) = export::gab(&records);
            write(&dir.join("smaller_is_better.json"), &smaller)?;
            write(&dir.join("bigger_is_better.json"), &bigger)?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    match &args.out {
        Some(path) => write(path, &text)?,
        None => print(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn current_exe() -> Result<PathBuf> {
    std::env::current_exe().context("finding the benchhost executable (children re-execute it)")
}

/// Writes to stdout, returning broken pipes as errors for `main` to treat as a normal end.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Appends the records of a Criterion output directory to `out`.
pub(crate) fn import_criterion(dir: &Path, out: &Path) -> Result<ExitCode> {
    let records = crate::criterion_import::import(dir, &provenance::current())?;
    let mut sink = crate::sink::Sink::open(out)?;
    for record in &records {
        sink.append(record)?;
    }
    sink.sync()?;
    print(&format!("{} Criterion benchmarks imported into {}\n", records.len(), out.display()))?;
    Ok(ExitCode::SUCCESS)
}
