//! The command line: parsing with clap, and the dispatch to `commands`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};

use crate::commands::*;
use crate::config::{parse_duration, parse_fraction, parse_positive_duration};
use crate::stats::Sampling;
use crate::{baseline, compare, provenance, report, runner};

/// Loads benchmark rigs as native plugins, runs every cell of a matrix in its own process, and appends one
/// versioned JSON-lines record per cell to a results stream.
#[derive(Debug, Parser)]
#[command(name = "benchhost", version)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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
    /// Import other tools' results into a results stream.
    #[command(subcommand)]
    Import(Import),
    /// Report results files as md, csv, json, gab (github-action-benchmark), bmf (Bencher) or html.
    Report(ReportArgs),
    /// Print the records of one or more results files as a table.
    Show {
        /// Results files (JSON lines, schema 1).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Check results files: schema, torn or corrupt lines, duplicate records, unknown units. Exits 1 on a problem.
    Verify {
        /// Results files (JSON lines, schema 1).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Check a plugin before publishing it: load it in a child, validate every descriptor, run each rig once
    /// with its defaults under --quick settings and check its invariants. One pass/FAIL line per rig.
    Check {
        /// The plugin library (e.g. target/release/libmy_rig.so).
        path: PathBuf,
        /// Load it even if others can write its file or directory (unsafe).
        #[arg(long = "allow-writable-plugins")]
        allow_writable_plugins: bool,
        /// Kill a rig's run after this long, e.g. 30s.
        #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration, default_value = "2m")]
        deadline: Duration,
    },
    /// Combine results streams from several machines into OUT: one record per run id, rig, variant and
    /// kind; identical duplicates are dropped and counted, conflicting ones reported (the first is kept).
    Merge {
        /// The combined stream (created or appended to).
        out: PathBuf,
        /// Streams to merge, in order.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
    },
    /// Append results files to the warehouse, an Iceberg table behind a SQL catalog on sqlite
    /// (runs benchhost-warehouse publish FILE... --warehouse DIR).
    #[command(disable_help_flag = true)]
    Publish {
        /// FILE... --warehouse DIR
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// DataFusion SQL over tables `records` and `metrics`, from results files or the warehouse
    /// (runs benchhost-warehouse query "SQL" --from FILE... | --warehouse DIR).
    #[command(disable_help_flag = true)]
    Query {
        /// "SQL" --from FILE... | --warehouse DIR
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Write a standalone rig crate (one rig of each style, a test, a README) that builds and runs unchanged.
    NewRig {
        /// The rig's name: lowercase letters, digits and `_` (the second rig is NAME_run).
        name: String,
        /// Where to write the crate [default: ./NAME].
        #[arg(long)]
        path: Option<PathBuf>,
        /// Depend on plugin-api at this path (a checkout's `plugin-api/`) [default: this benchhost's own source
        /// checkout, when it was built from one and it still exists].
        #[arg(long = "api-path", value_name = "DIR", conflicts_with = "api_version")]
        api_path: Option<PathBuf>,
        /// Depend on plugin-api by this version from the registry instead (e.g. 0.1.0).
        #[arg(long = "api-version", value_name = "VERSION")]
        api_version: Option<String>,
    },
    /// Internal: the per-cell child process.
    #[command(name = "__child", hide = true)]
    Child,
}

#[derive(Debug, Args)]
pub(crate) struct PluginDirs {
    /// Look for plugins in DIR first (repeatable); then BENCHHOST_PLUGIN_PATH, then next to the executable.
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub(crate) plugin_dirs: Vec<PathBuf>,
    /// Also load plugins whose file or directory others can write. Unsafe: loading a plugin runs its code, so
    /// anyone who can write there runs code as you.
    #[arg(long)]
    pub(crate) allow_writable_plugins: bool,
}

#[derive(Debug, Args)]
pub(crate) struct MatrixArgs {
    #[command(flatten)]
    pub(crate) dirs: PluginDirs,
    /// The matrix file [default: rigs.toml, if present].
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Run only this rig (repeatable); a rig absent from the file runs with its defaults.
    #[arg(long = "plugin", value_name = "RIG")]
    pub(crate) rigs: Vec<String>,
    /// Override a parameter for every selected rig that has it (repeatable), e.g. --set rows=10000.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_set)]
    pub(crate) sets: Vec<(String, String)>,
    /// A smoke run: at most 100 ms warm-up, 300 ms of samples, 10 samples, 2 repetitions.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Kill a cell's child after this long, e.g. 30s [default: rigs.toml's, else 10m].
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub(crate) deadline: Option<Duration>,
    /// Refuse matrices with more cells than this [default: rigs.toml's max_cells, else 10000].
    #[arg(long, value_name = "N")]
    pub(crate) max_cells: Option<u64>,
    /// Iterations per sample: flat (all equal; median) or linear (n, 2n, 3n...; slope).
    #[arg(long, value_name = "flat|linear", value_parser = parse_sampling)]
    pub(crate) sampling: Option<Sampling>,
    /// Sample until the CI95 half-width of the time per iteration is within this, e.g. 1% (or the budget).
    #[arg(long, value_name = "PERCENT", value_parser = parse_fraction)]
    pub(crate) target_ci: Option<f64>,
    /// Sampling time allowed with --target-ci [default: 3 x measurement].
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub(crate) budget: Option<Duration>,
    /// Warm-up time of each cell, e.g. 500ms (overrides rigs.toml for this run).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) warmup: Option<Duration>,
    /// Sampling time of each iterations-style cell, spread over its samples, e.g. 5s (overrides rigs.toml).
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub(crate) measurement: Option<Duration>,
    /// Samples per iterations-style cell (overrides rigs.toml).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) samples: Option<u32>,
    /// Runs per run-style cell (overrides rigs.toml).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) repetitions: Option<u32>,
    /// Bootstrap resamples for each CI95 [default: 10000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(100..))]
    pub(crate) resamples: Option<u32>,
    /// Only this deterministic slice of the matrix: cell k of the whole matrix belongs to shard k mod N + 1.
    #[arg(long, value_name = "I/N")]
    pub(crate) shard: Option<crate::shard::Shard>,
    /// Only the cells whose label (`rig key=value ...`, as `plan` prints it) matches this regular expression,
    /// as `cargo bench -- FILTER`.
    #[arg(value_name = "FILTER", value_parser = parse_filter)]
    pub(crate) filter: Option<regex::Regex>,
}

fn parse_filter(text: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(text).map_err(|e| format!("not a regular expression: {e}"))
}

fn parse_sampling(text: &str) -> Result<Sampling, String> {
    match text {
        "flat" => Ok(Sampling::Flat),
        "linear" => Ok(Sampling::Linear),
        _ => Err(format!("`{text}` is not flat or linear")),
    }
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) matrix: MatrixArgs,
    /// Append records to FILE.
    #[arg(long, value_name = "FILE", default_value = "results/results.jsonl")]
    pub(crate) out: PathBuf,
    /// Also save this run's records as baseline NAME (in baselines/ next to --out), replacing it.
    #[arg(long, value_name = "NAME")]
    pub(crate) save_baseline: Option<String>,
    /// Compare this run with baseline NAME (or a results file) and append the verdicts.
    #[arg(long, value_name = "NAME")]
    pub(crate) baseline: Option<String>,
    /// Run every cell N times, round by round (A B, then B A, ...), each in its own process; records carry the
    /// mean over rounds with a CI across processes, and each arm is compared with its rig's first arm.
    #[arg(long, value_name = "N")]
    pub(crate) rounds: Option<u32>,
    /// Same as --rounds 5.
    #[arg(long)]
    pub(crate) interleave: bool,
    /// Compare with another build: DIR holds its plugins (e.g. main's target/release). Every cell also runs
    /// that build's plugin, alternating round by round (5 rounds unless --rounds), with paired verdicts.
    #[arg(long, value_name = "DIR")]
    pub(crate) against: Option<PathBuf>,
    /// The run id records carry [default: a new one per invocation]. Give every shard of one logical run the
    /// same id (e.g. the CI pipeline's) so `benchhost merge` joins their slices.
    #[arg(long, value_name = "ID")]
    pub(crate) run_id: Option<String>,
    #[command(flatten)]
    pub(crate) judging: crate::judging::Judging,
}

#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// The old side: a results file or a baseline name.
    pub(crate) old: String,
    /// The new side: a results file or a baseline name.
    pub(crate) new: String,
    /// Append the verdict records to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Where baseline names are looked up: baselines/ next to this stream.
    #[arg(long, value_name = "FILE", default_value = "results/results.jsonl")]
    pub(crate) results: PathBuf,
    #[command(flatten)]
    pub(crate) judging: crate::judging::Judging,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Import {
    /// A Criterion output directory (e.g. target/criterion): one record per benchmark.
    Criterion {
        /// The directory.
        dir: PathBuf,
        /// Append the records to FILE.
        #[arg(long, value_name = "FILE", default_value = "results/results.jsonl")]
        out: PathBuf,
    },
}

#[derive(Debug, Args)]
pub(crate) struct CalibrateArgs {
    #[command(flatten)]
    pub(crate) matrix: MatrixArgs,
    /// Interleaved rounds, each cell once per round in its own process: N rounds give N(N-1)/2 A/A pairs.
    #[arg(long, value_name = "N", default_value = "10")]
    pub(crate) rounds: u32,
    /// The threshold whose false-alarm rate is measured.
    #[arg(long, value_name = "PERCENT", value_parser = parse_fraction, default_value = "3%")]
    pub(crate) threshold: f64,
    /// Append the calibration records to FILE (where `--threshold auto` looks for them).
    #[arg(long, value_name = "FILE", default_value = "results/results.jsonl")]
    pub(crate) out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// Results files (JSON lines, schema 1).
    #[arg(required_unless_present = "warehouse")]
    pub(crate) files: Vec<PathBuf>,
    /// Also report the records of this warehouse (see `benchhost publish`).
    #[arg(long, value_name = "DIR")]
    pub(crate) warehouse: Option<PathBuf>,
    /// md, csv, json, gab, bmf or html.
    #[arg(long, value_name = "FORMAT", value_parser = ["md", "csv", "json", "gab", "bmf", "html"])]
    pub(crate) format: String,
    /// Write to FILE (gab: a directory, for its two files) instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub(crate) out: Option<PathBuf>,
    /// Noise threshold of the md report's "vs previous run" [default: 3%].
    #[arg(long, value_name = "PERCENT", value_parser = parse_fraction, default_value = "3%")]
    pub(crate) threshold: f64,
}

fn parse_set(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => Ok((key.trim().to_string(), value.trim().to_string())),
        _ => Err(format!("expected KEY=VALUE, got `{text}`")),
    }
}

/// Runs the parsed command line; the exit code is 1 when a cell failed.
pub fn run(cli: Cli) -> Result<ExitCode> {
    if matches!(cli.command, Command::Run(_) | Command::Calibrate(_) | Command::Check { .. }) {
        // These run cells: a signal must take the running cell down with benchhost, and whatever a cell
        // leaves behind must come back to benchhost to be killed, not to PID 1.
        crate::interrupt::install();
        crate::reaper::become_subreaper();
    }
    match cli.command {
        Command::List(dirs) => {
            let loader = discover(&dirs, &Default::default(), false)?;
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
        Command::Import(Import::Criterion { dir, out }) => import_criterion(&dir, &out),
        Command::Report(args) => report_files(&args),
        Command::Show { files } => show(&files),
        Command::Verify { files } => verify(&files),
        Command::Publish { args } => crate::delegate::run("publish", &args),
        Command::Query { args } => crate::delegate::run("query", &args),
        Command::Merge { out, inputs } => crate::merge::merge_files(&out, &inputs),
        Command::Check { path, allow_writable_plugins, deadline } => {
            crate::check::check(&path, allow_writable_plugins, deadline)
        }
        Command::NewRig { name, path, api_path, api_version } => {
            let dir = path.unwrap_or_else(|| PathBuf::from(&name));
            let api = crate::scaffold::Api::choose(api_path, api_version);
            if let crate::scaffold::Api::Path(path) = &api {
                println!("depending on plugin-api at {} (--api-version V to depend by version)", path.display());
            }
            for file in crate::scaffold::new_rig(&name, &dir, &api)? {
                println!("wrote {}", file.display());
            }
            println!("next: cd {} && cargo test && cargo build --release", dir.display());
            println!("then: benchhost run --plugin-dir {}/target/release --plugin {name} --quick", dir.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Child => Ok(ExitCode::from(crate::child::main() as u8)),
    }
}
