//! Reads results streams. Any schema-1 record is accepted and unknown fields are skipped; another schema
//! version is rejected with file, line and version; a line that is not JSON (a writer killed mid-line) is
//! reported and skipped, and every complete record is kept, even one glued to the torn line before it.
//!
//! [`scan`](crate::scan::scan) reads a stream of any length once, in bounded memory; [`read`] and
//! [`records`] hold every record, for callers that need them all.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::Record;
use crate::lines::{Block, parse_block};
use crate::scan::{Scanned, scan};

pub use crate::lines::Entry;
pub use crate::scan::warn;

/// Records read from one stream, and the lines that had to be skipped.
#[derive(Debug, Default)]
pub struct Stream {
    /// The file read.
    pub path: PathBuf,
    /// Records with their 1-based line numbers.
    pub records: Vec<(usize, Record)>,
    /// Skipped lines, one message each (a torn tail, a corrupt line).
    pub problems: Vec<String>,
}

/// Reads the stream at `path`.
pub fn read(path: &Path) -> Result<Stream> {
    let mut stream = Stream { path: path.to_owned(), ..Stream::default() };
    scan(
        path,
        |entry| (entry.line, entry.record),
        |item| {
            match item {
                Scanned::Record(record) => stream.records.push(record),
                Scanned::Problem(problem) => stream.problems.push(problem),
            }
            Ok(())
        },
    )?;
    Ok(stream)
}

/// The records of the stream at `path`, for a tool that reads them to act on them: each skipped line is
/// reported on stderr (`warning: FILE:LINE: ...`), and a stream without one readable record is an error, since
/// a report of garbage must not look like a report of nothing, nor a corrupt baseline like an empty one.
pub fn records(path: &Path) -> Result<Vec<Record>> {
    let stream = read(path)?;
    warn(path, &stream.problems, stream.records.len())?;
    Ok(stream.records.into_iter().map(|(_, r)| r).collect())
}

/// Parses the bytes of a stream; `path` names it in messages.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Stream> {
    let mut stream = Stream { path: path.to_owned(), ..Stream::default() };
    let mut lines = Vec::new();
    let fatal = parse_block(
        &path.display().to_string(),
        Block { first_line: 1, offset: 0, bytes, last: true },
        &|e, _| e,
        &mut lines,
    );
    for item in lines {
        match item {
            Scanned::Record(entry) => stream.records.push((entry.line, entry.record)),
            Scanned::Problem(problem) => stream.problems.push(problem),
        }
    }
    match fatal {
        Some(fatal) => Err(fatal),
        None => Ok(stream),
    }
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
