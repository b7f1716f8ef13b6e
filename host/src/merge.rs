//! `benchhost merge OUT IN...`: the slices of one logical run (one per machine, `--shard I/N`, same
//! `--run-id`) and any other streams, combined into one stream with one record per identity.
//!
//! A record's identity is its run id, rig, kind, variant and metric names (a verdict is per metric, a
//! measurement per cell). Two records with one identity are duplicates: identical ones (the same slice
//! uploaded twice) are dropped and counted; different ones are a conflict, reported with both places, and the
//! first is kept. Records already in OUT take part, so merging twice adds nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::reader;
use crate::record::Record;

/// What a merge did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Merged {
    /// Records in the result, in first-seen order.
    pub kept: usize,
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

/// Merges `sources` (place, record) into the records to keep.
pub fn merge(sources: impl IntoIterator<Item = (String, Record)>) -> (Vec<Record>, Merged) {
    let mut seen: BTreeMap<Identity, (String, serde_json::Value)> = BTreeMap::new();
    let mut kept = Vec::new();
    let mut merged = Merged::default();
    for (place, record) in sources {
        let json = serde_json::to_value(&record).unwrap_or_default();
        match seen.get(&identity(&record)) {
            Some((_, first)) if *first == json => merged.duplicates += 1,
            Some((first_place, _)) => merged.conflicts.push(format!(
                "{place}: {} {} of run {} differs from the one at {first_place}; kept that one",
                record.bench,
                serde_json::to_string(&record.variant).unwrap_or_default(),
                record.run.id.as_deref().unwrap_or("(no id)")
            )),
            None => {
                seen.insert(identity(&record), (place, json));
                kept.push(record);
            }
        }
    }
    merged.kept = kept.len();
    (kept, merged)
}

/// `benchhost merge`: appends to `out` the records of `inputs` it does not hold yet. Exit code 1 on conflicts
/// or unreadable lines.
pub fn merge_files(out: &Path, inputs: &[PathBuf]) -> Result<ExitCode> {
    let mut sources = Vec::new();
    let mut problems = Vec::new();
    let mut already = 0;
    for path in std::iter::once(out).filter(|p| p.exists()).chain(inputs.iter().map(PathBuf::as_path)) {
        let stream = reader::read(path)?;
        if path == out {
            already = stream.records.len();
        }
        problems.extend(stream.problems);
        sources.extend(stream.records.into_iter().map(|(line, r)| (format!("{}:{line}", path.display()), r)));
    }
    let (records, merged) = merge(sources);
    let mut sink = crate::sink::Sink::open(out)?;
    for record in records.iter().skip(already) {
        sink.append(record)?;
    }
    sink.sync()?;
    for line in problems.iter().chain(&merged.conflicts) {
        eprintln!("{line}");
    }
    println!(
        "{} records in {} ({} added), {} identical duplicates dropped, {} conflicts, {} unreadable lines",
        merged.kept,
        out.display(),
        merged.kept - already,
        merged.duplicates,
        merged.conflicts.len(),
        problems.len()
    );
    Ok(if merged.conflicts.is_empty() && problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RunInfo;

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
        let (kept, merged) = merge(sources);
        assert_eq!(kept, [a, b, other_run]);
        assert_eq!((merged.kept, merged.duplicates), (3, 1));
        assert_eq!(merged.conflicts.len(), 1);
        assert!(merged.conflicts[0].starts_with("s3:2: wal {\"rows\":1000} of run run-1 differs from the one at s1:1"));
    }
}
