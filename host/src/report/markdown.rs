//! The Markdown report (`report --format md`, `run --export-markdown`), in the order a reviewer reads it: the
//! verdicts first, grouped by what they compare against; then what changed since each series' previous run,
//! regressions and improvements listed and the rest counted; then each rig's newest estimates in seed 000's
//! `Benchmark | Estimate | vs previous run` table, split by the keys that change together, in numeric order.
//! Formats only; reads nothing, measures nothing.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::analysis::between_runs::Spreads;
use crate::analysis::{compare, decision};
use crate::report::blocks::blocks;
use crate::report::export::{failure_text, short_names};
use crate::report::format::{metric_beside, metrics_shown};
use crate::report::{order, verdicts};
use benchhost_record::{BetweenRuns, Decision, Kind, MetricValue, Record, SeriesKey};

/// A series' newest metric against its previous run.
enum Change {
    /// The series has no earlier run.
    First,
    /// Its newest run failed (`newest run failed`, `first run failed`).
    Failed(&'static str),
    /// Its previous run failed, or did not have the metric.
    NotBefore(&'static str),
    /// Its previous run was on another CPU: (that CPU, this one).
    OtherMachine(String, String),
    /// No ratio can be formed.
    Undefined(String),
    /// `+1.2%` and the decision at the threshold.
    Judged(f64, Decision),
}

impl Change {
    fn text(&self) -> String {
        match self {
            Change::First => "first run".into(),
            Change::Failed(why) | Change::NotBefore(why) => (*why).into(),
            Change::OtherMachine(..) => "other machine".into(),
            Change::Undefined(why) => format!("undefined ({why})"),
            Change::Judged(change, decision) => format!("{:+.1}% ({})", change * 100.0, decision.name()),
        }
    }
}

/// One row of a rig's table.
struct Row {
    name: String,
    estimate: String,
    change: Change,
}

/// The report of `records` (measurements, failures and verdicts; each series' newest runs, up to
/// `between_runs::KEPT_RUNS`: the runs before the newest say how far two of them differ) at `threshold` for
/// the unpaired "vs previous run".
pub fn markdown(records: &[Record], threshold: f64) -> String {
    let verdict_records: Vec<&Record> = records.iter().filter(|r| r.kind == Kind::Verdict).collect();
    let mut out = verdicts::markdown(&verdicts::groups(&verdict_records));
    let series = history(records);
    let before: Vec<Record> =
        series.values().flat_map(|runs| runs[..runs.len() - 1].iter().map(|r| (*r).clone())).collect();
    let spreads = Spreads::new(&before);
    let mut by_bench: BTreeMap<&str, Vec<Vec<&Record>>> = BTreeMap::new();
    for runs in series.into_values() {
        by_bench.entry(runs[0].bench.as_str()).or_default().push(runs);
    }
    let sections: Vec<(&str, String, Vec<Row>)> = by_bench
        .into_iter()
        .map(|(bench, series)| {
            let (text, rows) = rig_section(bench, &series, (threshold, &spreads));
            (bench, text, rows)
        })
        .collect();
    out += &summary(&sections);
    for (_, text, _) in sections {
        out += &text;
    }
    out
}

/// Measurement and failure records per series, oldest first: the newest decides what a report says.
fn history(records: &[Record]) -> BTreeMap<SeriesKey, Vec<&Record>> {
    let mut series: BTreeMap<SeriesKey, Vec<&Record>> = BTreeMap::new();
    for record in records.iter().filter(|r| matches!(r.kind, Kind::Measurement | Kind::Failure)) {
        series.entry(benchhost_record::series(record)).or_default().push(record);
    }
    for runs in series.values_mut() {
        runs.sort_by_key(|r| r.run.ts_ms);
    }
    series
}

/// "Since the previous run": the decisions counted, and the rows that regressed or improved. Empty when no
/// series has a previous run.
fn summary(sections: &[(&str, String, Vec<Row>)]) -> String {
    let rows = || sections.iter().flat_map(|(_, _, rows)| rows);
    let mut counts: BTreeMap<u8, (Decision, usize)> = BTreeMap::new();
    let (mut machines, mut compared) = (0, 0);
    for row in rows() {
        match &row.change {
            Change::Judged(_, d) => counts.entry(verdicts::urgency(Some(*d))).or_insert((*d, 0)).1 += 1,
            Change::Failed(_) => counts.entry(0).or_insert((Decision::Failed, 0)).1 += 1,
            Change::OtherMachine(..) => machines += 1,
            _ => continue,
        }
        compared += 1;
    }
    if compared == 0 {
        return String::new();
    }
    let mut out = format!(
        "## Since the previous run\n\nEach series' newest record against its previous one (unpaired: two runs, \
         judged with how far the series' earlier runs on that machine differ, `inconclusive` where fewer than \
         {} say or the two runs show the machine as those did not; `run --against` pairs two builds in one process).\n\n",
        crate::analysis::between_runs::MIN_RUNS
    );
    let mut said: Vec<String> = counts.values().map(|(d, n)| format!("{n} {}", d.name())).collect();
    if machines > 0 {
        said.push(format!("{machines} not compared (the previous run was on another machine)"));
    }
    let _ = writeln!(out, "{}.\n", said.join(", "));
    let notable: Vec<(&str, &Row)> = sections
        .iter()
        .flat_map(|(bench, _, rows)| rows.iter().map(move |r| (*bench, r)))
        .filter(|(_, r)| {
            matches!(r.change, Change::Failed(_) | Change::Judged(_, Decision::Regressed | Decision::Improved))
        })
        .collect();
    if !notable.is_empty() {
        out.push_str("| Benchmark | Estimate | vs previous run |\n|---|---|---|\n");
        let mut notable = notable;
        // Failed, then regressed, then improved.
        notable.sort_by_key(|(_, r)| match r.change {
            Change::Failed(_) => 0,
            Change::Judged(_, Decision::Regressed) => 1,
            _ => 2,
        });
        for (_, row) in notable {
            let _ =
                writeln!(out, "| {} | {} | {} |", cell_text(&row.name), cell_text(&row.estimate), row.change.text());
        }
        out.push('\n');
    }
    out
}

/// One rig's section and its rows: the parameters all its series share, then per block its table.
fn rig_section(bench: &str, series: &[Vec<&Record>], judging: (f64, &Spreads)) -> (String, Vec<Row>) {
    let variants: Vec<_> = series.iter().map(|runs| &runs[runs.len() - 1].variant).collect();
    let (fixed, _) = short_names(&variants);
    let mut out = format!("## {}\n\n", cell_text(bench));
    if !fixed.is_empty() {
        let _ = writeln!(out, "Fixed: {}\n", cell_text(&fixed));
    }
    let compared = series.iter().any(|runs| runs.len() > 1);
    let (mut all_rows, mut doubtful, mut machines) = (Vec::new(), Vec::new(), BTreeMap::new());
    for block in blocks(&variants) {
        if !block.label.is_empty() {
            let _ = writeln!(out, "**{}**\n", cell_text(&block.label));
        }
        out.push_str(match compared {
            true => "| Benchmark | Estimate | vs previous run |\n|---|---|---|\n",
            false => "| Benchmark | Estimate |\n|---|---|\n",
        });
        for (&i, name) in block.members.iter().zip(&block.names) {
            let runs = &series[i];
            let name = if name.is_empty() { bench.to_string() } else { format!("{bench}/{name}") };
            let latest = runs[runs.len() - 1];
            let doubts = latest.cell.as_ref().and_then(|c| c.conditions.as_ref()).map(|c| c.doubts());
            if let Some(doubts) = doubts.filter(|d| !d.is_empty()) {
                doubtful.push(format!("{name}: {}", doubts.join("; ")));
            }
            for row in rows(&name, runs, judging) {
                if let Change::OtherMachine(before, now) = &row.change {
                    *machines.entry((before.clone(), now.clone())).or_insert(0) += 1;
                }
                let line = [cell_text(&row.name), cell_text(&row.estimate), row.change.text()];
                let shown = if compared { &line[..] } else { &line[..2] };
                let _ = writeln!(out, "| {} |", shown.join(" | "));
                all_rows.push(row);
            }
        }
        out.push('\n');
    }
    for ((before, now), n) in machines {
        let _ = writeln!(
            out,
            "Other machine: {n} rows not compared; the previous run was on {before}, the newest on {now}.\n"
        );
    }
    if !doubtful.is_empty() {
        out.push_str("Doubtful conditions:\n\n");
        for line in doubtful {
            let _ = writeln!(out, "- {}", cell_text(&line));
        }
        out.push('\n');
    }
    (out, all_rows)
}

/// The rows of one series: one per metric of its newest run (in natural order), or one that says it failed.
fn rows(name: &str, runs: &[&Record], (threshold, spreads): (f64, &Spreads)) -> Vec<Row> {
    let latest = runs[runs.len() - 1];
    let previous = runs.len().checked_sub(2).map(|i| runs[i]);
    if latest.kind == Kind::Failure {
        let why = if previous.is_some() { "newest run failed" } else { "first run failed" };
        return vec![Row { name: name.to_string(), estimate: failure_text(latest), change: Change::Failed(why) }];
    }
    let mut metrics = metrics_shown(latest);
    metrics.sort_by(|a, b| order::natural(a.0, b.0));
    metrics
        .into_iter()
        .map(|(metric, m, uncorrected)| {
            let change = match previous {
                None => Change::First,
                Some(p) if p.kind == Kind::Failure => Change::NotBefore("previous run failed"),
                Some(p) if p.run.cpu != latest.run.cpu => {
                    Change::OtherMachine(p.run.cpu.clone(), latest.run.cpu.clone())
                }
                Some(p) => p.metrics.get(metric).map_or(Change::NotBefore("new metric"), |b| {
                    let spread = compare::measured(b, m).then(|| spreads.get(latest, metric, b, m));
                    judged(b, m, threshold, spread.as_ref())
                }),
            };
            Row { name: format!("{name}/{metric}"), estimate: metric_beside(m, uncorrected), change }
        })
        .collect()
}

fn judged(before: &MetricValue, after: &MetricValue, threshold: f64, spread: Option<&BetweenRuns>) -> Change {
    let (ratio, ci) = decision::ratio_ci(before, after);
    if let Some(why) = compare::undefined_ratio(before, after, ratio, ci) {
        return Change::Undefined(why);
    }
    let decision = match compare::unpaired_interval(before, after, spread) {
        Some(ci) => decision::decide(ci, after.higher_is_better, threshold),
        None => Decision::Inconclusive,
    };
    Change::Judged(ratio - 1.0, decision)
}

/// Text safe inside a Markdown table cell: a `|` would end the cell, a line break the row.
pub fn cell_text(text: &str) -> String {
    text.replace('|', "\\|").replace(['\r', '\n'], " ")
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
