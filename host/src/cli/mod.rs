//! The commands: clap's types (only here), the dispatch, and what each command does with the stages below it;
//! `main` chooses the exit code. The only public item of the crate.

mod accept;
mod args;
mod bisect;
mod build;
mod build_benches;
mod calibrate;
mod check;
mod delegate;
mod examples;
mod judging;
mod listing;
mod matrix_setup;
mod read_streams;
mod results_commands;
mod run_matrix;
mod scaffold;
mod shell;
mod streamed;
mod trend;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand};

use crate::analysis::{between_runs, compare};
use crate::cli::args::*;
use crate::cli::calibrate::calibrate_matrix;
use crate::cli::matrix_setup::{discover, resolve_interleaved};
use crate::cli::results_commands::*;
use crate::plan::config::parse_positive_duration;
use crate::plan::interleave::pairs;
use crate::run::output::print;
use crate::run::provenance;
use benchhost_record::baseline;

/// Loads benchmark rigs as native plugins, runs every cell of a matrix in its own process, and appends one
/// versioned JSON-lines record per cell to a results stream.
#[derive(Debug, Parser)]
// Help is never wrapped to the terminal: clap does not without its `wrap_help`, which Divan's default features
// turn on in any build that has benchhost-divan too (`cargo test --workspace`), so the text is the same in every
// build (and docs/src/cli.md, generated from it, with it).
#[command(name = "benchhost", version = listing::version_line(), term_width = 0)]
pub(crate) struct Cli {
    /// Print less: no progress, tables or summaries (a command's own output, warnings and errors stay).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,
    /// Print more: each cell's outcome, wall time and log as it ends.
    #[arg(short, long, global = true)]
    pub(crate) verbose: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the plugins found, their rigs and parameters, and the libraries that did not load.
    #[command(after_help = crate::cli::examples::LIST)]
    List(ListArgs),
    /// Run the matrix of rigs.toml (or the rigs named with --plugin), one child process per cell.
    #[command(after_help = crate::cli::examples::RUN)]
    Run(Box<RunArgs>),
    /// Find the commit between GOOD and BAD that made one series regress: each step builds a commit's rig
    /// crates in a worktree of its own and runs them `--against` GOOD's build.
    #[command(after_help = crate::cli::examples::BISECT)]
    Bisect(bisect::BisectArgs),
    /// Print the cells a run would execute, without running them.
    #[command(after_help = crate::cli::examples::PLAN)]
    Plan(PlanArgs),
    /// Compare two results files or named baselines, series by series; one verdict per series and metric.
    #[command(after_help = crate::cli::examples::COMPARE)]
    Compare(CompareArgs),
    /// Measure this host's noise: A/A comparisons of each cell against itself over interleaved rounds, stored
    /// as records that `--threshold auto` uses.
    #[command(after_help = crate::cli::examples::CALIBRATE)]
    Calibrate(CalibrateArgs),
    /// Import other tools' results into a results stream.
    #[command(after_help = crate::cli::examples::IMPORT)]
    #[command(subcommand)]
    Import(Import),
    /// Report results files as md, csv, json, gab (github-action-benchmark), bmf (Bencher) or html.
    #[command(after_help = crate::cli::examples::REPORT)]
    Report(ReportArgs),
    /// Print the newest record of each series of one or more results files, with its number of records and
    /// the trend of its last runs (--all: every record).
    #[command(after_help = crate::cli::examples::SHOW)]
    Show {
        /// Results files (JSON lines, schema 1).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print every record, one row each.
        #[arg(long)]
        all: bool,
    },
    /// Find where each series' history changed: change points in run order, with their run, commit, size and
    /// direction (--fail-on regression: the nightly gate).
    #[command(after_help = crate::cli::examples::TREND)]
    Trend(TrendArgs),
    /// Accept an expected change, with the reason: an acknowledgement record per series and metric, which the
    /// `--fail-on` gate, `trend` and the reports honour (a larger change still fails). --list, --revoke ID.
    #[command(after_help = crate::cli::examples::ACCEPT)]
    Accept(crate::cli::accept::AcceptArgs),
    /// Check results files: schema, torn or corrupt lines, duplicate records, unknown units. Exits 1 on a problem.
    #[command(after_help = crate::cli::examples::VERIFY)]
    Verify {
        /// Results files (JSON lines, schema 1).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Build with cargo (`cargo build --release CARGO_ARGS`), keeping each plugin library's link so that it can be
    /// linked again with other code layouts: `run --against` and `bisect` spread their processes over layouts of
    /// both builds, so that a verdict is true of the change, not of one link.
    #[command(after_help = crate::cli::examples::BUILD)]
    Build {
        /// Link N layouts of each library now, for each side of a comparison (else each is linked when a
        /// comparison first needs it); fewer for a large library, whose layouts are kept within 2 GiB.
        #[arg(long, value_name = "N", default_value = "0")]
        layouts: u32,
        /// Delete the layouts kept in the build's target directory (not the links: a comparison links those
        /// it needs again), and build nothing.
        #[arg(long)]
        free_layouts: bool,
        /// Also build each bench target of the workspace as a plugin (`target/release/benches/lib<target>.so`):
        /// a Criterion suite whose `criterion` is benchhost-criterion runs as a rig per target, a cell per id.
        #[arg(long, conflicts_with = "free_layouts")]
        benches: bool,
        /// cargo build's own arguments (-p, --manifest-path, --features ...).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "CARGO_ARGS")]
        cargo_args: Vec<String>,
    },
    /// Check a plugin before publishing it: load it in a child, validate every descriptor, run each rig once
    /// with its defaults under --quick settings and check its invariants. One pass/FAIL line per rig.
    #[command(after_help = crate::cli::examples::CHECK)]
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
    #[command(after_help = crate::cli::examples::MERGE)]
    Merge {
        /// The combined stream (created or appended to).
        out: PathBuf,
        /// Streams to merge, in order.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
    },
    /// Append results files to the warehouse, an Iceberg table behind a SQL catalog on sqlite or PostgreSQL
    /// (runs benchhost-warehouse publish FILE... --warehouse DIR|URI [--storage s3://BUCKET/PREFIX]).
    #[command(after_help = crate::cli::examples::PUBLISH)]
    #[command(disable_help_flag = true)]
    Publish {
        /// FILE... --warehouse DIR|URI [--storage s3://BUCKET/PREFIX]
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Remove the warehouse's data files no snapshot references, left by publishers killed before their
    /// commit (runs benchhost-warehouse gc --warehouse DIR|URI [--older-than 1h]).
    #[command(after_help = crate::cli::examples::GC)]
    #[command(disable_help_flag = true)]
    Gc {
        /// --warehouse DIR|URI [--storage s3://BUCKET/PREFIX] [--older-than AGE]
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// DataFusion SQL over tables `records` and `metrics`, from results files or the warehouse
    /// (runs benchhost-warehouse query "SQL" --from FILE... | --warehouse DIR).
    #[command(after_help = crate::cli::examples::QUERY)]
    #[command(disable_help_flag = true)]
    Query {
        /// "SQL" --from FILE... | --warehouse DIR
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Write a standalone rig crate (one rig of each style, a test, a README) that builds and runs unchanged.
    #[command(after_help = crate::cli::examples::NEW_RIG)]
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
    /// Print shell completions for SHELL (bash, zsh, fish, elvish, powershell).
    #[command(after_help = crate::cli::examples::COMPLETIONS)]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or with --markdown the guide's command-line reference (docs/src/cli.md).
    #[command(after_help = crate::cli::examples::MAN)]
    Man {
        /// Markdown: every command's long help, as the guide's reference holds it.
        #[arg(long)]
        markdown: bool,
    },
    /// Print the JSON Schema of a schema-1 record (committed as results/schema-1.json).
    #[command(after_help = crate::cli::examples::SCHEMA)]
    Schema,
    /// Internal: the per-cell child process.
    #[command(name = "__child", hide = true)]
    Child,
}

/// The whole of `benchhost`: parses the command line and runs it. Exit codes: 0 success, 1 a failed cell or
/// a gate, 2 a usage, config or I/O error, 128 + N a signal that stopped the run; a broken pipe is a normal end
/// (`benchhost show ... | head`).
pub fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if build::is_wrapper(&args) {
        // cargo's rustc wrapper under `benchhost build`, not a command line of benchhost's.
        return build::wrap_rustc(&args);
    }
    let cli = Cli::parse_from(args);
    match run(cli) {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => match err.downcast_ref::<crate::proc::interrupt::Interrupted>() {
            // Ctrl-C or SIGTERM: say which cell was cut, and exit as a signal would (130, 143).
            Some(stop) => {
                eprintln!("{stop}");
                ExitCode::from(stop.exit_code())
            }
            None => {
                eprintln!("error: {err:#}");
                ExitCode::from(2)
            }
        },
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

/// Runs the parsed command line; the exit code is 1 when a cell failed.
fn run(cli: Cli) -> Result<ExitCode> {
    if matches!(cli.command, Command::Run(_) | Command::Calibrate(_) | Command::Check { .. } | Command::Bisect(_)) {
        // These run cells: a signal must take the running cell down with benchhost, and whatever a cell
        // leaves behind must come back to benchhost to be killed, not to PID 1.
        crate::proc::interrupt::install();
        crate::proc::reaper::become_subreaper();
    }
    crate::run::output::set_verbosity(cli.quiet, cli.verbose);
    match cli.command {
        Command::List(args) => {
            let loader = discover(&args.dirs, None, false)?;
            match args.json {
                true => print(&(listing::plugin_list_json(&loader) + "\n"))?,
                false => print(&listing::plugin_list(&loader))?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Run(args) => crate::cli::run_matrix::run_matrix(*args),
        Command::Bisect(args) => bisect::bisect(args),
        Command::Plan(args) => {
            let (_, cells, interleave) = resolve_interleaved(&args.matrix, args.interleave.as_deref())?;
            let found = interleave.map(|how| pairs(&cells, &how)).transpose().map_err(anyhow::Error::msg)?;
            if args.json {
                print(&(listing::plan_json(&cells) + "\n"))?;
                return Ok(ExitCode::SUCCESS);
            }
            for cell in &cells {
                print(&format!("{:>4}  {}\n", cell.index, cell.label()))?;
            }
            print(&format!("{}\n", crate::report::format::count(cells.len(), "cell")))?;
            if let Some(found) = found {
                print(&listing::plan_comparisons(&cells, &found.pairs))?;
                found.notes.iter().for_each(|note| eprintln!("note: {note}"));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare(args) => {
            // The old side's newest records of each series, beyond its newest: how far the series' runs differ.
            let old = baseline::load_newest(&args.old, &args.results, between_runs::KEPT_RUNS)?;
            let new = baseline::load(&args.new, &args.results)?;
            args.judging.same_machine(&old, &new)?;
            let run = provenance::current();
            let results = crate::cli::read_streams::previous(&args.results);
            let history: Vec<_> = old.iter().chain(&results.history).cloned().collect();
            let spreads = between_runs::Spreads::new(&history);
            let threshold = args.judging.threshold(&results.calibrations, &run.host);
            let mut verdicts = compare::compare(&old, &new, &threshold, &spreads, &run);
            // Acknowledgements in the stream the baselines come from, and in the one the verdicts go to.
            let out = args.out.as_deref().filter(|out| *out != args.results);
            let theirs = out.map(|out| crate::cli::read_streams::previous(out).acknowledgements).unwrap_or_default();
            let acknowledgements: Vec<_> = results.acknowledgements.into_iter().chain(theirs).collect();
            args.judging.mark_accepted(&mut verdicts, &acknowledgements)?;
            if args.json {
                print(&(serde_json::to_string_pretty(&verdicts)? + "\n"))?;
                return args.judging.record_and_gate(&verdicts, args.out.as_deref());
            }
            // The table is what `compare` produces: `-q` leaves it (as it leaves `show`'s).
            let refs: Vec<&benchhost_record::Record> = verdicts.iter().collect();
            print(&format!("{}\n", crate::report::verdicts_table(&refs)))?;
            if let Some(line) = crate::report::verdicts::unknown_spread_line(&refs) {
                print(&format!("{line}\n"))?;
            }
            args.judging.record_and_gate(&verdicts, args.out.as_deref())
        }
        Command::Calibrate(args) => calibrate_matrix(args),
        Command::Import(Import::Criterion { dir, out }) => import_criterion(&dir, &out),
        Command::Report(args) => report_files(&args),
        Command::Show { files, all } => show(&files, all),
        Command::Trend(args) => crate::cli::trend::trend(&args),
        Command::Accept(args) => crate::cli::accept::accept(&args),
        Command::Verify { files } => verify(&files),
        Command::Publish { args } => crate::cli::delegate::run("publish", &args),
        Command::Query { args } => crate::cli::delegate::run("query", &args),
        Command::Gc { args } => crate::cli::delegate::run("gc", &args),
        Command::Merge { out, inputs } => merge(&out, &inputs),
        Command::Check { path, allow_writable_plugins, deadline } => {
            crate::cli::check::check(&path, allow_writable_plugins, deadline)
        }
        Command::Build { free_layouts: true, cargo_args, .. } => build::free_layouts(&cargo_args),
        Command::Build { layouts, benches, cargo_args, .. } => build::build(layouts, benches, &cargo_args),
        Command::NewRig { name, path, api_path, api_version } => {
            let dir = path.unwrap_or_else(|| PathBuf::from(&name));
            let api = crate::cli::scaffold::Api::choose(api_path, api_version);
            if let crate::cli::scaffold::Api::Path(path) = &api {
                print(&format!(
                    "depending on plugin-api at {} (--api-version V to depend by version)\n",
                    path.display()
                ))?;
            }
            for file in crate::cli::scaffold::new_rig(&name, &dir, &api)? {
                print(&format!("wrote {}\n", file.display()))?;
            }
            print(&format!("next: cd {} && cargo test && cargo build --release\n", dir.display()))?;
            print(&format!(
                "then: benchhost run --plugin-dir {}/target/release --plugin {name} --quick\n",
                dir.display()
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions { shell } => crate::cli::shell::completions(Cli::command(), shell),
        Command::Man { markdown: false } => crate::cli::shell::man(Cli::command()),
        Command::Man { markdown: true } => {
            crate::run::output::print(&crate::cli::shell::markdown(Cli::command()))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Schema => {
            print(&benchhost_record::json_schema())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Child => Ok(ExitCode::from(crate::child::main() as u8)),
    }
}

#[cfg(test)]
#[path = "ci_recipe_tests.rs"]
mod ci_recipe_tests;

#[cfg(test)]
#[path = "docs_tests.rs"]
mod docs_tests;
#[cfg(test)]
#[path = "schema_doc_tests.rs"]
mod schema_doc_tests;
