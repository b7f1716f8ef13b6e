//! Reading a stream into a [`History`]: every worker folds a part, and of each line reads only what places
//! it; the text of the newest lines of each series is kept and parsed whole once the stream is read.

use std::path::Path;

use anyhow::Result;

use super::{Group, GroupKey, History, keep_newest};
use crate::Kind;
use crate::fold::fold_lines;
use crate::lines::RawLine;
use crate::nightly::Nightly;
use crate::peek::Peek;
use crate::scan::Scanned;

impl History {
    /// Folds every record of the stream at `path`, as [`reader::records`](crate::reader::records) reads it:
    /// each skipped line is reported on stderr, and a stream without one readable record is an error.
    ///
    /// The workers fold parts of the stream, merged here (see [`fold`](crate::fold)). Of each line they read
    /// only what places it (bench, kind, time, variant, metric values, a verdict's metric) and keep the text
    /// of the newest lines of each series; those alone are parsed whole at the end. A kept line that is not a
    /// valid record is reported then, and its series shows its other kept records (or is left out when it has
    /// none); a line that is never kept is not checked beyond what places it (`verify` checks every one).
    pub fn read(&mut self, path: &Path) -> Result<()> {
        self.read_beside(path, None)
    }

    /// [`History::read`], and every value of the stream into `nightly` in the same pass (each line parsed
    /// once): what a report that also shows change points reads.
    pub fn read_beside(&mut self, path: &Path, mut nightly: Option<&mut Nightly>) -> Result<()> {
        let (file, needs) = (self.files, self.needs);
        self.files += 1;
        let nightly_file = nightly.as_mut().map(|n| n.next_file());
        let folded = fold_lines(
            path,
            || (History::new(needs), nightly_file.map(|_| Nightly::default())),
            |(history, nightly), line| {
                let Some((peek, text)) = Peek::of(line) else { return false };
                if peek.kind == Kind::Acknowledgement {
                    return false; // parsed whole: every one is kept
                }
                // Read once for both: what a history of a million records does for every line.
                let (json, method) = (peek.variant_json(), peek.method());
                if let (Some(nightly), Some(of)) = (nightly.as_mut(), nightly_file) {
                    nightly.place(&peek, (&json, &method), (of << 40) | line.line as u64);
                }
                let variant = crate::series_variant(json, &method);
                history.place(peek, variant, line, text, file);
                true
            },
            |(history, nightly), entry| {
                if let (Some(nightly), Some(of)) = (nightly.as_mut(), nightly_file) {
                    nightly.add(&entry.record, (of << 40) | entry.line as u64);
                }
                history.push_at(History::arrival(entry.record), (file << 40) | entry.line as u64)
            },
        )?;
        let mut problems = folded.problems;
        let mut records = folded.records as u64;
        for (part, values) in folded.parts {
            self.merge(part);
            if let (Some(nightly), Some(values)) = (nightly.as_mut(), values) {
                nightly.absorb(values);
            }
        }
        records -= self.parse_pending(&path.display().to_string(), &mut problems);
        problems.sort_by_key(|(line, _)| *line);
        let problems: Vec<String> = problems.into_iter().map(|(_, p)| p).collect();
        crate::reader::warn(path, &problems, records as usize)
    }

    /// Places the record on `line` from its peek, keeping its text if it is among the newest of its series.
    fn place(&mut self, peek: Peek<'_>, variant: String, line: &RawLine<'_>, text: &str, file: u64) {
        let verdict = (peek.kind == Kind::Verdict).then(|| peek.verdict.and_then(|v| v.metric).unwrap_or_default());
        let key = GroupKey { series: (peek.bench.into_owned(), variant), verdict };
        let at = (peek.run.ts_ms, (file << 40) | line.line as u64);
        self.records += 1;
        let needs = self.needs;
        let group = self.groups.entry(key).or_insert_with(|| Group { first: at.1, ..Group::default() });
        group.count += 1;
        if peek.kind == Kind::Measurement {
            for (name, metric) in peek.metrics {
                let point = (at.0, at.1, metric.value);
                if needs.trend > 0 {
                    keep_newest(group.trend.entry(name.to_string()).or_default(), point, |p| (p.0, p.1), needs.trend);
                }
                if needs.buckets > 0 {
                    group.buckets.entry(name.into_owned()).or_default().push(point, metric.ci95, needs.buckets);
                }
            }
        }
        let keep = needs.newest.max(1);
        if group.pending.len() < keep || group.pending[0].0 < at {
            keep_newest(&mut group.pending, (at, (line.line, text.to_string())), |(at, _)| *at, keep);
        }
    }

    /// Parses the kept lines of every series whole; a line that is not a valid record is reported with its
    /// line and dropped. Returns how many were dropped.
    fn parse_pending(&mut self, name: &str, problems: &mut Vec<(usize, String)>) -> u64 {
        let keep = self.needs.newest.max(1);
        let mut dropped = 0;
        self.groups.retain(|_, group| {
            for (at, (line, text)) in std::mem::take(&mut group.pending) {
                let mut parsed = Vec::new();
                let raw = RawLine { line, offset: 0, raw: text.as_bytes(), torn: false };
                let _ = crate::lines::parse_line(name, &raw, &|entry, _| entry, &mut parsed);
                match parsed.pop() {
                    Some(Scanned::Record(entry)) => {
                        let record = History::arrival(entry.record).record;
                        keep_newest(&mut group.newest, (at, record), |(at, _)| *at, keep);
                    }
                    Some(Scanned::Problem(problem)) => {
                        problems.push((line, problem));
                        group.count -= 1;
                        dropped += 1;
                    }
                    None => {}
                }
            }
            !group.newest.is_empty()
        });
        self.records -= dropped;
        dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Record;
    use crate::history::Needs;

    fn record(ts: u64, rows: i64, value: f64) -> Record {
        Record::point_for_tests(ts, rows, value)
    }

    /// A group as the tests compare it: variant, count, newest values, trend and bucket count.
    type Shape = (String, u64, Vec<f64>, Vec<f64>, usize);

    fn shape(h: &History) -> Vec<Shape> {
        h.groups()
            .iter()
            .map(|(k, g)| {
                let newest = g.newest.iter().map(|(_, r)| r.metrics["t"].value).collect();
                let trend = g.trend["t"].iter().map(|p| p.2).collect();
                (k.series.1.clone(), g.count, newest, trend, g.buckets["t"].spans.len())
            })
            .collect()
    }

    #[test]
    fn a_stream_read_is_the_history_of_its_records() {
        let records: Vec<Record> = (0..90u64).map(|i| record((i * 37) % 90, (i % 4) as i64, i as f64)).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, records.iter().map(|r| r.to_line() + "\n").collect::<String>()).unwrap();
        let needs = Needs { newest: 2, trend: 5, buckets: 8 };
        let mut read = History::new(needs);
        read.read(&path).unwrap();
        let whole = History::of(&records, needs);
        assert_eq!(shape(&read), shape(&whole));
        assert_eq!(read.records(), 90);
        let kept = |h: History| h.into_records().iter().map(|r| r.to_line()).collect::<Vec<_>>();
        assert_eq!(kept(read), kept(whole), "the kept records, whole, in arrival order");
    }

    #[test]
    fn a_kept_line_that_is_no_valid_record_is_named_and_its_series_keeps_the_others() {
        // A null where a number belongs passes what places a record, and fails the whole parse.
        let lines = [record(1, 1, 1.0), record(2, 1, 2.0), record(3, 1, 3.0)].map(|r| r.to_line());
        let broken = lines[2].replace("\"value\":3.0", "\"value\":3.0,\"ci95\":[null,null]");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, format!("{}\n{}\n{broken}\n", lines[0], lines[1])).unwrap();
        let mut history = History::new(Needs::newest(2));
        history.read(&path).unwrap();
        let (_, group) = history.groups()[0];
        assert_eq!(group.count, 2, "the invalid record is not counted");
        assert_eq!(group.latest().metrics["t"].value, 2.0, "the newest valid record is the latest");
        assert_eq!(history.records(), 2);
    }
}
