//! One pass over a stream whose records may be folded in any order (a newest-per-series history, counts):
//! every worker parses blocks and folds their records into a part of its own, and the parts are returned to be
//! merged. Nothing waits for line order, and a record is freed by the thread that parsed it: on 2 cores this
//! is what makes a pass over a long stream take its parse time, not twice it.

use std::fs::File;
use std::path::Path;
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, anyhow};

use crate::lines::{Block, Entry, RawLine, Scanned, parse_line, raw_lines};
use crate::scan::{BLOCK, Blocks, IN_FLIGHT, Owned, threads};

/// What a pass folded.
pub struct Folded<A> {
    /// One part per worker.
    pub parts: Vec<A>,
    /// Skipped lines, in line order, with their line numbers.
    pub problems: Vec<(usize, String)>,
    /// Records folded.
    pub records: usize,
}

/// Folds every record of the stream at `path` with `fold` into parts made by `init`, one per worker. A line
/// that ends the read (another schema version) is an error, and no part is returned.
pub fn fold_records<A: Send>(
    path: &Path,
    init: impl Fn() -> A + Sync,
    fold: impl Fn(&mut A, Entry) + Sync,
) -> Result<Folded<A>> {
    fold_with(path, threads(), BLOCK, init, |_, _| false, fold)
}

/// As [`fold_records`], with a fast path: `fast` gets each line first and folds it if it can (true); the lines
/// it leaves are parsed whole and given to `fold`, or reported as the reader reports them.
pub(crate) fn fold_lines<A: Send>(
    path: &Path,
    init: impl Fn() -> A + Sync,
    fast: impl Fn(&mut A, &RawLine<'_>) -> bool + Sync,
    fold: impl Fn(&mut A, Entry) + Sync,
) -> Result<Folded<A>> {
    fold_with(path, threads(), BLOCK, init, fast, fold)
}

/// A worker's part, and what it met.
struct Part<A> {
    acc: A,
    problems: Vec<(usize, String)>,
    records: usize,
    fatal: Option<(usize, anyhow::Error)>,
}

fn fold_with<A: Send>(
    path: &Path,
    threads: usize,
    block: usize,
    init: impl Fn() -> A + Sync,
    fast: impl Fn(&mut A, &RawLine<'_>) -> bool + Sync,
    fold: impl Fn(&mut A, Entry) + Sync,
) -> Result<Folded<A>> {
    let name = path.display().to_string();
    let file = File::open(path).with_context(|| format!("reading {name}"))?;
    let small = file.metadata().is_ok_and(|m| m.len() <= block as u64);
    let workers = if small { 1 } else { threads.max(1) };
    let mut blocks = Blocks::new(file, block);
    let (parts, read) = std::thread::scope(|scope| {
        let (work_tx, work_rx) = sync_channel::<(usize, Owned)>(IN_FLIGHT);
        let recycle = blocks.recycler();
        let reader = scope.spawn(move || -> std::io::Result<()> {
            for index in 0.. {
                let Some(block) = blocks.next_block()? else { return Ok(()) };
                if work_tx.send((index, block)).is_err() {
                    return Ok(());
                }
            }
            Ok(())
        });
        let work_rx = Arc::new(Mutex::new(work_rx));
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let (work_rx, init, fast, fold, name) = (Arc::clone(&work_rx), &init, &fast, &fold, &name);
                let recycle = recycle.clone();
                scope.spawn(move || {
                    let mut part = Part { acc: init(), problems: Vec::new(), records: 0, fatal: None };
                    let mut items = Vec::new();
                    loop {
                        let next = work_rx.lock().ok().and_then(|rx| rx.recv().ok());
                        let Some((index, owned)) = next else { return part };
                        let view = Block {
                            first_line: owned.first_line,
                            offset: owned.offset,
                            bytes: &owned.bytes,
                            last: owned.last,
                        };
                        for line in raw_lines(&view) {
                            if fast(&mut part.acc, &line) {
                                part.records += 1;
                                continue;
                            }
                            if let Err(fatal) = parse_line(name, &line, &|entry, _| entry, &mut items) {
                                if part.fatal.as_ref().is_none_or(|(first, _)| index < *first) {
                                    part.fatal = Some((index, fatal));
                                }
                                break;
                            }
                            for item in items.drain(..) {
                                match item {
                                    Scanned::Record(entry) => {
                                        part.records += 1;
                                        fold(&mut part.acc, entry);
                                    }
                                    Scanned::Problem(problem) => part.problems.push((line.line, problem)),
                                }
                            }
                        }
                        let _ = recycle.try_send(owned.bytes);
                    }
                })
            })
            .collect();
        let parts: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        (parts, reader.join())
    });
    read.map_err(|_| anyhow!("the reader of {name} panicked"))?.with_context(|| format!("reading {name}"))?;
    let mut parts = parts.into_iter().collect::<Result<Vec<Part<A>>, _>>().map_err(|_| anyhow!("a worker panicked"))?;
    // The first line that ends the read decides, as a reader in line order would have stopped there.
    let first_fatal = parts.iter().enumerate().filter_map(|(i, p)| p.fatal.as_ref().map(|(b, _)| (*b, i))).min();
    if let Some((_, worker)) = first_fatal {
        return Err(parts.swap_remove(worker).fatal.expect("found above").1);
    }
    let mut problems: Vec<(usize, String)> = parts.iter_mut().flat_map(|p| p.problems.drain(..)).collect();
    problems.sort_by_key(|(line, _)| *line);
    let records = parts.iter().map(|p| p.records).sum();
    Ok(Folded { parts: parts.into_iter().map(|p| p.acc).collect(), problems, records })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"schema":1,"bench":"b","kind":"measurement","run":{"ts_ms":1,"host":"h","cpu":"c","cores":2,"os":"linux/x86_64","profile":"release"},"variant":{"a":1},"metrics":{}}"#;

    #[test]
    fn parts_hold_every_record_once_and_problems_come_in_line_order() {
        let mut text = String::new();
        for i in 0..400 {
            if i % 9 == 4 {
                text.push_str("{\"schema\":1,\"be\n");
            }
            text.push_str(&GOOD.replace("\"a\":1", &format!("\"a\":{i}")));
            text.push('\n');
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, &text).unwrap();
        let expected = crate::reader::parse(Path::new("r.jsonl"), text.as_bytes()).unwrap();
        for (threads, block) in [(1, 1 << 20), (2, 700), (4, 300)] {
            let folded = fold_with(
                &path,
                threads,
                block,
                Vec::new,
                |_, _| false,
                |v: &mut Vec<(usize, i64)>, e| v.push((e.line, e.record.variant["a"].as_i64().unwrap())),
            )
            .unwrap();
            let mut all: Vec<(usize, i64)> = folded.parts.into_iter().flatten().collect();
            all.sort();
            let lines: Vec<(usize, i64)> =
                expected.records.iter().map(|(l, r)| (*l, r.variant["a"].as_i64().unwrap())).collect();
            assert_eq!(all, lines, "{threads} threads");
            assert_eq!(folded.records, 400);
            let problems: Vec<String> =
                folded.problems.iter().map(|(_, p)| p.replace(&path.display().to_string(), "r.jsonl")).collect();
            assert_eq!(problems, expected.problems, "{threads} threads");
        }
    }

    #[test]
    fn another_schema_anywhere_ends_the_pass() {
        let mut text: String = (0..300).map(|_| format!("{GOOD}\n")).collect();
        text.push_str(&GOOD.replace("\"schema\":1", "\"schema\":2"));
        text.push('\n');
        text.push_str(&(0..300).map(|_| format!("{GOOD}\n")).collect::<String>());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, &text).unwrap();
        let err = fold_with(&path, 4, 500, || 0, |_, _| false, |n: &mut usize, _| *n += 1).err().unwrap();
        assert!(err.to_string().ends_with(":301: schema version 2 is not supported (this benchhost reads schema 1)"));
    }
}
