//! `benchhost merge OUT IN...`: the slices of one logical run (one per machine, `--shard I/N`, same
//! `--run-id`) and any other streams, combined into one stream with one record per identity.
//!
//! A record's identity is its run id, rig, kind, variant and metric names (a verdict is per metric, a
//! measurement per cell). Two records with one identity are duplicates: identical ones (the same slice
//! uploaded twice) are dropped and counted; different ones are a conflict, reported with both places, and the
//! first is kept. Records already in OUT take part, so merging twice adds nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::Record;
use crate::reader;

/// What a merge did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Merged {
    /// Records in the result, in first-seen order.
    pub kept: usize,
    /// Of those, the records appended to OUT (new to it).
    pub added: usize,
    /// Lines of the inputs (or OUT) that could not be read, one message each.
    pub unreadable: Vec<String>,
    /// Identical duplicates dropped.
    pub duplicates: usize,
    /// Conflicting duplicates, one line each: where the kept and the dropped record came from.
    pub conflicts: Vec<String>,
}

type Identity = (Option<String>, String, String, String, Vec<String>);

fn identity(record: &Record) -> Identity {
    let kind = serde_json::to_string(&record.kind).unwrap_or_default();
    let variant = serde_json::to_string(&record.variant).unwrap_or_default();
    let metrics = record.metrics.keys().cloned().collect();
    (record.run.id.clone(), record.bench.clone(), kind, variant, metrics)
}

/// Merges `sources` (place, record): the indices of the records to keep, in first-seen order.
pub fn merge(sources: &[(String, Record)]) -> (Vec<usize>, Merged) {
    let mut seen: BTreeMap<Identity, (&str, serde_json::Value)> = BTreeMap::new();
    let mut kept = Vec::new();
    let mut merged = Merged::default();
    for (i, (place, record)) in sources.iter().enumerate() {
        let json = serde_json::to_value(record).unwrap_or_default();
        match seen.get(&identity(record)) {
            Some((_, first)) if *first == json => merged.duplicates += 1,
            Some((first_place, _)) => merged.conflicts.push(format!(
                "{place}: {} {} of run {} differs from the one at {first_place}; kept that one",
                record.bench,
                serde_json::to_string(&record.variant).unwrap_or_default(),
                record.run.id.as_deref().unwrap_or("(no id)")
            )),
            None => {
                seen.insert(identity(record), (place, json));
                kept.push(i);
            }
        }
    }
    merged.kept = kept.len();
    (kept, merged)
}

/// `benchhost merge`: appends to `out` the records of `inputs` it does not hold yet, and says what it did.
pub fn merge_files(out: &Path, inputs: &[PathBuf]) -> Result<Merged> {
    let mut sources = Vec::new();
    let mut unreadable = Vec::new();
    // Sources before this index are OUT's own records: kept or not, they are never written again.
    let mut in_out = 0;
    for path in std::iter::once(out).filter(|p| p.exists()).chain(inputs.iter().map(PathBuf::as_path)) {
        let stream = reader::read(path)?;
        unreadable.extend(stream.problems);
        sources.extend(stream.records.into_iter().map(|(line, r)| (format!("{}:{line}", path.display()), r)));
        if path == out {
            in_out = sources.len();
        }
    }
    let (kept, mut merged) = merge(&sources);
    let added: Vec<&Record> = kept.iter().filter(|&&i| i >= in_out).map(|&i| &sources[i].1).collect();
    crate::sink::Sink::append_all(out, added.iter().copied())?;
    merged.added = added.len();
    merged.unreadable = unreadable;
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunInfo;

    fn record(run: &str, rig: &str, rows: i64, value: f64) -> Record {
        let variant = [("rows".to_string(), rows.into())].into();
        let mut r = Record::measurement_for_tests(rig, RunInfo::for_tests(1, Some(run)), variant, Default::default());
        r.note = Some(format!("{value}"));
        r
    }

    #[test]
    fn identical_duplicates_are_dropped_and_different_ones_are_conflicts() {
        let a = record("run-1", "wal", 1000, 1.0);
        let b = record("run-1", "wal", 10_000, 2.0);
        let other_run = record("run-2", "wal", 1000, 1.0);
        let conflicting = record("run-1", "wal", 1000, 9.0);
        let sources = [("s1:1", &a), ("s2:1", &b), ("s2:2", &a), ("s3:1", &other_run), ("s3:2", &conflicting)]
            .map(|(p, r)| (p.to_string(), r.clone()));
        let (kept, merged) = merge(&sources);
        let kept: Vec<&Record> = kept.iter().map(|&i| &sources[i].1).collect();
        assert_eq!(kept, [&a, &b, &other_run]);
        assert_eq!((merged.kept, merged.duplicates), (3, 1));
        assert_eq!(merged.conflicts.len(), 1);
        assert!(merged.conflicts[0].starts_with("s3:2: wal {\"rows\":1000} of run run-1 differs from the one at s1:1"));
    }

    #[test]
    fn records_new_to_out_are_all_written_when_out_holds_a_duplicate() {
        // regression: `skip(already)` counted OUT's duplicate as kept, so one new record was never written
        // ("3 records (1 added)"), and a second merge said 0 added.
        let dir = tempfile::tempdir().unwrap();
        let (out, input) = (dir.path().join("out.jsonl"), dir.path().join("in.jsonl"));
        let a = record("run-1", "wal", 1, 1.0);
        let (b, c) = (record("run-1", "wal", 2, 2.0), record("run-1", "wal", 3, 3.0));
        std::fs::write(&out, format!("{}\n{}\n", a.to_line(), a.to_line())).unwrap();
        std::fs::write(&input, format!("{}\n{}\n", b.to_line(), c.to_line())).unwrap();
        assert_eq!(merge_files(&out, std::slice::from_ref(&input)).unwrap().added, 2);
        let written: Vec<Record> = reader::read(&out).unwrap().records.into_iter().map(|(_, r)| r).collect();
        assert_eq!(written, [a.clone(), a, b, c], "both new records are appended once, OUT is left as it was");
        assert_eq!(merge_files(&out, &[input]).unwrap().added, 0, "merging again adds nothing");
        assert_eq!(reader::read(&out).unwrap().records.len(), 4);
    }
}
