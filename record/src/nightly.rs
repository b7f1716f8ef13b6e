//! Every measured value of every series, in run order: the nightly history `benchhost trend` reads for change
//! points. Unlike [`History`](crate::history::History), which keeps the newest records, this keeps each
//! measurement's value, its own CI95, whether it ran in doubtful conditions, and its run's id and commit, so
//! it grows with the records: 40 bytes per metric of a record, and the names of each run once.
//!
//! A series here is a bench, its variant, a metric and the machine (`run.host` and `run.cpu`): a history that
//! moves to another machine is two series, because a machine change is a step that is not the code's.

use std::collections::{BTreeMap, HashMap};
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
    /// The standard error of ln(value) from the record's own CI95 (its log width over 2 x 1.96); 0 without one.
    pub log_se: f32,
    /// Ran in conditions that make its number doubtful (see [`Conditions::doubts`]) or from a debug build.
    pub doubtful: bool,
    /// Its run: one allocation per run (and reading thread), shared by every point of its records.
    pub run: Arc<RunOf>,
}

/// What names the run of a point.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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
    /// Per bench, variant and machine (`bench\0variant\0machine`), its metrics' series: a record finds its own
    /// without allocating a key (1M records hold ~5M values).
    groups: HashMap<Box<str>, Vec<(Box<str>, Series)>>,
    /// Each run once.
    runs: HashMap<RunOf, Arc<RunOf>>,
    /// The key being looked up.
    key: String,
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
            for (key, metrics) in part.groups {
                let into = self.groups.entry(key).or_default();
                for (metric, series) in metrics {
                    let at = series_of(into, &metric);
                    at.higher_is_better = series.higher_is_better;
                    at.points.extend(series.points);
                }
            }
        }
        let problems: Vec<String> = folded.problems.into_iter().map(|(_, p)| p).collect();
        crate::reader::warn(path, &problems, folded.records)
    }

    /// The series, each in run order (time, then file and line), without repeated records.
    pub fn into_sorted(self) -> BTreeMap<NightlyKey, Series> {
        let mut sorted = BTreeMap::new();
        for (key, metrics) in self.groups {
            let mut parts = key.split('\0').map(str::to_string);
            let (bench, variant, machine) =
                (parts.next().unwrap_or_default(), parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
            for (metric, mut series) in metrics {
                series.points.sort_by_key(|p| (p.ts_ms, p.at));
                series.points.dedup_by(|b, a| a.ts_ms == b.ts_ms && a.run == b.run && a.value == b.value);
                let (bench, variant, machine) = (bench.clone(), variant.clone(), machine.clone());
                sorted.insert(NightlyKey { bench, variant, metric: metric.into(), machine }, series);
            }
        }
        sorted
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
            let run_of = self.run(RunOf { id: run.id, commit: run.commit });
            let at = (file << 40) | line.line as u64;
            let point = Point { ts_ms: run.ts_ms, at, value: 0.0, log_se: 0.0, doubtful, run: run_of };
            self.push(&peek.bench, &peek.variant, &machine, point, metrics);
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
        let run_of = self.run(RunOf { id: run.id.clone(), commit: run.commit.clone() });
        let point = Point { ts_ms: run.ts_ms, at, value: 0.0, log_se: 0.0, doubtful, run: run_of };
        self.push(&record.bench, &record.variant, &machine, point, metrics);
    }

    /// The run's one shared allocation.
    fn run(&mut self, run: RunOf) -> Arc<RunOf> {
        match self.runs.get(&run) {
            Some(shared) => shared.clone(),
            None => self.runs.entry(run.clone()).or_insert_with(|| Arc::new(run)).clone(),
        }
    }

    /// One point per metric of a measurement (`point` holds what they share).
    fn push(
        &mut self,
        bench: &str,
        variant: &BTreeMap<String, serde_json::Value>,
        machine: &str,
        point: Point,
        metrics: impl Iterator<Item = (String, f64, bool, Option<[f64; 2]>)>,
    ) {
        self.key.clear();
        self.key.push_str(bench);
        self.key.push('\0');
        self.key.push_str(&serde_json::to_string(variant).expect("variants serialize"));
        self.key.push('\0');
        self.key.push_str(machine);
        if !self.groups.contains_key(self.key.as_str()) {
            self.groups.insert(self.key.as_str().into(), Vec::new());
        }
        let group = self.groups.get_mut(self.key.as_str()).expect("inserted above");
        for (metric, value, higher_is_better, ci95) in metrics {
            let series = series_of(group, &metric);
            series.higher_is_better = higher_is_better;
            let log_se =
                ci95.filter(|[lo, hi]| *lo > 0.0 && hi > lo).map_or(0.0, |[lo, hi]| (hi.ln() - lo.ln()) / (2.0 * 1.96));
            series.points.push(Point { value, log_se: log_se as f32, ..point.clone() });
        }
    }
}

/// The series of `metric` among a group's (a record has a handful of metrics: a scan beats a map).
fn series_of<'a>(metrics: &'a mut Vec<(Box<str>, Series)>, metric: &str) -> &'a mut Series {
    let at = match metrics.iter().position(|(name, _)| &**name == metric) {
        Some(at) => at,
        None => {
            metrics.push((metric.into(), Series::default()));
            metrics.len() - 1
        }
    };
    &mut metrics[at].1
}

/// Whether a measurement's number is doubtful: its conditions say so, or benchhost ran as a debug build.
fn doubtful(conditions: &Conditions, profile: &str) -> bool {
    !conditions.doubts().is_empty() || profile == "debug"
}

#[cfg(test)]
#[path = "nightly_tests.rs"]
mod tests;
