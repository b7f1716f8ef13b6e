//! The matrix a command runs, from `rigs.toml` (or `--config`) and the command line: its plugins found, its
//! cells expanded, sharded and filtered; and the benchhost executable every child re-executes.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::cli::args::{MatrixArgs, PluginDirs};
use crate::plan::config::Config;
use crate::plan::interleave::Interleave;
use crate::plan::matrix;
use crate::plan::settings::Overrides;
use crate::plugin::loader::{Loader, Trust};
use crate::report;

/// The plugins and the cells of the matrix `args` names: `--config`, else `./rigs.toml`, else the rigs of
/// `--plugin` on their defaults; sharded and filtered, each cell keeping its index in the whole matrix.
pub(crate) fn resolve(args: &MatrixArgs) -> Result<(Loader, Vec<matrix::Cell>)> {
    let (loader, cells, whole) = resolve_unfiltered(args)?;
    Ok((loader, keep_matching(cells, args.filter.as_ref(), &whole)?))
}

/// The matrix of `args` and what `--interleave` asks of it (`interleave`: the flag's text, empty when bare).
/// Written with a space, `--interleave AXIS` reaches here as a bare flag and the FILTER `AXIS`: a FILTER that is
/// exactly the name of a parameter of the cells is taken as the axis (as a filter it would match every cell).
pub(crate) fn resolve_interleaved(
    args: &MatrixArgs,
    interleave: Option<&str>,
) -> Result<(Loader, Vec<matrix::Cell>, Option<Interleave>)> {
    let word = args.filter.as_ref().map(|f| f.as_str()).filter(|f| f.chars().all(|c| c.is_alphanumeric() || c == '_'));
    let (loader, cells, whole) = resolve_unfiltered(args)?;
    if let (Some(""), Some(word)) = (interleave, word)
        && cells.iter().any(|c| c.params.contains_key(word))
    {
        let axis = Interleave::Axis { axis: word.to_string(), reference: None };
        return Ok((loader, cells, Some(axis)));
    }
    let cells = keep_matching(cells, args.filter.as_ref(), &whole)?;
    Ok((loader, cells, interleave.map(Interleave::parse)))
}

/// What a filter is checked against: how many cells the whole matrix has, and the rigs left out of it.
struct Whole {
    cells: usize,
    unbuilt: Vec<matrix::Unbuilt>,
}

/// The plugins and the cells of `args`'s matrix, sharded; rigs of the file that are not built are left out with
/// one note naming the command that builds them.
fn resolve_unfiltered(args: &MatrixArgs) -> Result<(Loader, Vec<matrix::Cell>, Whole)> {
    let config = match &args.config {
        Some(path) => Config::load(path)?,
        None if Path::new("rigs.toml").exists() => Config::load(Path::new("rigs.toml"))?,
        None => Config::empty(),
    };
    if config.rigs.is_empty() && args.rigs.is_empty() {
        match config.text.is_empty() && args.config.is_none() && !Path::new("rigs.toml").exists() {
            true => bail!(
                "nothing to run: no rigs.toml in {} and no --plugin was given (--plugin RIG runs a rig on its \
                 defaults; --config FILE names a matrix)",
                std::env::current_dir().map_or_else(|_| ".".into(), |d| d.display().to_string())
            ),
            false => {
                bail!("nothing to run: {} has no [rig.NAME] table and no --plugin was given", config.path.display())
            }
        }
    }
    let loader = discover(&args.dirs, Some(&config), true)?;
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
    let matrix::Matrix { mut cells, unbuilt } = matrix::expand(&config, &loader, &overrides)?;
    if !unbuilt.is_empty() {
        eprintln!(
            "note: left out {} of {}, not built{}",
            rig_list(&unbuilt),
            config.path.display(),
            matrix::build_advice(&unbuilt)
        );
    }
    let whole = Whole { cells: cells.len(), unbuilt };
    if let Some(shard) = args.shard {
        cells.retain(|cell| shard.contains(cell.index));
    }
    check_sample_length(&cells, &loader)?;
    Ok((loader, cells, whole))
}

/// `rig `a`` or `rigs `a`, `b``.
fn rig_list(unbuilt: &[matrix::Unbuilt]) -> String {
    let names: Vec<String> = unbuilt.iter().map(|u| format!("`{}`", u.rig)).collect();
    format!("{} {}", if names.len() == 1 { "rig" } else { "rigs" }, names.join(", "))
}

/// The cells whose label `filter` matches, or an error when none does. Cells keep their index in the whole
/// matrix, so a filter never moves a cell to another shard.
fn keep_matching(
    mut cells: Vec<matrix::Cell>,
    filter: Option<&regex::Regex>,
    whole: &Whole,
) -> Result<Vec<matrix::Cell>> {
    if let Some(filter) = filter {
        cells.retain(|cell| filter.is_match(&cell.label()));
        if cells.is_empty() {
            let counted = crate::report::format::count(whole.cells, "cell");
            let (built, unbuilt) = match whole.unbuilt.is_empty() {
                true => ("", String::new()),
                false => (
                    " of the built rigs",
                    format!(
                        "; {} of the file, not built, might have matched{}",
                        rig_list(&whole.unbuilt),
                        matrix::build_advice(&whole.unbuilt)
                    ),
                ),
            };
            bail!(
                "no cell matches `{filter}` (the matrix{built} has {counted}; `benchhost plan` lists their labels){unbuilt}"
            );
        }
    }
    Ok(cells)
}

/// Samples shorter than this are mostly clock and call overhead (ten prepared batches of two clock reads
/// and two FFI calls each: about 1 µs per sample).
const MIN_SAMPLE_NS: u64 = 1_000_000;

/// Samples shorter than this cannot be taken as planned: their overhead alone is a tenth of them or more, and
/// a billion samples of 1 ns would each still cost that microsecond, running the cell into its deadline.
const MIN_FEASIBLE_SAMPLE_NS: u64 = 10_000;

/// An error when an iterations-style rig's planned samples are too short to be taken at all; one warning per
/// rig whose samples are too short to time well.
fn check_sample_length(cells: &[matrix::Cell], loader: &Loader) -> Result<()> {
    let mut warned = std::collections::BTreeSet::new();
    for cell in cells {
        let iterations = loader.rig(&cell.rig).is_some_and(|(_, d)| d.style == benchhost_plugin_api::Style::Iterations);
        let length = report::format::quantity(cell.plan.sample_ns as f64, "ns");
        if iterations && cell.plan.sample_ns < MIN_FEASIBLE_SAMPLE_NS {
            bail!(
                "{}: samples of {length} (measurement / samples) cannot be taken: each carries about 1 µs of clock \
                 and call overhead; give each sample at least 1 ms (fewer --samples or a longer --measurement)",
                cell.rig
            );
        }
        if iterations && cell.plan.sample_ns < MIN_SAMPLE_NS && warned.insert(cell.rig.clone()) {
            eprintln!(
                "warning: {}: samples of {length} (measurement / samples) are too short to time well; each carries \
                 about 1 µs of clock and call overhead: give each sample at least 1 ms",
                cell.rig
            );
        }
    }
    Ok(())
}

/// Finds the plugins (`config`: the one in use, whose `[sha256]` pins libraries); with `notes`, each library that
/// did not load gets a one-line note on stderr.
pub(crate) fn discover(dirs: &PluginDirs, config: Option<&Config>, notes: bool) -> Result<Loader> {
    if let Some(missing) = dirs.plugin_dirs.iter().find(|d| !d.is_dir()) {
        bail!("--plugin-dir {}: no such directory", missing.display());
    }
    let exe = current_exe()?;
    let env_path = std::env::var("BENCHHOST_PLUGIN_PATH").ok();
    // `benchhost build --benches`'s plugins of the build here, after the directories named.
    let named: Vec<PathBuf> =
        dirs.plugin_dirs.iter().cloned().chain(crate::cli::build_benches::plugins_here()).collect();
    let search = Loader::search_path(&named, env_path.as_deref(), &exe);
    let trust = Trust {
        allow_writable: dirs.allow_writable_plugins,
        pins: config.map(|c| c.pins.clone()).unwrap_or_default(),
        pinned_in: config.map(|c| c.path.display().to_string()).unwrap_or_default(),
    };
    let loader = Loader::discover(&search, &exe, &trust);
    for rejected in loader.rejected.iter().filter(|_| notes) {
        eprintln!("note: skipped {}: {}", rejected.path.display(), rejected.reason);
    }
    Ok(loader)
}

/// This executable: every child re-executes it.
pub(crate) fn current_exe() -> Result<PathBuf> {
    std::env::current_exe().context("finding the benchhost executable (children re-execute it)")
}
