//! The command line: parsing with clap, and one function per subcommand.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};

use crate::compare;
use crate::config::{Config, parse_duration, parse_fraction};
use crate::loader::Loader;
use crate::matrix::{self, Overrides};
use crate::record::Kind;
use crate::runner::{self, ChildExecutor};
use crate::stats::Sampling;
use crate::{baseline, export, provenance, reader, report};

/// Loads benchmark rigs as native plugins, runs every cell of a matrix in its own process, and appends one
/// versioned JSON-lines record per cell to a results stream.
#[derive(Debug, Parser)]
#[command(name = "benchhost", version)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the plugins found, their rigs and parameters, and the libraries that did not load.
    List(PluginDirs),
    /// Run the matrix of rigs.toml (or the rigs named with --plugin), one child process per cell.
    Run(RunArgs),
    /// Print the cells a run would execute, without running them.
    Plan(MatrixArgs),
    /// Compare two results files or named baselines, series by series; one verdict per series and metric.
    Compare(CompareArgs),
    /// Measure this host's noise: A/A comparisons of each cell against itself over interleaved rounds, stored
    /// as records that `--threshold auto` uses.
    Calibrate(CalibrateArgs),
    /// Report results files as md, csv, json, gab (github-action-benchmark) or bmf (Bencher).
    Report(ReportArgs),
    /// Print the records of one or more results files as a table.
    Show {
        /// Results files (JSON lines, schema 1).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Internal: the per-cell child process.
    #[command(name = "__child", hide = true)]
    Child,
}

#[derive(Debug, Args)]
struct PluginDirs {
    /// Look for plugins in DIR first (repeatable); then BENCHHOST_PLUGIN_PATH, then next to the executable.
    #[arg(long = "plugin-dir", value_name = "DIR")]
    plugin_dirs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
struct MatrixArgs {
    #[command(flatten)]
    dirs: PluginDirs,
    /// The matrix file [default: rigs.toml, if present].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Run only this rig (repeatable); a rig absent from the file runs with its defaults.
    #[arg(long = "plugin", value_name = "RIG")]
    rigs: Vec<String>,
    /// Override a parameter for every selected rig that has it (repeatable), e.g. --set rows=10000.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_set)]
    sets: Vec<(String, String)>,
    /// A smoke run: at most 100 ms warm-up, 300 ms of samples, 10 samples, 2 repetitions.
    #[arg(long)]
    quick: bool,
    /// Kill a cell's child after this long, e.g. 30s [default: rigs.toml's, else 10m].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    deadline: Option<Duration>,
    /// Refuse matrices with more cells than this [default: rigs.toml's max_cells, else 10000].
    #[arg(long, value_name = "N")]
    max_cells: Option<u64>,
    /// Iterations per sample: flat (all equal; median) or linear (n, 2n, 3n...; slope).
    #[arg(long, value_name = "flat|linear", value_parser = parse_sampling)]
    sampling: Option<Sampling>,
    /// Sample until the CI95 half-width of the time per iteration is within this, e.g. 1% (or the budget).
    #[arg(long, value_name = "PERCENT", value_parser = parse_fraction)]
    target_ci: Option<f64>,
    /// Sampling time allowed with --target-ci [default: 3 x measurement].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    budget: Option<Duration>,
    /// Bootstrap resamples for each CI95 [default: 10000].
    #[arg(long, value_name = "N")]
    resamples: Option<u32>,
}

fn parse_sampling(text: &str) -> Result<Sampling, String> {
    match text {
        "flat" => Ok(Sampling::Flat),
        "linear" => Ok(Sampling::Linear),
        _ => Err(format!("`{text}` is not flat or linear")),
    }
}

#[derive(Debug, Args)]
struct RunArgs {
    #[command(flatten)]
    matrix: MatrixArgs,
    /// Append records to FILE.
    #[arg(long, value_name = "FILE", default_value = "results/results.jsonl")]
    out: PathBuf,
    /// Also save this run's records as baseline NAME (in baselines/ next to --out), replacing it.
    #[arg(long, value_name = "NAME")]
    save_baseline: Option<String>,
    /// Compare this run with baseline NAME (or a results file) and append the verdicts.
    #[arg(long, value_name = "NAME")]
    baseline: Option<String>,
    /// Run every cell N times, round by round (A B A B ...), each in its own process; records carry the
    /// mean over rounds with a CI across processes, and each arm is compared with its rig's first arm.
    #[arg(long, value_name = "N")]
    rounds: Option<u32>,
    /// Same as --rounds 5.
    #[arg(long)]
    interleave: bool,
    #[command(flatten)]
    judging: crate::judging::Judging,
}

#[derive(Debug, Args)]
struct CompareArgs {
    /// The old side: a results file or a baseline name.
    old: String,
    /// The new side: a results file or a baseline name.
    new: String,
    /// Append the verdict records to FILE.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Where baseline names are looked up: baselines/ next to this stream.
    #[arg(long, value_name = "FILE", default_value = "results/results.jsonl")]
    results: PathBuf,
    #[command(flatten)]
    judging: crate::judging::Judging,
}

#[derive(Debug, Args)]
struct CalibrateArgs {
    #[command(flatten)]
    matrix: MatrixArgs,
    /// Interleaved rounds, each cell once per round in its own process: N rounds give N(N-1)/2 A/A pairs.
    #[arg(long, value_name = "N", default_value = "10")]
    rounds: u32,
    /// The threshold whose false-alarm rate is measured.
    #[arg(long, value_name = "PERCENT", value_parser = parse_fraction, default_value = "3%")]
    threshold: f64,
    /// Append the calibration records to FILE (where `--threshold auto` looks for them).
    #[arg(long, value_name = "FILE", default_value = "results/results.jsonl")]
    out: PathBuf,
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// Results files (JSON lines, schema 1).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// md, csv, json, gab or bmf.
    #[arg(long, value_name = "FORMAT", value_parser = ["md", "csv", "json", "gab", "bmf"])]
    format: String,
    /// Write to FILE (gab: a directory, for its two files) instead of stdout.
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
    /// Noise threshold of the md report's "vs previous run" [default: 3%].
    #[arg(long, value_name = "PERCENT", value_parser = parse_fraction, default_value = "3%")]
    threshold: f64,
}

fn parse_set(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => Ok((key.trim().to_string(), value.trim().to_string())),
        _ => Err(format!("expected KEY=VALUE, got `{text}`")),
    }
}

/// Runs the parsed command line; the exit code is 1 when a cell failed.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::List(dirs) => {
            let loader = discover(&dirs, false)?;
            print(&report::plugin_list(&loader))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Run(args) => run_matrix(args),
        Command::Plan(args) => {
            let (_, cells) = resolve(&args)?;
            for cell in &cells {
                print(&format!("{:>4}  {}\n", cell.index, runner::label(cell)))?;
            }
            print(&format!("{} cells\n", cells.len()))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare(args) => {
            let old = baseline::load(&args.old, &args.results)?;
            let new = baseline::load(&args.new, &args.results)?;
            let run = provenance::current();
            let calibrations = calibrations(&args.results);
            let verdicts = compare::compare(&old, &new, &args.judging.threshold(&calibrations, &run.host), &run);
            args.judging.judge(&verdicts, args.out.as_deref())
        }
        Command::Calibrate(args) => calibrate_matrix(args),
        Command::Report(args) => report_files(&args),
        Command::Show { files } => show(&files),
        Command::Child => Ok(ExitCode::from(crate::child::main() as u8)),
    }
}

fn run_matrix(args: RunArgs) -> Result<ExitCode> {
    let (loader, cells) = resolve(&args.matrix)?;
    let run_info = provenance::current();
    let work_dir = std::env::temp_dir().join("benchhost").join(run_info.id.clone().unwrap_or_default());
    let mut sink = crate::sink::Sink::open(&args.out)?;
    let mut executor = ChildExecutor { exe: current_exe()?, loader: &loader, quick: args.matrix.quick };
    let rounds = args.rounds.unwrap_or(if args.interleave { 5 } else { 1 });
    let ran = runner::run(&cells, &loader, &mut executor, &mut sink, &run_info, &work_dir, rounds)?;
    let records = ran.records;
    let refs: Vec<_> = records.iter().collect();
    print(&format!("{}\n", report::records_table(&refs)))?;
    let failed = records.iter().filter(|r| r.kind == Kind::Failure).count();
    print(&format!("{} cells, {failed} failed; records appended to {}\n", records.len(), sink.path().display()))?;
    let mut code = if failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS };
    if rounds > 1 {
        let measured: Vec<Vec<_>> =
            ran.rounds.into_iter().filter(|r| r.iter().all(|r| r.kind == Kind::Measurement)).collect();
        let calibrations = calibrations(&args.out);
        let verdicts =
            crate::rounds::paired(&measured, &args.judging.threshold(&calibrations, &run_info.host), &run_info);
        if !verdicts.is_empty() && args.judging.judge(&verdicts, Some(&args.out))? != ExitCode::SUCCESS {
            code = ExitCode::from(1);
        }
    }
    if let Some(name) = &args.baseline {
        let old = baseline::load(name, &args.out)?;
        let calibrations = calibrations(&args.out);
        let verdicts =
            compare::compare(&old, &records, &args.judging.threshold(&calibrations, &run_info.host), &run_info);
        if args.judging.judge(&verdicts, Some(&args.out))? != ExitCode::SUCCESS {
            code = ExitCode::from(1);
        }
    }
    if let Some(name) = &args.save_baseline {
        let path = baseline::path(&args.out, name)?;
        baseline::save(&path, &records)?;
        print(&format!("baseline `{name}` saved to {}\n", path.display()))?;
    }
    Ok(code)
}

fn resolve(args: &MatrixArgs) -> Result<(Loader, Vec<matrix::Cell>)> {
    let config = match &args.config {
        Some(path) => Config::load(path)?,
        None if Path::new("rigs.toml").exists() => Config::load(Path::new("rigs.toml"))?,
        None => Config::empty(),
    };
    if config.rigs.is_empty() && args.rigs.is_empty() {
        bail!("nothing to run: {} has no [rig.NAME] table and no --plugin was given", config.path.display());
    }
    let loader = discover(&args.dirs, true)?;
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
    };
    let cells = matrix::expand(&config, &loader, &overrides)?;
    Ok((loader, cells))
}

/// Finds the plugins; with `notes`, each library that did not load gets a one-line note on stderr.
fn discover(dirs: &PluginDirs, notes: bool) -> Result<Loader> {
    let exe = current_exe()?;
    let env_path = std::env::var("BENCHHOST_PLUGIN_PATH").ok();
    let search = Loader::search_path(&dirs.plugin_dirs, env_path.as_deref(), &exe);
    let loader = Loader::discover(&search, &exe);
    for rejected in loader.rejected.iter().filter(|_| notes) {
        eprintln!("note: skipped {}: {}", rejected.path.display(), rejected.reason);
    }
    Ok(loader)
}

/// Calibration records in the stream `path` (none when it does not exist yet).
fn calibrations(path: &Path) -> Vec<crate::record::Record> {
    reader::read(path)
        .map(|s| {
            s.records.into_iter().map(|(_, r)| r).filter(|r| r.variant.contains_key(crate::calibrate::MARK)).collect()
        })
        .unwrap_or_default()
}

fn calibrate_matrix(args: CalibrateArgs) -> Result<ExitCode> {
    if args.rounds < 2 {
        bail!("calibration needs at least 2 rounds");
    }
    let (loader, cells) = resolve(&args.matrix)?;
    let run_info = provenance::current();
    let work_dir = std::env::temp_dir().join("benchhost").join(run_info.id.clone().unwrap_or_default());
    // The rounds' own measurements are scaffolding: they go to a scratch stream, not the results.
    let scratch = work_dir.with_extension("calibration.jsonl");
    let mut sink = crate::sink::Sink::open(&scratch)?;
    let mut executor = ChildExecutor { exe: current_exe()?, loader: &loader, quick: args.matrix.quick };
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

fn show(files: &[PathBuf]) -> Result<ExitCode> {
    let records = read_all(files)?;
    let refs: Vec<_> = records.iter().collect();
    print(&format!("{}\n", report::records_table(&refs)))?;
    Ok(ExitCode::SUCCESS)
}

fn report_files(args: &ReportArgs) -> Result<ExitCode> {
    let records = read_all(&args.files)?;
    let write =
        |path: &Path, text: &str| std::fs::write(path, text).with_context(|| format!("writing {}", path.display()));
    let text = match args.format.as_str() {
        "md" => export::markdown(&records, args.threshold),
        "csv" => export::csv(&records),
        "json" => export::json(&records),
        "bmf" => export::bmf(&records),
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

fn current_exe() -> Result<PathBuf> {
    std::env::current_exe().context("finding the benchhost executable (children re-execute it)")
}

/// Writes to stdout, returning broken pipes as errors for `main` to treat as a normal end.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
