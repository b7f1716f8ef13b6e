//! The arguments of each command, as clap parses them: what a run selects and measures (`MatrixArgs`), what
//! it writes and compares (`RunArgs`), and the arguments of compare, calibrate, import and report.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::plan::config::{parse_duration, parse_fraction, parse_positive_duration, parse_threshold_fraction};
use crate::stats::Sampling;

/// The results stream commands append to and read unless told otherwise.
pub(crate) const RESULTS: &str = "results/results.jsonl";

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
    /// A smoke run: at most 100 ms warm-up, 200 ms of samples, 10 samples, 2 repetitions without a discarded
    /// first run.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Kill a cell's child after this long, e.g. 30s [default: rigs.toml's, else 10m].
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true, value_parser = parse_positive_duration)]
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
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true, value_parser = parse_positive_duration)]
    pub(crate) budget: Option<Duration>,
    /// Warm-up time of each cell, e.g. 500ms (overrides rigs.toml for this run).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true, value_parser = parse_duration)]
    pub(crate) warmup: Option<Duration>,
    /// Sampling time of each iterations-style cell, spread over its samples, e.g. 5s (overrides rigs.toml).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true, value_parser = parse_positive_duration)]
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
    pub(crate) shard: Option<crate::plan::shard::Shard>,
    /// Only the cells whose label (`rig key=value ...`, as `plan` prints it) matches this regular expression,
    /// as `cargo bench -- FILTER`.
    #[arg(value_name = "FILTER", value_parser = parse_filter)]
    pub(crate) filter: Option<regex::Regex>,
}

fn parse_filter(text: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(text).map_err(|e| format!("not a regular expression: {e}"))
}

fn parse_sampling(text: &str) -> Result<Sampling, String> {
    text.parse()
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) matrix: MatrixArgs,
    /// Append records to FILE.
    #[arg(long, value_name = "FILE", default_value = RESULTS)]
    pub(crate) out: PathBuf,
    /// Also save this run's records as baseline NAME (in baselines/ next to --out), replacing it.
    #[arg(long, value_name = "NAME")]
    pub(crate) save_baseline: Option<String>,
    /// Compare this run with baseline NAME (or a results file) and append the verdicts.
    #[arg(long, value_name = "NAME")]
    pub(crate) baseline: Option<String>,
    /// Run every cell N times, round by round (A B, then B A, ...), each in its own process; records carry the
    /// mean over rounds with a CI across processes, and each arm is compared with its rig's first arm. With
    /// `--pairing alternate`, N processes per pair of arms [default: 20 for iterations-style rigs, 10 for
    /// run-style ones; 5 rounds otherwise]. A paired comparison needs at least 2.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) rounds: Option<u32>,
    /// Compare arms, paired (--pairing): `--interleave=AXIS` compares each arm with the arm that has AXIS's first
    /// value (or VALUE: `--interleave=mode=perthread`) and every other parameter equal, one verdict per level
    /// of the other axes; a bare `--interleave` compares each arm with its rig's first arm, and is refused when
    /// they differ in more than one parameter. `--interleave AXIS` works too when AXIS is exactly a parameter
    /// name (else the word is the FILTER). 20 processes per pair of arms for iterations-style rigs (samples
    /// alternating), 10 for run-style ones (whole runs alternating), unless --rounds.
    #[arg(
        long,
        value_name = "AXIS[=VALUE]",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "",
        conflicts_with = "against"
    )]
    pub(crate) interleave: Option<String>,
    /// How paired arms (--interleave, --against) are measured: `alternate` (the default) puts two arms in one
    /// process, over --rounds processes, with their samples alternating (iterations-style rigs), their whole
    /// runs, A B B A (run-style rigs), or 250 ms windows of their continuing workloads (run-style rigs that
    /// declare `windows`, e.g. kafka_topology's live feed); `whole-runs` is `alternate` with whole runs even
    /// for those (a run's start then counts); `concurrent` runs the two arms at once, one process each on a
    /// core of its own; `rounds` runs each arm in a process of its own per round (for a rig whose two
    /// instances cannot share a process).
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) pairing: Option<Pairing>,
    /// Compare with another build: DIR holds its plugins (e.g. main's target/release). Every cell is paired
    /// with the same cell on that build's plugin, measured as --pairing says (by default both in one process,
    /// alternating, over 20 processes for iterations-style rigs and 10 for run-style ones, unless --rounds),
    /// with one paired verdict per series and metric. Only this build's records enter the stream.
    #[arg(long, value_name = "DIR")]
    pub(crate) against: Option<PathBuf>,
    /// Code layouts of each build in a comparison with --against: `auto` (the default) runs every two of its
    /// processes on another pair of layouts, drawn at random from 16 of each build, each library relinked with
    /// another padding seed (a build's link is one draw of where its code lands, which alone moves the time by
    /// percents), so the verdict is true of the change, not of one link; N draws from N a build; 1 runs each
    /// build's library as built. A build whose link was not kept (made with `cargo build`, not `benchhost
    /// build`) has one layout, and its verdicts say so.
    #[arg(long, value_name = "N|auto", default_value = "auto", value_parser = parse_layouts)]
    pub(crate) layouts: Layouts,
    /// The run id records carry [default: a new one per invocation]. Give every shard of one logical run the
    /// same id (e.g. the CI pipeline's) so `benchhost merge` joins their slices.
    #[arg(long, value_name = "ID")]
    pub(crate) run_id: Option<String>,
    /// Also count each iterations-style cell's instructions per iteration under Valgrind (Cachegrind): a
    /// deterministic second opinion beside wall time, judged exactly (see --instruction-threshold).
    #[arg(long)]
    pub(crate) instructions: bool,
    /// Do not show each series' change against its previous record in --out (shown by default, as Criterion's
    /// `change:` line).
    #[arg(long)]
    pub(crate) no_previous: bool,
    /// Also write this run's records as a JSON array to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) export_json: Option<PathBuf>,
    /// Also write this run's records as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) export_csv: Option<PathBuf>,
    /// Also write this run's records as a Markdown report to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) export_markdown: Option<PathBuf>,
    /// Also write this run's records as a self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) export_html: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) judging: crate::cli::judging::Judging,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub(crate) dirs: PluginDirs,
    /// Print the plugins, their descriptors and the refused libraries as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    #[command(flatten)]
    pub(crate) matrix: MatrixArgs,
    /// Also list the comparisons `run --interleave[=AXIS[=VALUE]]` would make of these cells.
    #[arg(long, value_name = "AXIS[=VALUE]", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub(crate) interleave: Option<String>,
    /// Print the cells as JSON: index, rig, variant, plan and deadline.
    #[arg(long)]
    pub(crate) json: bool,
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
    /// Where baseline names are looked up (baselines/ next to this stream); its acknowledgements
    /// (`benchhost accept`) count for `--fail-on`.
    #[arg(long, value_name = "FILE", default_value = RESULTS)]
    pub(crate) results: PathBuf,
    /// Print the verdict records as a JSON array instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) judging: crate::cli::judging::Judging,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Import {
    /// A Criterion output directory (e.g. target/criterion): one record per benchmark.
    Criterion {
        /// The directory.
        dir: PathBuf,
        /// Append the records to FILE.
        #[arg(long, value_name = "FILE", default_value = RESULTS)]
        out: PathBuf,
    },
}

#[derive(Debug, Args)]
pub(crate) struct CalibrateArgs {
    #[command(flatten)]
    pub(crate) matrix: MatrixArgs,
    /// Interleaved rounds, each cell once per round in its own process: N rounds give N(N-1)/2 A/A pairs.
    #[arg(long, value_name = "N", default_value = "10", value_parser = clap::value_parser!(u32).range(2..))]
    pub(crate) rounds: u32,
    /// The threshold whose false-alarm rate is measured.
    #[arg(long, value_name = "PERCENT", value_parser = parse_threshold_fraction, default_value = "3%")]
    pub(crate) threshold: f64,
    /// Append the calibration records to FILE (where `--threshold auto` looks for them).
    #[arg(long, value_name = "FILE", default_value = RESULTS)]
    pub(crate) out: PathBuf,
}

/// Records read from a warehouse besides the files (`report`, `trend`).
#[derive(Debug, Args)]
pub(crate) struct WarehouseSource {
    /// Also read the records of this warehouse (see `benchhost publish`): a directory, or a PostgreSQL
    /// catalog URI with --storage.
    #[arg(long, value_name = "DIR|URI")]
    pub(crate) warehouse: Option<String>,
    /// The data location of a PostgreSQL catalog: s3://BUCKET/PREFIX.
    #[arg(long, value_name = "s3://BUCKET/PREFIX", requires = "warehouse")]
    pub(crate) storage: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// Results files (JSON lines, schema 1).
    #[arg(required_unless_present = "warehouse")]
    pub(crate) files: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) source: WarehouseSource,
    /// md, csv, json, gab, bmf or html.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) format: Format,
    /// Write to FILE (gab: a directory, for its two files) instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub(crate) out: Option<PathBuf>,
    /// Noise threshold of the md report's "vs previous run".
    #[arg(long, value_name = "PERCENT", value_parser = parse_threshold_fraction, default_value = "3%")]
    pub(crate) threshold: f64,
    /// md and html: leave out each series' change points (found as `benchhost trend` finds them, listed in md,
    /// marked on the history charts in html). Finding them keeps every value of the history: on 1M records
    /// the md report took 6.5 s and 457 MB with them, 3.7 s and 73 MB without (results/history-scale.json).
    #[arg(long)]
    pub(crate) no_change_points: bool,
}

#[derive(Debug, Args)]
pub(crate) struct TrendArgs {
    /// Results files (JSON lines, schema 1), then optionally a FILTER: a regex on `bench k=v ...` (the last
    /// word, when it is not a file).
    #[arg(value_name = "FILE... [FILTER]", required_unless_present = "warehouse")]
    pub(crate) inputs: Vec<String>,
    #[command(flatten)]
    pub(crate) source: WarehouseSource,
    /// Only this metric.
    #[arg(long, value_name = "M")]
    pub(crate) metric: Option<String>,
    /// Print `{"change_points": [...], "series": [...]}` instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    /// Exit 1 when a series' newest change point is a regression starting within the last --within runs.
    #[arg(long, value_name = "regression", value_parser = ["regression"])]
    pub(crate) fail_on: Option<String>,
    /// Runs counted as recent by --fail-on: the step's first night among the last K. The scan sees a step once
    /// 5 nights follow it, so K is at least 5 (5: the first night that shows it; 8: the first four).
    #[arg(long, value_name = "K", default_value = "5", value_parser = parse_within)]
    pub(crate) within: usize,
}

/// `--within K`, refused under the nights a step needs after it to be seen: a gate that could never fail.
fn parse_within(text: &str) -> Result<usize, String> {
    let least = crate::analysis::change_points::MIN_SIDE;
    let k: usize = text.parse().map_err(|_| format!("`{text}` is not a number of runs"))?;
    match k >= least {
        true => Ok(k),
        false => Err(format!(
            "the scan sees a step once {least} nights follow it, so a regression is never within the last {k} runs \
             and the gate would never fail; give {least} or more"
        )),
    }
}

/// The formats of `benchhost report` (plain comments on the variants: doc comments would turn `--help`'s
/// one-line list of possible values into a long one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    // Markdown, `Benchmark | Estimate | vs previous run` per rig.
    Md,
    // CSV, one row per record and metric.
    Csv,
    // Every record, as one JSON array.
    Json,
    // github-action-benchmark's custom JSON, one file per direction.
    Gab,
    // Bencher Metric Format.
    Bmf,
    // One self-contained HTML page.
    Html,
}

/// How the arms of a paired comparison are measured (plain comments, as [`Format`]'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Pairing {
    // Both arms in one process, samples (or whole runs, or windows) alternating.
    Alternate,
    // As `Alternate`, with whole runs for a run-style rig that could alternate windows.
    WholeRuns,
    // Both arms at once, one process each, on two cores.
    Concurrent,
    // Each arm in a process of its own per round.
    Rounds,
}

fn parse_set(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => Ok((key.trim().to_string(), value.trim().to_string())),
        _ => Err(format!("expected KEY=VALUE, got `{text}`")),
    }
}

/// `--layouts`: how many pairs of code layouts a comparison with another build runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layouts {
    /// Pools of [`layouts::POOL`] layouts a side.
    Auto,
    /// Pools of this many layouts a side (1: each library as built).
    Pairs(u32),
}

impl Layouts {
    /// The layouts a side of each comparison draws from, for `RunContext::layouts`: none without another build.
    pub(crate) fn pairs(self, against: bool) -> Option<usize> {
        match self {
            _ if !against => None,
            Layouts::Pairs(1) => None,
            Layouts::Pairs(n) => Some(n as usize),
            Layouts::Auto => Some(crate::analysis::layouts::POOL),
        }
    }
}

fn parse_layouts(text: &str) -> Result<Layouts, String> {
    match text {
        "auto" => Ok(Layouts::Auto),
        _ => match text.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(Layouts::Pairs(n)),
            _ => Err(format!("`{text}`: a number of layout pairs (1: each library as built) or `auto`")),
        },
    }
}
