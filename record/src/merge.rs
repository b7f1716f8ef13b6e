//! `benchhost merge OUT IN...`: the slices of one logical run (one per machine, `--shard I/N`, same
//! `--run-id`) and any other streams, combined into one stream with one record per identity.
//!
//! A record's identity is its run id, rig, kind, variant and metric names (a measurement per cell), and for a
//! verdict also the metric it judged and what it was judged against (a verdict is per metric and comparison). Two records with one identity are duplicates: identical ones (the same slice
//! uploaded twice) are dropped and counted; different ones are a conflict, reported with both places, and the
//! first is kept. Records already in OUT take part, so merging twice adds nothing.

use std::collections::HashMap;
use std::collections::hash_map::Entry as Slot;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::canon::{self, Place};
use crate::scan::{Scanned, scan};
use crate::sink::Sink;

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

/// What the pass keeps of a record: its identity and text as 128-bit hashes (see `canon`), its place, and
/// the line to append should it be new.
struct Offered {
    identity: u128,
    text: u128,
    place: Place,
    line: Option<String>,
}

/// The first record seen of an identity.
struct Seen {
    text: u128,
    source: usize,
    place: Place,
}

/// `benchhost merge`: appends to `out` the records of `inputs` it does not hold yet, and says what it did.
/// One pass over OUT, then each input, in bounded memory (~60 bytes per distinct record); new records are
/// appended in batches as they are found.
pub fn merge_files(out: &Path, inputs: &[PathBuf]) -> Result<Merged> {
    let mut sources: Vec<&Path> = Vec::new();
    if out.exists() {
        sources.push(out);
    }
    let out_len = sources.len();
    sources.extend(inputs.iter().map(PathBuf::as_path));
    let mut batch = Sink::open(out)?.batch();
    // An input that is OUT itself must not read what this merge appends to it.
    let out_file = file_id(out);
    if inputs.iter().any(|input| file_id(input) == out_file) {
        batch.hold();
    }
    let mut seen: HashMap<u128, Seen> = HashMap::new();
    let mut merged = Merged::default();
    for (source, path) in sources.iter().enumerate() {
        let in_out = source < out_len;
        let offer = |entry: crate::reader::Entry| {
            // A record new to OUT is written as this line, so its text is hashed from it, not written twice.
            let line = (!in_out).then(|| entry.record.to_line());
            Offered {
                identity: identity_hash(&entry.record),
                text: line.as_ref().map_or_else(|| canon::hash(&entry.record), |l| canon::hash_text(l.as_bytes())),
                place: Place::from(&entry),
                line,
            }
        };
        scan(path, offer, |item| {
            let offered = match item {
                Scanned::Problem(problem) => {
                    merged.unreadable.push(problem);
                    return Ok(());
                }
                Scanned::Record(offered) => offered,
            };
            match seen.entry(offered.identity) {
                Slot::Occupied(first) if first.get().text == offered.text => merged.duplicates += 1,
                Slot::Occupied(first) => {
                    let first = first.get();
                    let at = format!("{}:{}", sources[first.source].display(), first.place.line);
                    merged.conflicts.push(conflict(path, offered.place, &at));
                }
                Slot::Vacant(slot) => {
                    slot.insert(Seen { text: offered.text, source, place: offered.place });
                    merged.kept += 1;
                    if let Some(line) = offered.line {
                        merged.added += 1;
                        batch.push(&line)?;
                    }
                }
            }
            Ok(())
        })?;
    }
    batch.finish()?;
    Ok(merged)
}

/// The 128-bit hash of a record's identity (see [`identity`]): the key `merge` keeps one record per, and the
/// warehouse's publish too, so that publishing a file twice adds nothing.
pub fn identity_hash(record: &crate::Record) -> u128 {
    let cell = (&record.run.id, &record.bench, record.kind, &record.variant, record.metrics.keys().collect::<Vec<_>>());
    if let Some(a) = &record.acknowledgement {
        // One `accept` writes a record per series and metric under one run id and no metrics: its id and metric
        // (and what it revokes) tell them apart.
        return canon::hash(&(cell, &a.id, &a.metric, &a.revokes));
    }
    match &record.verdict {
        // A measurement's identity hashes as it always has, so that publishing again adds none twice.
        None => canon::hash(&cell),
        // regression: a verdict carries no metrics of its own, so every verdict of an arm had one identity, and
        // `merge` (and publish) kept only the first: the metric judged, and against what, tell them apart.
        Some(v) => canon::hash(&(cell, &v.metric, &v.against, v.baseline.as_ref().map(|b| &b.run_id))),
    }
}

/// `PLACE: BENCH VARIANT of run ID differs from the one at FIRST; kept that one`.
fn conflict(path: &Path, place: Place, first: &str) -> String {
    let at = format!("{}:{}", path.display(), place.line);
    match canon::reread(path, place) {
        Ok(record) => format!(
            "{at}: {} {} of run {} differs from the one at {first}; kept that one",
            record.bench,
            serde_json::to_string(&record.variant).unwrap_or_default(),
            record.run.id.as_deref().unwrap_or("(no id)")
        ),
        Err(e) => format!("{at}: differs from the one at {first}; kept that one ({e:#})"),
    }
}

/// The device and inode of `path`, when it exists.
fn file_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Record, RunInfo, reader};

    fn record(run: &str, rig: &str, rows: i64, value: f64) -> Record {
        let variant = [("rows".to_string(), rows.into())].into();
        let mut r = Record::measurement_for_tests(rig, RunInfo::for_tests(1, Some(run)), variant, Default::default());
        r.note = Some(format!("{value}"));
        r
    }

    fn write(path: &Path, records: &[&Record]) {
        std::fs::write(path, records.iter().map(|r| format!("{}\n", r.to_line())).collect::<String>()).unwrap();
    }

    #[test]
    fn identical_duplicates_are_dropped_and_different_ones_are_conflicts() {
        let a = record("run-1", "wal", 1000, 1.0);
        let b = record("run-1", "wal", 10_000, 2.0);
        let other_run = record("run-2", "wal", 1000, 1.0);
        let conflicting = record("run-1", "wal", 1000, 9.0);
        let dir = tempfile::tempdir().unwrap();
        let [s1, s2, s3, out] = ["s1", "s2", "s3", "out"].map(|n| dir.path().join(format!("{n}.jsonl")));
        write(&s1, &[&a]);
        write(&s2, &[&b, &a]);
        write(&s3, &[&other_run, &conflicting]);
        let merged = merge_files(&out, &[s1.clone(), s2, s3.clone()]).unwrap();
        let kept: Vec<Record> = reader::read(&out).unwrap().records.into_iter().map(|(_, r)| r).collect();
        assert_eq!(kept, [a, b, other_run]);
        assert_eq!((merged.kept, merged.added, merged.duplicates), (3, 3, 1));
        let expected = format!(
            "{}:2: wal {{\"rows\":1000}} of run run-1 differs from the one at {}:1; kept that one",
            s3.display(),
            s1.display()
        );
        assert_eq!(merged.conflicts, [expected]);
    }

    #[test]
    fn the_verdicts_of_one_arm_on_two_metrics_are_two_records() {
        let arm = record("run-1", "wal", 1000, 1.0);
        let verdict = |metric: &str| {
            let mut v: crate::Verdict = serde_json::from_value(serde_json::json!({
                "metric": metric, "test": "paired", "threshold": 0.03, "decision": "no_change",
                "against": {"build": "../main/target/release"}}))
            .unwrap();
            v.ratio = Some(1.0);
            Record::verdict_on(&arm, v, format!("{metric} no_change"), arm.run.clone())
        };
        let (time, rate) = (verdict("roundtrip_time"), verdict("rows_per_s"));
        let dir = tempfile::tempdir().unwrap();
        let (input, out) = (dir.path().join("in.jsonl"), dir.path().join("out.jsonl"));
        write(&input, &[&arm, &time, &rate]);
        let merged = merge_files(&out, &[input]).unwrap();
        assert!(merged.conflicts.is_empty(), "{:?}", merged.conflicts);
        assert_eq!((merged.kept, merged.duplicates), (3, 0));
        assert_ne!(identity_hash(&time), identity_hash(&rate));
    }

    #[test]
    fn acknowledgements_of_two_metrics_and_a_revoke_are_three_records_merged_once() {
        let arm = record("run-1", "wal", 1000, 1.0);
        let run = RunInfo::for_tests(5, Some("ack-1"));
        let ack = |metric: &str, revokes: Option<&str>| {
            let a: crate::Acknowledgement = serde_json::from_value(serde_json::json!({
                "id": "a1", "metric": metric, "decision": "regressed", "ratio": 1.05, "ci95": [1.04, 1.06],
                "higher_is_better": false, "from_ts_ms": 1, "source": "verdict", "reason": "a new check",
                "by": "ann", "revokes": revokes}))
            .unwrap();
            Record::acknowledgement_on(&arm, a, run.clone())
        };
        let acks = [ack("roundtrip_time", None), ack("bytes", None), ack("roundtrip_time", Some("a1"))];
        let dir = tempfile::tempdir().unwrap();
        let (input, out) = (dir.path().join("in.jsonl"), dir.path().join("out.jsonl"));
        write(&input, &[&arm, &acks[0], &acks[1], &acks[2]]);
        let merged = merge_files(&out, std::slice::from_ref(&input)).unwrap();
        assert!(merged.conflicts.is_empty(), "{:?}", merged.conflicts);
        assert_eq!((merged.kept, merged.added), (4, 4));
        assert_eq!(merge_files(&out, &[input]).unwrap().added, 0, "merging again adds nothing");
        let kept: Vec<Record> = reader::read(&out).unwrap().records.into_iter().map(|(_, r)| r).collect();
        assert_eq!(kept[1..], acks, "each acknowledgement reads back as written");
        assert!(crate::standing_acknowledgements(&kept).is_empty(), "the revoke undoes every record of a1");
    }

    #[test]
    fn an_input_that_is_out_adds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.jsonl");
        let (a, b) = (record("run-1", "wal", 1, 1.0), record("run-1", "wal", 2, 2.0));
        write(&out, &[&a, &b]);
        let merged = merge_files(&out, &[out.clone(), out.clone()]).unwrap();
        assert_eq!((merged.kept, merged.added, merged.duplicates), (2, 0, 4));
        assert_eq!(reader::read(&out).unwrap().records.len(), 2);
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
