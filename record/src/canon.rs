//! Records compared without holding them: a 128-bit hash of a record's canonical text (the line this build
//! writes for it), and the record read again from its place in the file when two hashes meet.

use std::fs::File;
use std::hash::{DefaultHasher, Hasher};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::Record;
use crate::reader::Entry;

/// Two SipHash states with distinct keys, fed the same bytes: 128 bits, so that distinct records meet by
/// chance with a probability near 2^-128 per pair. A meeting is still confirmed by reading both again.
struct Hash128(DefaultHasher, DefaultHasher);

impl Write for Hash128 {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.write(bytes);
        self.1.write(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The hash of `value`'s JSON text, as `serde_json::to_string` writes it, without building the text.
pub(crate) fn hash(value: &impl Serialize) -> u128 {
    let mut second = DefaultHasher::new();
    second.write_u64(0x9e37_79b9_7f4a_7c15);
    let mut h = Hash128(DefaultHasher::new(), second);
    serde_json::to_writer(&mut h, value).expect("records serialize");
    (u128::from(h.0.finish()) << 64) | u128::from(h.1.finish())
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
