//! The history of every series, folded as records arrive: what reports need of a stream of any length, in
//! memory bounded by the series, not the records.
//!
//! Per series (a rig and its variant), the newest few measurement or failure records, how many there were, and
//! the last values of each metric; per verdict series and metric, the same. "Newest" is the latest
//! `run.ts_ms`, and of two equal, the later record, as `compare` and the reports always decided. Records may
//! arrive in any order (a merged stream is not sorted). Acknowledgements belong to no series' newest: every one
//! is kept apart, in arrival order (a stream holds few).

use std::collections::HashMap;

pub use crate::buckets::{Buckets, Point, Span};

#[path = "history_read.rs"]
mod read;
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
    /// While a stream is read: the newest lines of the series, as text with their line numbers, parsed whole
    /// only once the stream is read (see [`History::read`]).
    pending: Vec<((u64, u64), (usize, String))>,
}

impl Group {
    /// The newest record.
    pub fn latest(&self) -> &Record {
        &self.newest.last().expect("a group has a record").1
    }

    fn merge(&mut self, other: Group, needs: Needs) {
        self.first = self.first.min(other.first);
        self.count += other.count;
        for item in other.newest {
            keep_newest(&mut self.newest, item, |(at, _)| *at, needs.newest.max(1));
        }
        for item in other.pending {
            keep_newest(&mut self.pending, item, |(at, _)| *at, needs.newest.max(1));
        }
        for (name, points) in other.trend {
            let mine = self.trend.entry(name).or_default();
            for point in points {
                keep_newest(mine, point, |p| (p.0, p.1), needs.trend);
            }
        }
        for (name, buckets) in other.buckets {
            self.buckets.entry(name).or_default().merge(buckets, needs.buckets);
        }
    }
}

/// The fold.
#[derive(Debug)]
pub struct History {
    needs: Needs,
    groups: HashMap<GroupKey, Group>,
    /// Records folded.
    records: u64,
    /// The arrival number of the next [`History::push`].
    next: u64,
    /// Streams read (an arrival of a read is the stream's number and the line).
    files: u64,
    /// Every acknowledgement record, with its `(ts_ms, arrival)`.
    acknowledgements: Vec<((u64, u64), Record)>,
}

impl History {
    /// An empty history keeping `needs`.
    pub fn new(needs: Needs) -> History {
        History { needs, groups: HashMap::new(), records: 0, next: 0, files: 0, acknowledgements: Vec::new() }
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
        self.next += 1;
        self.push_at(arrival, self.next);
    }

    /// Adds a record that arrived `nth` (of two records of one time, the later arrival is the newer).
    fn push_at(&mut self, arrival: Arrival, nth: u64) {
        let Arrival { key, record } = arrival;
        let at = (record.run.ts_ms, nth);
        self.records += 1;
        if record.kind == Kind::Acknowledgement {
            self.acknowledgements.push((at, record));
            return;
        }
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
                    group.buckets.entry(name.clone()).or_default().push(point, metric.ci95, self.needs.buckets);
                }
            }
        }
        keep_newest(&mut group.newest, (at, record), |(at, _)| *at, self.needs.newest.max(1));
    }

    /// Adds the groups of `other`, a history of other records with the same needs.
    pub fn merge(&mut self, other: History) {
        self.records += other.records;
        self.acknowledgements.extend(other.acknowledgements);
        for (key, theirs) in other.groups {
            match self.groups.entry(key) {
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(theirs);
                }
                std::collections::hash_map::Entry::Occupied(mut mine) => mine.get_mut().merge(theirs, self.needs),
            }
        }
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
        self.records
    }

    /// The groups in first-seen order.
    pub fn groups(&self) -> Vec<(&GroupKey, &Group)> {
        let mut groups: Vec<_> = self.groups.iter().collect();
        groups.sort_by_key(|(_, g)| g.first);
        groups
    }

    /// Every acknowledgement record read, in arrival order.
    pub fn acknowledgements(&self) -> Vec<&Record> {
        let mut acknowledgements: Vec<&((u64, u64), Record)> = self.acknowledgements.iter().collect();
        acknowledgements.sort_by_key(|((_, arrival), _)| *arrival);
        acknowledgements.into_iter().map(|(_, r)| r).collect()
    }

    /// Every record kept, in arrival order: the newest of each series and every acknowledgement, a stream that
    /// every report of the newest runs reads as it would read the whole one.
    pub fn into_records(self) -> Vec<Record> {
        let mut kept: Vec<((u64, u64), Record)> = self.groups.into_values().flat_map(|g| g.newest).collect();
        kept.extend(self.acknowledgements);
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

    fn record(ts: u64, rows: i64, value: f64) -> Record {
        Record::point_for_tests(ts, rows, value)
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
    fn records_measured_another_way_are_another_series_whether_read_whole_or_peeked() {
        // regression: a duel's 50 ms windows were the previous record of a plain series of 250 ms runs, and the
        // next plain run read +341% `regressed` on identical code.
        let plain = record(1, 10, 100.0);
        let with = |method: Option<&str>, rounds: Option<u32>, ts: u64| {
            let mut r = record(ts, 10, 25.0);
            r.cell = Some(crate::CellInfo { method: method.map(str::to_string), rounds, ..Default::default() });
            r
        };
        let records = [
            plain.clone(),
            with(Some("alternate_windows quick"), Some(10), 2),
            with(None, Some(10), 3),
            with(None, None, 4),
        ];
        let methods: Vec<String> = records.iter().map(crate::method).collect();
        assert_eq!(methods, ["", "alternate_windows quick", "rounds", ""], "an older record with rounds: `rounds`");
        assert_eq!(crate::series(&records[3]), crate::series(&plain), "a plain record with a cell is still plain");
        let history = History::of(&records, Needs::newest(2));
        let counts: Vec<(String, u64)> = history.groups().iter().map(|(k, g)| (k.series.1.clone(), g.count)).collect();
        assert_eq!(
            counts,
            [
                (r#"{"rows":10}"#.to_string(), 2),
                (r#"{"rows":10} alternate_windows quick"#.to_string(), 1),
                (r#"{"rows":10} rounds"#.to_string(), 1)
            ]
        );
        // The same from a stream, read by the fast path that peeks at lines, and by the nightly history.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let text: String = records.iter().map(|r| serde_json::to_string(r).unwrap() + "\n").collect();
        std::fs::write(&path, text).unwrap();
        let mut read = History::new(Needs::newest(2));
        read.read(&path).unwrap();
        let read_counts: Vec<(String, u64)> =
            read.groups().iter().map(|(k, g)| (k.series.1.clone(), g.count)).collect();
        assert_eq!(read_counts, counts);
        let mut nightly = crate::nightly::Nightly::default();
        nightly.read(&path).unwrap();
        let keys: Vec<(String, String)> = nightly.into_sorted().into_keys().map(|k| (k.variant, k.method)).collect();
        assert_eq!(keys.len(), 3, "{keys:?}");
        assert!(keys.iter().all(|(variant, _)| variant == r#"{"rows":10}"#), "the variant stays JSON: {keys:?}");
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

    #[test]
    fn histories_of_parts_merged_are_the_history_of_the_whole() {
        let records: Vec<Record> = (0..60u64).map(|i| record((i * 37) % 60, (i % 3) as i64, i as f64)).collect();
        let needs = Needs { newest: 2, trend: 4, buckets: 8 };
        let whole = History::of(&records, needs);
        let mut merged = History::new(needs);
        for part in records.chunks(17) {
            let mut history = History::new(needs);
            for r in part {
                history.next = records.iter().position(|x| x == r).unwrap() as u64;
                history.push(History::arrival(r.clone()));
            }
            merged.merge(history);
        }
        let shape = |h: &History| {
            h.groups()
                .iter()
                .map(|(k, g)| {
                    let newest: Vec<f64> = g.newest.iter().map(|(_, r)| r.metrics["t"].value).collect();
                    let trend: Vec<f64> = g.trend["t"].iter().map(|p| p.2).collect();
                    (k.series.1.clone(), g.first, g.count, newest, trend, g.buckets["t"].spans.len())
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(shape(&merged), shape(&whole));
        assert_eq!(merged.records(), 60);
    }
}
