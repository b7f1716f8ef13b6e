//! Every measured value of every series, in run order: the nightly history `benchhost trend` reads for change
//! points. Unlike [`History`](crate::history::History), which keeps the newest records, this keeps each
//! measurement's value, its own CI95, whether it ran in doubtful conditions, and its run's id and commit, so
//! it grows with the records: 40 bytes per metric of a record, and the names of each run once.
//!
//! A series here is a bench, its variant, a metric and the machine (`run.host` and `run.cpu`): a history that
//! moves to another machine is two series, because a machine change is a step that is not the code's.
//!
//! Acknowledgements (`benchhost accept`) are kept whole beside the series: they mark where a step was accepted.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;

use crate::fold::fold_lines;
use crate::peek::Peek;
use crate::{Conditions, Kind, Record};

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
    /// How its records were measured (`crate::method`): a duel's windows or a quick run are not a night of
    /// the plain series. Empty for a plain iterations-style cell.
    pub method: String,
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

/// Series by bench, variant and machine, then by metric.
type Groups = HashMap<Box<str>, Vec<(Box<str>, Series)>>;

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
    /// Per bench, variant, machine and method (`bench\0variant\0machine\0method`), its metrics' series: a record finds its own
    /// without allocating a key (1M records hold ~5M values).
    groups: Groups,
    /// The groups other workers read, kept as they are until [`Nightly::into_sorted`] joins them: joined as
    /// they came, each series' vector would grow by doubling once more, and the peak with it.
    absorbed: Vec<Groups>,
    /// Each run once.
    runs: HashMap<RunOf, Arc<RunOf>>,
    /// The key being looked up.
    key: String,
    /// The run of the record before (a run's records come together): found without a lookup.
    last_run: Option<Arc<RunOf>>,
    files: u64,
    /// Every acknowledgement record, with where it came from (file << 40 | line).
    acknowledgements: Vec<(u64, Record)>,
}

impl Nightly {
    /// Adds every measurement of the stream at `path`; skipped lines are reported on stderr, and a stream
    /// without one readable record is an error, as every reader of results streams does.
    pub fn read(&mut self, path: &Path) -> Result<()> {
        let file = self.next_file();
        let folded = fold_lines(
            path,
            Nightly::default,
            |part, line| {
                let Some((peek, _)) = Peek::of(line) else { return false };
                if peek.kind == Kind::Acknowledgement {
                    return false; // parsed whole, and kept
                }
                part.place(&peek, (&peek.variant_json(), &peek.method()), (file << 40) | line.line as u64);
                true
            },
            |part, entry| part.add(&entry.record, (file << 40) | entry.line as u64),
        )?;
        for part in folded.parts {
            self.absorb(part);
        }
        let problems: Vec<String> = folded.problems.into_iter().map(|(_, p)| p).collect();
        crate::reader::warn(path, &problems, folded.records)
    }

    /// The number of the next stream read, which orders its records after those of the streams before.
    pub(crate) fn next_file(&mut self) -> u64 {
        self.files += 1;
        self.files - 1
    }

    /// Adds the series of `part`, read from the same stream by another worker.
    pub(crate) fn absorb(&mut self, part: Nightly) {
        self.absorbed.push(part.groups);
        self.absorbed.extend(part.absorbed);
        self.acknowledgements.extend(part.acknowledgements);
    }

    /// Every acknowledgement read, in stream order (file, then line).
    pub fn acknowledgements(&self) -> Vec<&Record> {
        let mut acknowledgements: Vec<&(u64, Record)> = self.acknowledgements.iter().collect();
        acknowledgements.sort_by_key(|(at, _)| *at);
        acknowledgements.into_iter().map(|(_, r)| r).collect()
    }

    /// The series, each in run order (time, then file and line), without repeated records.
    pub fn into_sorted(self) -> BTreeMap<NightlyKey, Series> {
        let mut sorted = BTreeMap::new();
        let mut all = self.absorbed;
        all.push(self.groups);
        for i in 0..all.len() {
            for (key, metrics) in std::mem::take(&mut all[i]) {
                let mut parts = vec![metrics];
                parts.extend(all[i + 1..].iter_mut().filter_map(|later| later.remove(&key)));
                let mut names = key.split('\0').map(str::to_string);
                let mut next = || names.next().unwrap_or_default();
                let (bench, variant, machine, method) = (next(), next(), next(), next());
                for (metric, series) in joined(parts) {
                    let (bench, variant, machine, method) =
                        (bench.clone(), variant.clone(), machine.clone(), method.clone());
                    sorted.insert(NightlyKey { bench, variant, metric: metric.into(), machine, method }, series);
                }
            }
        }
        sorted
    }

    /// Adds the values of a peeked line at `at` (its file and line), `variant` its canonical JSON.
    pub(crate) fn place(&mut self, peek: &Peek<'_>, (variant, method): (&str, &str), at: u64) {
        if peek.kind != Kind::Measurement {
            return;
        }
        let (run, conditions) = (&peek.run, peek.cell.as_ref().and_then(|c| c.conditions.as_ref()));
        let point = self.point(run.ts_ms, at, (run.id.as_deref(), run.commit.as_deref()), conditions, &run.profile);
        let metrics = peek.metrics.iter().map(|(name, m)| (&**name, m.value, m.higher_is_better, m.ci95));
        self.push(&peek.bench, (variant, method), (&run.host, &run.cpu), point, metrics);
    }

    /// A record the fast path could not read (parsed whole): the same, from the record.
    pub(crate) fn add(&mut self, record: &Record, at: u64) {
        if record.kind == Kind::Acknowledgement {
            self.acknowledgements.push((at, record.clone()));
        }
        if record.kind != Kind::Measurement {
            return;
        }
        let (run, conditions) = (&record.run, record.cell.as_ref().and_then(|c| c.conditions.as_ref()));
        let point = self.point(run.ts_ms, at, (run.id.as_deref(), run.commit.as_deref()), conditions, &run.profile);
        let metrics = record.metrics.iter().map(|(name, m)| (name.as_str(), m.value, m.higher_is_better, m.ci95));
        let variant = serde_json::to_string(&record.variant).expect("variants serialize");
        self.push(&record.bench, (&variant, &crate::method(record)), (&run.host, &run.cpu), point, metrics);
    }

    /// What the points of one record share: time, place, run, and whether its conditions or build (`profile`)
    /// make its numbers doubtful.
    fn point(
        &mut self,
        ts_ms: u64,
        at: u64,
        (id, commit): (Option<&str>, Option<&str>),
        conditions: Option<&Conditions>,
        profile: &str,
    ) -> Point {
        let doubtful = conditions.is_some_and(|c| !c.doubts().is_empty()) || profile == "debug";
        Point { ts_ms, at, value: 0.0, log_se: 0.0, doubtful, run: self.run(id, commit) }
    }

    /// The run's one shared allocation.
    fn run(&mut self, id: Option<&str>, commit: Option<&str>) -> Arc<RunOf> {
        if let Some(last) = &self.last_run
            && last.id.as_deref() == id
            && last.commit.as_deref() == commit
        {
            return last.clone();
        }
        let run = RunOf { id: id.map(str::to_string), commit: commit.map(str::to_string) };
        let shared = match self.runs.get(&run) {
            Some(shared) => shared.clone(),
            None => self.runs.entry(run.clone()).or_insert_with(|| Arc::new(run)).clone(),
        };
        self.last_run = Some(shared.clone());
        shared
    }

    /// One point per metric of a measurement (`point` holds what they share), on `machine` (host, cpu).
    fn push<'m>(
        &mut self,
        bench: &str,
        (variant, method): (&str, &str),
        machine: (&str, &str),
        point: Point,
        metrics: impl Iterator<Item = (&'m str, f64, bool, Option<[f64; 2]>)>,
    ) {
        self.key.clear();
        for part in [bench, "\0", variant, "\0", machine.0, " / ", machine.1, "\0", method] {
            self.key.push_str(part);
        }
        if !self.groups.contains_key(self.key.as_str()) {
            self.groups.insert(self.key.as_str().into(), Vec::new());
        }
        let group = self.groups.get_mut(self.key.as_str()).expect("inserted above");
        for (metric, value, higher_is_better, ci95) in metrics {
            let series = series_of(group, metric);
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

/// The series of one bench, variant and machine as the workers read them, joined: each series' points in one
/// vector, in run order, a record read twice once.
fn joined(parts: Vec<Vec<(Box<str>, Series)>>) -> Vec<(Box<str>, Series)> {
    let mut by_metric: Vec<(Box<str>, bool, Vec<Vec<Point>>)> = Vec::new();
    for (metric, series) in parts.into_iter().flatten() {
        match by_metric.iter_mut().find(|(name, ..)| *name == metric) {
            Some((_, _, chunks)) => chunks.push(series.points),
            None => by_metric.push((metric, series.higher_is_better, vec![series.points])),
        }
    }
    // Into the largest chunk, grown and then shrunk in place where the allocator can: a fresh vector per series
    // would come from another thread's arena than the chunks freed, and 1M records peaked ~100 MB higher.
    let join = |(metric, higher_is_better, mut chunks): (Box<str>, bool, Vec<Vec<Point>>)| {
        let largest = (0..chunks.len()).max_by_key(|&i| chunks[i].len()).expect("a series has a chunk");
        let mut points = chunks.swap_remove(largest);
        points.reserve_exact(chunks.iter().map(Vec::len).sum());
        chunks.into_iter().for_each(|chunk| points.extend(chunk));
        points.sort_by_key(|p| (p.ts_ms, p.at));
        points.dedup_by(|b, a| a.ts_ms == b.ts_ms && a.run == b.run && a.value == b.value);
        points.shrink_to_fit();
        (metric, Series { higher_is_better, points })
    };
    by_metric.into_iter().map(join).collect()
}

#[cfg(test)]
#[path = "nightly_tests.rs"]
mod tests;
