//! Every measured value of every series, in run order: the nightly history `benchhost trend` reads for change
//! points. Unlike [`History`](crate::history::History), which keeps the newest records, this keeps each
//! measurement's value, its own CI95, whether it ran in doubtful conditions, and its run's id and commit, so
//! it grows with the records (~60 bytes per metric of a record, and its run's names once).
//!
//! A series here is a bench, its variant, a metric and the machine (`run.host` and `run.cpu`): a history that
//! moves to another machine is two series, because a machine change is a step that is not the code's.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;

use crate::fold::fold_lines;
use crate::lines::RawLine;
use crate::{Conditions, Kind, Record, SCHEMA};

/// A series of the nightly history.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NightlyKey {
    /// The rig.
    pub bench: String,
    /// Its variant, as canonical JSON (keys sorted).
    pub variant: String,
    /// The metric.
    pub metric: String,
    /// `host / cpu` of the runs.
    pub machine: String,
}

/// One measured value.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// `run.ts_ms`.
    pub ts_ms: u64,
    /// Where the record came from: file number << 40 | line, which orders records of the same time.
    pub at: u64,
    /// The value.
    pub value: f64,
    /// The record's own CI95 of it.
    pub ci95: Option<[f64; 2]>,
    /// Ran in conditions that make its number doubtful (see [`Conditions::doubts`]) or from a debug build.
    pub doubtful: bool,
    /// Its run, shared by the points of every metric of the record.
    pub run: Arc<RunOf>,
}

/// What names the run of a point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOf {
    /// `run.id`.
    pub id: Option<String>,
    /// `run.commit`.
    pub commit: Option<String>,
}

/// A series' values in run order, and its metric's direction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// Direction of goodness (as a record of the series says: every record of a metric says the same).
    pub higher_is_better: bool,
    /// The values, oldest first; a record read twice (the same run, time and value) once.
    pub points: Vec<Point>,
}

/// Every series of the streams read.
#[derive(Debug, Default)]
pub struct Nightly {
    /// Per series, its values.
    pub series: BTreeMap<NightlyKey, Series>,
    files: u64,
}

/// What a line gives of itself, read without parsing the rest of it.
#[derive(serde::Deserialize)]
struct Peek {
    schema: u32,
    bench: String,
    kind: Kind,
    run: PeekRun,
    #[serde(default)]
    variant: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    metrics: BTreeMap<String, PeekMetric>,
    #[serde(default)]
    cell: Option<PeekCell>,
}

#[derive(serde::Deserialize)]
struct PeekRun {
    ts_ms: u64,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    commit: Option<String>,
    host: String,
    cpu: String,
    #[serde(default)]
    profile: String,
}

#[derive(serde::Deserialize)]
struct PeekMetric {
    value: f64,
    higher_is_better: bool,
    #[serde(default)]
    ci95: Option<[f64; 2]>,
}

#[derive(serde::Deserialize)]
struct PeekCell {
    #[serde(default)]
    conditions: Option<Conditions>,
}

impl Nightly {
    /// Adds every measurement of the stream at `path`; skipped lines are reported on stderr, and a stream
    /// without one readable record is an error, as every reader of results streams does.
    pub fn read(&mut self, path: &Path) -> Result<()> {
        let file = self.files;
        self.files += 1;
        let folded = fold_lines(
            path,
            Nightly::default,
            |part, line| part.peek(line, file),
            |part, entry| part.add(&entry.record, (file << 40) | entry.line as u64),
        )?;
        for part in folded.parts {
            for (key, series) in part.series {
                let into = self.series.entry(key).or_default();
                into.higher_is_better = series.higher_is_better;
                into.points.extend(series.points);
            }
        }
        let problems: Vec<String> = folded.problems.into_iter().map(|(_, p)| p).collect();
        crate::reader::warn(path, &problems, folded.records)
    }

    /// The series, each in run order (time, then file and line), without repeated records.
    pub fn into_sorted(self) -> BTreeMap<NightlyKey, Series> {
        let mut series = self.series;
        for s in series.values_mut() {
            s.points.sort_by_key(|p| (p.ts_ms, p.at));
            s.points.dedup_by(|b, a| a.ts_ms == b.ts_ms && a.run == b.run && a.value == b.value);
        }
        series
    }

    fn peek(&mut self, line: &RawLine<'_>, file: u64) -> bool {
        let Ok(text) = std::str::from_utf8(line.raw) else { return false };
        let Ok(peek) = serde_json::from_str::<Peek>(text) else { return false };
        if peek.schema != SCHEMA {
            return false;
        }
        if peek.kind == Kind::Measurement {
            let conditions = peek.cell.and_then(|c| c.conditions).unwrap_or_default();
            let run = peek.run;
            let metrics = peek.metrics.into_iter().map(|(name, m)| (name, m.value, m.higher_is_better, m.ci95));
            let doubtful = doubtful(&conditions, &run.profile);
            let machine = format!("{} / {}", run.host, run.cpu);
            let of = Arc::new(RunOf { id: run.id, commit: run.commit });
            let point = Point {
                ts_ms: run.ts_ms,
                at: (file << 40) | line.line as u64,
                value: 0.0,
                ci95: None,
                doubtful,
                run: of,
            };
            self.push(&peek.bench, &peek.variant, machine, point, metrics);
        }
        true
    }

    /// A record the fast path could not read (parsed whole): the same, from the record.
    fn add(&mut self, record: &Record, at: u64) {
        if record.kind != Kind::Measurement {
            return;
        }
        let conditions = record.cell.as_ref().and_then(|c| c.conditions.clone()).unwrap_or_default();
        let run = &record.run;
        let metrics = record.metrics.iter().map(|(name, m)| (name.clone(), m.value, m.higher_is_better, m.ci95));
        let doubtful = doubtful(&conditions, &run.profile);
        let machine = format!("{} / {}", run.host, run.cpu);
        let of = Arc::new(RunOf { id: run.id.clone(), commit: run.commit.clone() });
        let point = Point { ts_ms: run.ts_ms, at, value: 0.0, ci95: None, doubtful, run: of };
        self.push(&record.bench, &record.variant, machine, point, metrics);
    }

    /// One point per metric of a measurement (`point` holds what they share).
    fn push(
        &mut self,
        bench: &str,
        variant: &BTreeMap<String, serde_json::Value>,
        machine: String,
        point: Point,
        metrics: impl Iterator<Item = (String, f64, bool, Option<[f64; 2]>)>,
    ) {
        let variant = serde_json::to_string(variant).expect("variants serialize");
        for (metric, value, higher_is_better, ci95) in metrics {
            let key =
                NightlyKey { bench: bench.to_string(), variant: variant.clone(), metric, machine: machine.clone() };
            let series = self.series.entry(key).or_default();
            series.higher_is_better = higher_is_better;
            series.points.push(Point { value, ci95, ..point.clone() });
        }
    }
}

/// Whether a measurement's number is doubtful: its conditions say so, or benchhost ran as a debug build.
fn doubtful(conditions: &Conditions, profile: &str) -> bool {
    !conditions.doubts().is_empty() || profile == "debug"
}

#[cfg(test)]
#[path = "nightly_tests.rs"]
mod tests;
