//! The history of every series, folded as records arrive: what reports need of a stream of any length, in
//! memory bounded by the series, not the records.
//!
//! Per series (a rig and its variant), the newest few measurement or failure records, how many there were, and
//! the last values of each metric; per verdict series and metric, the same. "Newest" is the latest
//! `run.ts_ms`, and of two equal, the later record, as `compare` and the reports always decided. Records may
//! arrive in any order (a merged stream is not sorted).

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;

use crate::scan::each_record;
use crate::{Kind, Record, SeriesKey};

/// What a reader of the history needs kept per series.
#[derive(Debug, Clone, Copy)]
pub struct Needs {
    /// Newest records kept per series (1 for "the latest", 2 for "against the previous run").
    pub newest: usize,
    /// Last values kept per series and metric, for a trend.
    pub trend: usize,
    /// Time buckets kept per series and metric for its whole history (0: none), see [`Buckets`].
    pub buckets: usize,
}

impl Needs {
    /// The newest `n` records of each series, nothing else.
    pub fn newest(n: usize) -> Needs {
        Needs { newest: n, trend: 0, buckets: 0 }
    }
}

/// A series of records: a rig and variant, and for verdicts the metric judged.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupKey {
    /// Rig and canonical variant.
    pub series: SeriesKey,
    /// The metric of a verdict series (empty for a verdict without one); `None` for measurements and failures.
    pub verdict: Option<String>,
}

/// A record as it arrives, with its group found (off the folding thread, see [`History::arrival`]).
#[derive(Debug)]
pub struct Arrival {
    key: GroupKey,
    record: Record,
}

/// A value at a time: `(ts_ms, arrival, value)`, ordered as records are.
pub type Point = (u64, u64, f64);

/// One series' history.
#[derive(Debug, Default)]
pub struct Group {
    /// Arrival number of its first record: groups list in first-seen order.
    pub first: u64,
    /// Records of the series.
    pub count: u64,
    /// The newest records, oldest first, at most [`Needs::newest`]; each with its `(ts_ms, arrival)`.
    pub newest: Vec<((u64, u64), Record)>,
    /// Per metric, the last values, oldest first, at most [`Needs::trend`].
    pub trend: HashMap<String, Vec<Point>>,
    /// Per metric, its whole history in at most [`Needs::buckets`] time buckets.
    pub buckets: HashMap<String, Buckets>,
}

/// A metric's history in a bounded number of time buckets: each holds the lowest, the highest and the newest
/// value of its span. The span starts at an hour and doubles (merging neighbours) whenever there would be more
/// buckets than allowed, so any history, in any order, fits.
#[derive(Debug, Clone, Default)]
pub struct Buckets {
    /// Span of a bucket, ms.
    pub width_ms: u64,
    /// Bucket start (ms) → its values.
    pub spans: std::collections::BTreeMap<u64, Span>,
}

/// The values of one bucket.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// Lowest value.
    pub min: f64,
    /// Highest value.
    pub max: f64,
    /// The newest value and when: `(ts_ms, arrival, value)`.
    pub newest: Point,
    /// Values in the span.
    pub count: u64,
}

impl Span {
    fn merge(&mut self, other: &Span) {
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        if (other.newest.0, other.newest.1) > (self.newest.0, self.newest.1) {
            self.newest = other.newest;
        }
        self.count += other.count;
    }
}

impl Buckets {
    const FIRST_WIDTH_MS: u64 = 3_600_000;

    fn push(&mut self, point: Point, most: usize) {
        if self.width_ms == 0 {
            self.width_ms = Self::FIRST_WIDTH_MS;
        }
        let span = Span { min: point.2, max: point.2, newest: point, count: 1 };
        let start = point.0 - point.0 % self.width_ms;
        match self.spans.get_mut(&start) {
            Some(existing) => existing.merge(&span),
            None => {
                self.spans.insert(start, span);
            }
        }
        while self.spans.len() > most.max(1) {
            self.width_ms *= 2;
            let mut wider = std::collections::BTreeMap::new();
            for (start, span) in std::mem::take(&mut self.spans) {
                wider.entry(start - start % self.width_ms).and_modify(|s: &mut Span| s.merge(&span)).or_insert(span);
            }
            self.spans = wider;
        }
    }
}

impl Group {
    /// The newest record.
    pub fn latest(&self) -> &Record {
        &self.newest.last().expect("a group has a record").1
    }
}

/// The fold.
#[derive(Debug)]
pub struct History {
    needs: Needs,
    groups: HashMap<GroupKey, Group>,
    arrivals: u64,
}

impl History {
    /// An empty history keeping `needs`.
    pub fn new(needs: Needs) -> History {
        History { needs, groups: HashMap::new(), arrivals: 0 }
    }

    /// Readies `record` for [`History::push`]: finds its group and drops what no report reads (the per-sample
    /// statistics, a failure's log and salvaged samples), so a long history holds little per record. Pure:
    /// run it where the record was parsed.
    pub fn arrival(mut record: Record) -> Arrival {
        if let Some(cell) = &mut record.cell {
            cell.stats.clear();
        }
        if let Some(failure) = &mut record.failure {
            failure.log = None;
            failure.salvaged.clear();
        }
        let verdict = (record.kind == Kind::Verdict)
            .then(|| record.verdict.as_ref().and_then(|v| v.metric.clone()).unwrap_or_default());
        Arrival { key: GroupKey { series: crate::series(&record), verdict }, record }
    }

    /// Adds the next record.
    pub fn push(&mut self, arrival: Arrival) {
        let Arrival { key, record } = arrival;
        let at = (record.run.ts_ms, self.arrivals);
        self.arrivals += 1;
        let group = self.groups.entry(key).or_insert_with(|| Group { first: at.1, ..Group::default() });
        group.count += 1;
        if record.kind == Kind::Measurement {
            for (name, metric) in &record.metrics {
                let point = (at.0, at.1, metric.value);
                if self.needs.trend > 0 {
                    let points = group.trend.entry(name.clone()).or_default();
                    keep_newest(points, point, |p| (p.0, p.1), self.needs.trend);
                }
                if self.needs.buckets > 0 {
                    group.buckets.entry(name.clone()).or_default().push(point, self.needs.buckets);
                }
            }
        }
        keep_newest(&mut group.newest, (at, record), |(at, _)| *at, self.needs.newest.max(1));
    }

    /// Folds every record of the stream at `path`, as [`reader::records`](crate::reader::records) reads it:
    /// each skipped line is reported on stderr, and a stream without one readable record is an error.
    pub fn read(&mut self, path: &Path) -> Result<()> {
        each_record(
            path,
            |entry| History::arrival(entry.record),
            |arrival| {
                self.push(arrival);
                Ok(())
            },
        )
    }

    /// The history of `records`, as if read from a stream in this order.
    pub fn of(records: &[Record], needs: Needs) -> History {
        let mut history = History::new(needs);
        for record in records {
            history.push(History::arrival(record.clone()));
        }
        history
    }

    /// Records folded.
    pub fn records(&self) -> u64 {
        self.arrivals
    }

    /// The groups in first-seen order.
    pub fn groups(&self) -> Vec<(&GroupKey, &Group)> {
        let mut groups: Vec<_> = self.groups.iter().collect();
        groups.sort_by_key(|(_, g)| g.first);
        groups
    }

    /// Every record kept, in arrival order: the newest of each series, a stream that every report of the
    /// newest runs reads as it would read the whole one.
    pub fn into_records(self) -> Vec<Record> {
        let mut kept: Vec<((u64, u64), Record)> = self.groups.into_values().flat_map(|g| g.newest).collect();
        kept.sort_by_key(|((_, arrival), _)| *arrival);
        kept.into_iter().map(|(_, r)| r).collect()
    }
}

/// Inserts `item` into `items` (oldest first by `at`) and keeps the newest `keep`.
fn keep_newest<T>(items: &mut Vec<T>, item: T, at: impl Fn(&T) -> (u64, u64), keep: usize) {
    let when = at(&item);
    let place = items.partition_point(|i| at(i) < when);
    if items.len() == keep && place == 0 {
        return;
    }
    items.insert(place, item);
    if items.len() > keep {
        items.remove(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MetricValue, RunInfo};

    fn record(ts: u64, rows: i64, value: f64) -> Record {
        let m = MetricValue { value, unit: "ns".into(), higher_is_better: false, ci95: None, n: None };
        let variant = [("rows".to_string(), rows.into())].into();
        Record::measurement_for_tests("wal", RunInfo::for_tests(ts, Some("r")), variant, [("t".into(), m)].into())
    }

    #[test]
    fn the_newest_records_win_whatever_the_order_and_a_tie_goes_to_the_later_one() {
        let mut history = History::new(Needs { newest: 2, trend: 3, buckets: 0 });
        for (ts, value) in [(5, 5.0), (1, 1.0), (9, 9.0), (3, 3.0), (9, 9.5), (2, 2.0)] {
            history.push(History::arrival(record(ts, 10, value)));
        }
        history.push(History::arrival(record(4, 20, 4.0)));
        let groups = history.groups();
        assert_eq!(groups.len(), 2);
        let (_, wal10) = groups[0];
        assert_eq!(wal10.count, 6);
        let values = |g: &Group| g.newest.iter().map(|(_, r)| r.metrics["t"].value).collect::<Vec<_>>();
        assert_eq!(values(wal10), [9.0, 9.5], "ts 9 twice: the later arrival is the newest");
        assert_eq!(wal10.trend["t"].iter().map(|p| p.2).collect::<Vec<_>>(), [5.0, 9.0, 9.5]);
        let records: Vec<f64> = history.into_records().iter().map(|r| r.metrics["t"].value).collect();
        assert_eq!(records, [9.0, 9.5, 4.0], "kept records in arrival order");
    }

    #[test]
    fn verdicts_are_their_own_series_per_metric_and_logs_are_not_kept() {
        let mut failed = record(1, 10, 1.0);
        failed.kind = Kind::Failure;
        failed.failure = Some(crate::Failure {
            cause: crate::Cause::Panic,
            phase: None,
            message: "boom".into(),
            signal: None,
            exit_code: None,
            stderr_tail: vec!["last".into()],
            log: Some("x".repeat(1 << 20)),
            salvaged: vec![serde_json::json!({"ns": 1})],
        });
        let arrival = History::arrival(failed);
        let failure = arrival.record.failure.as_ref().unwrap();
        assert_eq!((failure.log.as_deref(), failure.salvaged.len(), failure.stderr_tail.len()), (None, 0, 1));
        assert_eq!(arrival.key.verdict, None);
        let mut verdict = record(2, 10, 1.0);
        verdict.kind = Kind::Verdict;
        assert_eq!(History::arrival(verdict).key.verdict.as_deref(), Some(""));
    }
}

#[cfg(test)]
mod bucket_tests {
    use super::*;

    #[test]
    fn a_long_history_in_any_order_fits_its_buckets_and_keeps_every_extreme() {
        let mut buckets = Buckets::default();
        let days: Vec<u64> = (0..365).map(|d| (d * 7919) % 365).collect();
        for (arrival, day) in days.iter().enumerate() {
            let value = if *day == 200 { 1000.0 } else { *day as f64 };
            buckets.push((day * 86_400_000, arrival as u64, value), 64);
        }
        assert!(buckets.spans.len() <= 64 && buckets.spans.len() > 32, "{}", buckets.spans.len());
        assert_eq!(buckets.spans.values().map(|s| s.count).sum::<u64>(), 365);
        assert_eq!(buckets.spans.values().map(|s| s.max).fold(0.0, f64::max), 1000.0, "the spike survives");
        let last = buckets.spans.values().last().unwrap();
        assert_eq!(last.newest.2, 364.0, "the newest bucket ends with the newest value");
    }
}
