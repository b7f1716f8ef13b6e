//! Change points for people: a series' name, the Markdown report's "Change points" section (the rows
//! `benchhost trend` prints), and the HTML report's list of the newest and the marks on its history charts.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use crate::analysis::accepted_steps::AcceptedStep;
use crate::analysis::change_points::{ChangePoint, SETTLED_AFTER};
use crate::analysis::series_changes::SeriesChanges;
use crate::report::format::plain;
use crate::report::html_text::{date, esc};
use benchhost_record::nightly::NightlyKey;

/// `bench k=v k=v`, as `run FILTER` sees a cell, and how it was measured when not plainly (`[alternate_windows]`).
pub fn label(key: &NightlyKey) -> String {
    let variant: BTreeMap<String, Value> = serde_json::from_str(&key.variant).unwrap_or_default();
    label_of(&key.bench, &variant) + &crate::report::format::method_suffix(&key.method)
}

/// [`label`] of a bench and its variant.
pub fn label_of(bench: &str, variant: &BTreeMap<String, Value>) -> String {
    let params: Vec<String> = variant.iter().map(|(k, v)| format!("{k}={}", plain(v))).collect();
    format!("{bench} {}", params.join(" ")).trim_end().to_string()
}

/// The Markdown report's section: one row per change point, series by series; a line when there is none;
/// nothing when no series has the nights to tell (a report of one run).
pub fn markdown(found: &[SeriesChanges]) -> String {
    let scanned = found.iter().filter(|f| f.points.is_ok()).count();
    if scanned == 0 {
        return String::new();
    }
    let mut out = String::from("## Change points\n\n");
    let with_points: Vec<&SeriesChanges> =
        found.iter().filter(|f| f.points.as_ref().is_ok_and(|p| !p.is_empty()) || !f.accepted.is_empty()).collect();
    if with_points.is_empty() {
        let _ = writeln!(out, "None in the history of {scanned} series.");
        return out;
    }
    out.push_str("| Series | Metric | From night | Run | Commit | Change | CI95 | p | |\n|---|---|---|---|---|---|---|---|---|\n");
    for f in with_points {
        for p in f.points.as_ref().expect("kept above") {
            let what = if f.regression(p) { "regression" } else { "improvement" };
            let provisional = if p.provisional { " (provisional)" } else { "" };
            let _ = writeln!(out, "{} {:.1e} | {what}{provisional} |", row(f, p.index, p.ratio, p.ci95), p.p);
        }
        for step in &f.accepted {
            let said = crate::analysis::acknowledgements::accepted(&step.acknowledgement).said();
            let _ = writeln!(out, "{} - | {} |", row(f, step.index, step.ratio, step.ci95), said.replace('|', "\\|"));
        }
    }
    let _ =
        writeln!(out, "\nA provisional change point may still move or vanish until {SETTLED_AFTER} nights follow it.");
    out
}

/// A row of the Markdown section up to its p column: series, metric, night, run, commit, change and CI95.
fn row(f: &SeriesChanges, index: usize, ratio: f64, ci95: [f64; 2]) -> String {
    let at = &f.series.points[index];
    format!(
        "| {} | {} | {index} of {} | {} | {} | {:+.1}% | [{:+.1}%, {:+.1}%] |",
        label(&f.key).replace('|', "\\|"),
        f.key.metric,
        f.series.points.len(),
        at.run.id.as_deref().unwrap_or("-"),
        at.run.commit.as_deref().unwrap_or("-"),
        100.0 * (ratio - 1.0),
        100.0 * (ci95[0] - 1.0),
        100.0 * (ci95[1] - 1.0),
    )
}

/// Change points the HTML page lists at its top, newest first.
const NEWEST: usize = 10;

/// A change point drawn on a history chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// The metric whose panel it is on.
    pub metric: String,
    /// When its first night ran.
    pub ts_ms: u64,
    /// Its size, run and commit, in words.
    pub text: String,
    /// A regression.
    pub bad: bool,
    /// A step an acknowledgement accepted (`benchhost accept`).
    pub accepted: bool,
}

/// The marks of each series' history chart, by series (bench, canonical variant).
pub fn marks(found: &[SeriesChanges]) -> BTreeMap<(String, String), Vec<Mark>> {
    let mut marks: BTreeMap<(String, String), Vec<Mark>> = BTreeMap::new();
    for (f, p) in points(found) {
        let mark = Mark {
            metric: f.key.metric.clone(),
            ts_ms: f.series.points[p.index].ts_ms,
            text: words(f, p),
            bad: f.regression(p),
            accepted: false,
        };
        marks.entry((f.key.bench.clone(), f.key.variant.clone())).or_default().push(mark);
    }
    for f in found {
        for step in &f.accepted {
            let mark = Mark {
                metric: f.key.metric.clone(),
                ts_ms: f.series.points[step.index].ts_ms,
                text: accepted_words(f, step),
                bad: (step.ratio > 1.0) != f.series.higher_is_better,
                accepted: true,
            };
            marks.entry((f.key.bench.clone(), f.key.variant.clone())).or_default().push(mark);
        }
    }
    marks
}

/// `accepted +5.0% from run n120 (commit 000000000120): REASON (BY, DATE)`.
fn accepted_words(f: &SeriesChanges, step: &AcceptedStep) -> String {
    let at = &f.series.points[step.index];
    let said = crate::analysis::acknowledgements::accepted(&step.acknowledgement).said();
    format!(
        "accepted {:+.1}% from run {} (commit {}): {}",
        100.0 * (step.ratio - 1.0),
        at.run.id.as_deref().unwrap_or("-"),
        at.run.commit.as_deref().unwrap_or("-"),
        said.trim_start_matches("accepted: ")
    )
}

/// The page's list of the newest change points, or nothing when there is none.
pub fn html_newest(found: &[SeriesChanges]) -> String {
    let mut all: Vec<(&SeriesChanges, &ChangePoint)> = points(found).collect();
    if all.is_empty() {
        return String::new();
    }
    all.sort_by_key(|(f, p)| std::cmp::Reverse(f.series.points[p.index].ts_ms));
    let items: String = all
        .iter()
        .take(NEWEST)
        .map(|(f, p)| {
            let when = date(f.series.points[p.index].ts_ms);
            let colour = if f.regression(p) { "#d62728" } else { "#2ca02c" };
            format!(
                "<li><b>{}</b> · {}: <span style=\"color:{colour}\">{}</span>, {when}</li>",
                esc(&label(&f.key)),
                esc(&f.key.metric),
                esc(&words(f, p))
            )
        })
        .collect();
    format!(
        "<section class=\"changes\"><h2>Newest change points ({} of {})</h2><ul>{items}</ul></section>\n",
        all.len().min(NEWEST),
        all.len()
    )
}

/// Every change point with its series.
fn points(found: &[SeriesChanges]) -> impl Iterator<Item = (&SeriesChanges, &ChangePoint)> {
    found.iter().flat_map(|f| f.points.iter().flatten().map(move |p| (f, p)))
}

/// `+5.2% regression from run n120 (commit 000000000120)`, and whether it may still move.
fn words(f: &SeriesChanges, p: &ChangePoint) -> String {
    let at = &f.series.points[p.index];
    format!(
        "{:+.1}% {} from run {} (commit {}){}",
        100.0 * (p.ratio - 1.0),
        if f.regression(p) { "regression" } else { "improvement" },
        at.run.id.as_deref().unwrap_or("-"),
        at.run.commit.as_deref().unwrap_or("-"),
        if p.provisional { ", provisional" } else { "" }
    )
}
