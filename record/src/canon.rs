//! Records compared without holding them: a 128-bit hash of a record's canonical text (the line this build
//! writes for it), and the record read again from its place in the file when two hashes meet.

use std::cell::RefCell;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use twox_hash::XxHash64;

use crate::Record;
use crate::reader::Entry;

thread_local! {
    /// The text being hashed, kept per thread so that a pass over 1M records allocates it once.
    static TEXT: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(4096));
}

/// The hash of `value`'s JSON text, as `serde_json::to_string` writes it. The text is written whole, then
/// hashed in one call: fed to a hasher piece by piece (a quote, a key, a colon), the hashing cost more than the
/// parse (a third of `verify`'s time over 100k records).
pub(crate) fn hash(value: &impl Serialize) -> u128 {
    TEXT.with_borrow_mut(|text| {
        text.clear();
        serde_json::to_writer(&mut *text, value).expect("records serialize");
        hash_text(text)
    })
}

/// 128 bits of `text`: two XXH64 with distinct seeds (XXH64 is the hash Parquet already builds here).
/// Callers that must not err confirm a meeting by reading both records again.
pub(crate) fn hash_text(text: &[u8]) -> u128 {
    let high = XxHash64::oneshot(0x9e37_79b9_7f4a_7c15, text);
    let low = XxHash64::oneshot(0x6a09_e667_f3bc_c909, text);
    (u128::from(high) << 64) | u128::from(low)
}

/// Where a record's text is, to read it again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place {
    pub line: usize,
    pub offset: u64,
    pub len: usize,
}

impl From<&Entry> for Place {
    fn from(entry: &Entry) -> Place {
        Place { line: entry.line, offset: entry.offset, len: entry.len }
    }
}

/// The record at `place` in `path`, read again.
pub(crate) fn reread(path: &Path, place: Place) -> Result<Record> {
    let name = path.display();
    let file = File::open(path).with_context(|| format!("reading {name}"))?;
    let mut bytes = vec![0; place.len];
    file.read_exact_at(&mut bytes, place.offset).with_context(|| format!("reading {name}:{}", place.line))?;
    serde_json::from_slice(&bytes).with_context(|| format!("{name}:{}: changed while it was read", place.line))
}

/// Whether the records at `a` and `b` in `path` have one canonical text: the check behind a meeting of hashes.
pub(crate) fn same_text(path: &Path, a: Place, b: Place) -> Result<bool> {
    Ok(reread(path, a)?.to_line() == reread(path, b)?.to_line())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `lines` to a file and returns it with each line's place.
    fn stream(lines: &[String]) -> (tempfile::TempDir, std::path::PathBuf, Vec<Place>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let (mut text, mut places) = (String::new(), Vec::new());
        for (i, line) in lines.iter().enumerate() {
            places.push(Place { line: i + 1, offset: text.len() as u64, len: line.len() });
            text.push_str(line);
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        (dir, path, places)
    }

    #[test]
    fn a_record_hashes_as_its_line() {
        let line = Record::point_for_tests(1, 8, 2.5).to_line();
        assert_eq!(hash(&Record::point_for_tests(1, 8, 2.5)), hash_text(line.as_bytes()));
        assert_ne!(hash(&Record::point_for_tests(1, 8, 2.5)), hash(&Record::point_for_tests(1, 8, 2.6)));
    }

    #[test]
    fn same_text_compares_records_not_bytes() {
        let line = Record::point_for_tests(1, 8, 2.5).to_line();
        let spaced = line.replacen(":", ": ", 3);
        assert_ne!(line, spaced);
        let other = Record::point_for_tests(1, 8, 2.6).to_line();
        let (_dir, path, places) = stream(&[line, spaced, other]);
        assert!(same_text(&path, places[0], places[1]).unwrap());
        assert!(!same_text(&path, places[0], places[2]).unwrap());
    }
}
