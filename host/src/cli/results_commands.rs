//! The commands over results files: `show`, `verify`, `report` (every format), `import criterion` and `merge`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use crate::analysis::series_changes;
use crate::cli::args::{Format, ReportArgs};
use crate::cli::read_streams;
use crate::cli::streamed::{self, Output};
use crate::report::{self, export, html};
use crate::run::output::{narrate, print};
use crate::run::provenance;
use benchhost_record::history::Needs;
use benchhost_record::scan;
use benchhost_record::sink::Sink;

/// `benchhost show`: the newest record of each series with its count and trend, or with `all` every record.
pub(crate) fn show(files: &[PathBuf], all: bool) -> Result<ExitCode> {
    if all {
        let mut out = Output::to(None)?;
        streamed::show_all(files, &mut out)?;
        out.finish()?;
        return Ok(ExitCode::SUCCESS);
    }
    let history = read_streams::history(files, Needs { trend: 8, ..Needs::newest(1) })?;
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
    if let Some(warehouse) = &args.source.warehouse {
        let file = tempfile::Builder::new().prefix("benchhost-warehouse-").suffix(".jsonl").tempfile()?;
        // A report of the newest runs needs the newest records of each series only.
        let newest = match args.format {
            Format::Md => Some(2),
            Format::Bmf | Format::Gab => Some(1),
            Format::Csv | Format::Json | Format::Html => None,
        };
        crate::cli::delegate::export(warehouse, args.source.storage.as_deref(), file.path(), newest)?;
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
        // The newest runs, then where the history of the files changed (a warehouse's export here holds
        // only its newest runs: `trend --warehouse` reads all of it).
        Format::Md => {
            let kept = Needs::newest(crate::analysis::between_runs::KEPT_RUNS);
            let (history, changes) = read_with_changes(&files, kept, args)?;
            let section = match report::trend::markdown(&changes) {
                text if text.is_empty() => text,
                text => format!("\n{text}"),
            };
            report::markdown::markdown(&history.into_records(), args.threshold) + &section
        }
        Format::Html => {
            let (history, changes) = read_with_changes(&files, html::NEEDS, args)?;
            html::page(&history, &changes)
        }
        Format::Bmf | Format::Gab => {
            let records = read_streams::newest(&files, 1)?;
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

/// The history of `files` the report needs and, without `--no-change-points` and with files given (a warehouse's export
/// holds only its newest runs: `trend --warehouse` reads all of it), the change points of every series, read
/// in the same pass.
fn read_with_changes(
    files: &[PathBuf],
    needs: Needs,
    args: &ReportArgs,
) -> Result<(benchhost_record::history::History, Vec<series_changes::SeriesChanges>)> {
    let wanted = !args.no_change_points && args.source.warehouse.is_none();
    let (history, values) = read_streams::history_beside_nightly(files, needs, wanted)?;
    let acknowledgements: Vec<benchhost_record::Record> = history.acknowledgements().into_iter().cloned().collect();
    let standing = benchhost_record::standing_acknowledgements(&acknowledgements);
    let changes = values.map(|values| series_changes::of_history(values, |_| true, &standing, scan::threads()));
    Ok((history, changes.unwrap_or_default()))
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
