//! Appends records to a results stream: one `write` per line under an advisory lock, so two concurrent
//! `benchhost` processes never interleave lines, and an fsync when a cell ends.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::Record;

/// An open results stream.
pub struct Sink {
    path: PathBuf,
    file: File,
}

impl Sink {
    /// Opens (creating it and its directory if needed) `path` for appending.
    pub fn open(path: &Path) -> Result<Sink> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // `create_dir_all` would say "File exists" of a file in the way; name it instead.
            if let Some(file) = dir.ancestors().find(|a| a.is_file()) {
                anyhow::bail!("cannot write {}: {} is a file, not a directory", path.display(), file.display());
            }
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .with_context(|| format!("opening {} for appending", path.display()))?;
        Ok(Sink { path: path.to_owned(), file })
    }

    /// The stream's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as one line, with one `write` call, under an exclusive lock. A record the reader
    /// would reject (a NaN written as `null`) is refused, so one bad record can never make a stream unreadable.
    pub fn append(&mut self, record: &Record) -> Result<()> {
        let mut line = record
            .readable_line()
            .map_err(|why| anyhow::anyhow!("refusing to append to {}: {why}", self.path.display()))?;
        line.push('\n');
        self.file.lock().with_context(|| format!("locking {}", self.path.display()))?;
        let result = self.append_locked(line);
        let _ = self.file.unlock();
        result.with_context(|| format!("appending a record to {}", self.path.display()))
    }

    fn append_locked(&mut self, mut line: String) -> std::io::Result<()> {
        // A writer killed mid-line leaves a torn tail without a newline. Start on a fresh line so the new
        // record stays whole; readers report the torn line and keep every complete record.
        if self.ends_without_newline()? {
            line.insert(0, '\n');
        }
        // `write_all` on an O_APPEND file: one write for a line of ordinary size.
        self.file.write_all(line.as_bytes())?;
        self.file.flush()
    }

    fn ends_without_newline(&mut self) -> std::io::Result<bool> {
        let len = self.file.metadata()?.len();
        if len == 0 {
            return Ok(false);
        }
        let mut last = [0u8; 1];
        self.file.seek(SeekFrom::Start(len - 1))?;
        self.file.read_exact(&mut last)?;
        Ok(last[0] != b'\n')
    }

    /// Appends `record` and makes it durable, or, when the stream cannot take it (a full disk, an I/O error),
    /// keeps it elsewhere before failing: as one JSON line on stderr, and in a file next to the stream when
    /// one can still be written there. The error names the stream, the cause and where the record went.
    pub fn keep(&mut self, record: &Record) -> Result<()> {
        let Err(cause) = self.append(record).and_then(|()| self.sync()) else { return Ok(()) };
        let line = record.to_line();
        eprintln!("{line}");
        let rescue = self.rescue_path();
        let saved = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&rescue)
            .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()).and_then(|()| f.sync_all()));
        let place = match saved {
            Ok(()) => format!("it is saved in {} and printed above on stderr", rescue.display()),
            Err(e) => format!("it is printed above on stderr ({} could not be written either: {e})", rescue.display()),
        };
        Err(cause.context(format!("the record could not be written to {}; {place}", self.path.display())))
    }

    /// `OUT.rescued-PID.jsonl` beside the stream: a new file, never one that exists (nor a symlink's target).
    fn rescue_path(&self) -> PathBuf {
        let name = self.path.file_name().map_or("results".into(), |n| n.to_string_lossy().into_owned());
        self.path.with_file_name(format!("{name}.rescued-{}.jsonl", std::process::id()))
    }

    /// Opens `path`, appends every record of `records` in batches (see [`Batch`]) and makes them durable. Each
    /// record is checked as [`Sink::append`] checks it.
    pub fn append_all<'a>(path: &Path, records: impl IntoIterator<Item = &'a Record>) -> Result<()> {
        let mut batch = Sink::open(path)?.batch();
        for record in records {
            let line = record
                .readable_line()
                .map_err(|why| anyhow::anyhow!("refusing to append to {}: {why}", path.display()))?;
            batch.push(&line)?;
        }
        batch.finish()
    }

    /// Appends many lines with one locked `write` per [`BATCH`] bytes instead of one per line, and one fsync at
    /// the end: for `merge`, `publish`'s export and verdicts, never for a cell's record.
    pub fn batch(self) -> Batch {
        Batch { sink: self, buf: Vec::new(), hold: false }
    }

    /// Makes everything appended so far durable (called when a cell ends).
    pub fn sync(&self) -> Result<()> {
        self.file.sync_data().with_context(|| format!("syncing {}", self.path.display()))
    }
}

/// Bytes of whole lines written at once by a [`Batch`].
pub const BATCH: usize = 1 << 20;

/// Lines appended in batches: each batch is whole lines, written with one `write` under the stream's lock,
/// so a concurrent writer's line never lands inside one, and a reader sees whole lines or a torn last one.
pub struct Batch {
    sink: Sink,
    buf: Vec<u8>,
    hold: bool,
}

impl Batch {
    /// Adds one line (a record's JSON text, without the newline); writes the batch when it is full.
    pub fn push(&mut self, line: &str) -> Result<()> {
        self.buf.extend_from_slice(line.as_bytes());
        self.buf.push(b'\n');
        if self.buf.len() >= BATCH && !self.hold {
            self.write()?;
        }
        Ok(())
    }

    /// Holds every line until [`Batch::finish`]: for a merge that also reads the stream it appends to.
    pub fn hold(&mut self) {
        self.hold = true;
    }

    /// Writes what is left and makes everything durable.
    pub fn finish(mut self) -> Result<()> {
        self.write()?;
        self.sink.sync()
    }

    fn write(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let path = self.sink.path.display().to_string();
        self.sink.file.lock().with_context(|| format!("locking {path}"))?;
        let result = (|| {
            if self.sink.ends_without_newline()? {
                self.sink.file.write_all(b"\n")?;
            }
            self.sink.file.write_all(&self.buf)?;
            self.sink.file.flush()
        })();
        let _ = self.sink.file.unlock();
        self.buf.clear();
        result.with_context(|| format!("appending records to {path}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunInfo;

    #[test]
    fn batches_and_single_appends_racing_on_one_stream_leave_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let record = |i: usize| {
            let variant = [("i".to_string(), i.into())].into();
            Record::measurement_for_tests("race", RunInfo::for_tests(i as u64, Some("r")), variant, Default::default())
        };
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut sink = Sink::open(&path).unwrap();
                (0..300).for_each(|i| sink.append(&record(i)).unwrap());
            });
            scope.spawn(|| {
                // ~2.5 MB: several batches.
                let mut batch = Sink::open(&path).unwrap().batch();
                (300..12_300).for_each(|i| batch.push(&record(i).to_line()).unwrap());
                batch.finish().unwrap();
            });
        });
        let stream = crate::reader::read(&path).unwrap();
        assert_eq!(stream.problems, Vec::<String>::new());
        assert_eq!(stream.records.len(), 12_300);
        assert!(std::fs::metadata(&path).unwrap().len() > 2 * BATCH as u64);
    }
}
