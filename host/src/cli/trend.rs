//! `benchhost trend`: the change points of every series' history (see `analysis::change_points`), as a table
//! or JSON, and the nightly gate: exit 1 when a series' newest change point is a regression that started
//! within the last K runs.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use regex::Regex;
use serde_json::{Value, json};

use crate::analysis::change_points::{self, ChangePoint};
use crate::analysis::series_changes::{self, SeriesChanges};
use crate::cli::args::TrendArgs;
use crate::cli::read_streams;
use crate::report::trend::label;
use crate::run::output::print;
use benchhost_record::standing_acknowledgements;

pub(crate) fn trend(args: &TrendArgs) -> Result<ExitCode> {
    let (files, filter) = files_and_filter(&args.inputs, args.source.warehouse.is_some())?;
    // The warehouse's records, exported into a fresh file of a random name (deleted when dropped), as
    // `report --warehouse` reads them.
    let mut scratch = None;
    if let Some(warehouse) = &args.source.warehouse {
        let file = tempfile::Builder::new().prefix("benchhost-warehouse-").suffix(".jsonl").tempfile()?;
        crate::cli::delegate::export(warehouse, args.source.storage.as_deref(), file.path(), None)?;
        scratch = Some(file);
    }
    let all: Vec<PathBuf> = files.iter().cloned().chain(scratch.as_ref().map(|f| f.path().to_owned())).collect();
    let (history, acknowledgements) = read_streams::nightly(&all)?;
    let found = series_changes::of_history(
        history,
        |key| {
            args.metric.as_ref().is_none_or(|m| *m == key.metric)
                && filter.as_ref().is_none_or(|f| f.is_match(&label(key)))
        },
        &standing_acknowledgements(&acknowledgements),
        benchhost_record::scan::threads(),
    );
    if found.is_empty() {
        let metric = args.metric.as_ref().map(|m| format!(" with metric `{m}`")).unwrap_or_default();
        bail!("no series{metric} matched{}", filter.map(|f| format!(" `{f}`")).unwrap_or_default());
    }
    let gated: Vec<&SeriesChanges> = found.iter().filter(|f| args.fail_on.is_some() && f.gates(args.within)).collect();
    let text = if args.json {
        format!("{}\n", serde_json::to_string_pretty(&as_json(&found))?)
    } else {
        table(&found, args.within)
    };
    print(&text)?;
    for f in &gated {
        eprintln!("regression within the last {} runs: {}", args.within, label(&f.key));
    }
    Ok(if gated.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The positional words: results files, and as the last one a FILTER (a regex on `bench k=v ...`) when it is
/// not a file; with a warehouse, a single word is the FILTER.
fn files_and_filter(inputs: &[String], warehouse: bool) -> Result<(Vec<PathBuf>, Option<Regex>)> {
    let mut files: Vec<PathBuf> = inputs.iter().map(PathBuf::from).collect();
    let last_is_filter = files.last().is_some_and(|p| !p.exists()) && (warehouse || files.len() > 1);
    let filter = match last_is_filter {
        true => {
            let text = inputs.last().expect("a last word");
            files.pop();
            Some(Regex::new(text).map_err(|e| anyhow::anyhow!("FILTER `{text}` is not a regular expression: {e}"))?)
        }
        false => None,
    };
    if let Some(missing) = files.iter().find(|p| !p.exists()) {
        bail!("{}: no such results file", missing.display());
    }
    if files.is_empty() && !warehouse {
        bail!("give results files (or --warehouse DIR|URI) to read the history from");
    }
    Ok((files, filter))
}

fn direction(found: &SeriesChanges, point: &ChangePoint) -> &'static str {
    if found.regression(point) { "regression" } else { "improvement" }
}

fn table(found: &[SeriesChanges], within: usize) -> String {
    let mut out = String::new();
    let (mut points, mut short, mut recent, mut accepted) = (0, Vec::new(), 0, 0);
    for f in found {
        match &f.points {
            Err(why) => short.push(format!("{} ({}, {}): {why}", label(&f.key), f.key.metric, f.key.machine)),
            Ok(found_points) if found_points.is_empty() && f.accepted.is_empty() && f.unplaced.is_empty() => {}
            Ok(found_points) => {
                out += &format!(
                    "{} · {} · {} nights on {}\n",
                    label(&f.key),
                    f.key.metric,
                    f.series.points.len(),
                    f.key.machine
                );
                for p in found_points {
                    points += 1;
                    recent += usize::from(f.recent_regression(p, within));
                    let provisional = if p.provisional { " (provisional)" } else { "" };
                    let night = night_line(f, p.index, p.ratio, p.ci95);
                    out += &format!("{night}, p {:.1e}, {}{provisional}\n", p.p, direction(f, p));
                }
                accepted += f.accepted.len();
                out += &acknowledged(f);
            }
        }
        if f.points.is_err() {
            out += &acknowledged(f);
        }
    }
    out += &format!(
        "{} series, {points} change points ({recent} regressions starting within the last {within} runs), \
         {accepted} accepted steps; a provisional one may still move or vanish, until {} nights follow it\n",
        found.len(),
        change_points::SETTLED_AFTER
    );
    out += &too_short(&short, crate::run::output::verbose());
    out
}

/// The lines of a series' accepted steps, and of its acknowledgements that accepted none.
fn acknowledged(f: &SeriesChanges) -> String {
    let mut out = String::new();
    for step in &f.accepted {
        let a = step.acknowledgement.acknowledgement.as_ref().expect("acknowledgements only");
        let night = night_line(f, step.index, step.ratio, step.ci95);
        out += &format!("{night}, {} [{}]\n", accepted_said(&step.acknowledgement), a.id);
    }
    for u in &f.unplaced {
        let a = u.acknowledgement.acknowledgement.as_ref().expect("acknowledgements only");
        out += &format!("  acknowledgement {} ({}): {}\n", a.id, a.reason, u.why);
    }
    out
}

/// `  night N (run ID, commit C): xR [LO, HI]`: a step of the series at night `index`.
fn night_line(f: &SeriesChanges, index: usize, ratio: f64, ci95: [f64; 2]) -> String {
    let at = &f.series.points[index];
    let (run, commit) = (at.run.id.as_deref().unwrap_or("-"), at.run.commit.as_deref().unwrap_or("-"));
    format!("  night {index} (run {run}, commit {commit}): x{ratio:.4} [{:.4}, {:.4}]", ci95[0], ci95[1])
}

/// `accepted: REASON (BY, DATE)` of an acknowledgement record.
fn accepted_said(record: &benchhost_record::Record) -> String {
    crate::analysis::acknowledgements::accepted(record).said()
}

/// The series too short to look for change points in: one line that counts them, or with `-v` a line each.
fn too_short(short: &[String], each: bool) -> String {
    match (short.len(), each) {
        (0, _) => String::new(),
        (_, true) => short.iter().map(|line| format!("  no change points for {line}\n")).collect(),
        (n, false) => format!(
            "{n} series too short to look for change points in (fewer than {} usable nights each; -v lists them)\n",
            2 * change_points::MIN_SIDE
        ),
    }
}

fn as_json(found: &[SeriesChanges]) -> Value {
    let (mut points, mut accepted, mut unplaced) = (Vec::new(), Vec::new(), Vec::new());
    let mut series = Vec::new();
    for f in found {
        let variant: Value = serde_json::from_str(&f.key.variant).unwrap_or(Value::Null);
        let mut base =
            json!({"bench": f.key.bench, "variant": variant, "metric": f.key.metric, "machine": f.key.machine});
        // How the series was measured, where it was not plainly: a series of its own (`benchhost_record::method`).
        if !f.key.method.is_empty() {
            base["method"] = json!(f.key.method);
        }
        let mut entry = base.clone();
        entry["nights"] = json!(f.series.points.len());
        entry["accepted"] = json!(f.accepted.len());
        for step in &f.accepted {
            let at = &f.series.points[step.index];
            let a = step.acknowledgement.acknowledgement.as_ref().expect("acknowledgements only");
            accepted.push(with_fields(
                &base,
                [
                    ("index", json!(step.index)),
                    ("run", json!(at.run.id)),
                    ("commit", json!(at.run.commit)),
                    ("ratio", json!(step.ratio)),
                    ("ci95", json!(step.ci95)),
                    ("id", json!(a.id)),
                    ("reason", json!(a.reason)),
                    ("by", json!(a.by)),
                    ("ts_ms", json!(step.acknowledgement.run.ts_ms)),
                ],
            ));
        }
        for u in &f.unplaced {
            let a = u.acknowledgement.acknowledgement.as_ref().expect("acknowledgements only");
            unplaced
                .push(with_fields(&base, [("id", json!(a.id)), ("reason", json!(a.reason)), ("why", json!(u.why))]));
        }
        match &f.points {
            Err(why) => entry["reason"] = json!(why.to_string()),
            Ok(found_points) => {
                entry["change_points"] = json!(found_points.len());
                for p in found_points {
                    let at = &f.series.points[p.index];
                    points.push(with_fields(
                        &base,
                        [
                            ("index", json!(p.index)),
                            ("run", json!(at.run.id)),
                            ("commit", json!(at.run.commit)),
                            ("ratio", json!(p.ratio)),
                            ("ci95", json!(p.ci95)),
                            ("p", json!(p.p)),
                            ("direction", json!(if f.regression(p) { "bad" } else { "good" })),
                            ("provisional", json!(p.provisional)),
                        ],
                    ));
                }
            }
        }
        series.push(entry);
    }
    json!({"change_points": points, "accepted": accepted, "acknowledgements_without_a_step": unplaced, "series": series})
}

/// `base` (a series' bench, variant, metric and machine) with `fields` added: one row of `--json`'s lists.
fn with_fields<const N: usize>(base: &Value, fields: [(&str, Value); N]) -> Value {
    let mut row = base.clone();
    for (key, value) in fields {
        row[key] = value;
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_word_is_the_filter_when_it_is_not_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.jsonl");
        std::fs::write(&file, "").unwrap();
        let path = file.display().to_string();
        let (files, filter) = files_and_filter(&[path.clone(), "wal.*lz4".into()], false).unwrap();
        assert_eq!((files, filter.map(|f| f.to_string())), (vec![file.clone()], Some("wal.*lz4".to_string())));
        assert_eq!(files_and_filter(std::slice::from_ref(&path), false).unwrap().1.map(|f| f.to_string()), None);
        let (files, filter) = files_and_filter(&["querier".into()], true).unwrap();
        assert_eq!((files.len(), filter.map(|f| f.to_string())), (0, Some("querier".to_string())));
        let err = files_and_filter(&["missing.jsonl".into()], false).unwrap_err().to_string();
        assert_eq!(err, "missing.jsonl: no such results file");
        let err = files_and_filter(&[path, "(".into()], false).unwrap_err().to_string();
        assert!(err.starts_with("FILTER `(` is not a regular expression"), "{err}");
    }

    #[test]
    fn series_too_short_for_change_points_are_counted_in_one_line() {
        // regression: `trend results/*.jsonl` printed 525 lines of "1 usable night, fewer than the 10 ...".
        let short: Vec<String> = (0..525).map(|i| format!("wal rows={i} (t, host / cpu): 1 usable night")).collect();
        let text = too_short(&short, false);
        assert_eq!(
            text,
            "525 series too short to look for change points in (fewer than 10 usable nights each; -v lists them)\n"
        );
        assert_eq!(too_short(&short, true).lines().count(), 525, "-v lists each");
        assert_eq!(too_short(&[], false), "");
    }
}
