//! One pass over a results stream of any length, in bounded memory and in line order, parsed on every core.
//!
//! The file is read in blocks of whole lines. Workers parse blocks (and map each record to what the caller
//! keeps of it); the calling thread hands the results to the caller's fold in line order, so "first seen",
//! "newest" and "duplicate of line N" mean the same with one thread or four. At most [`IN_FLIGHT`] blocks are
//! read ahead of the fold: memory is bounded by the block size, not the file.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, anyhow, bail};

use crate::lines::{Block, Entry, parse_block};

pub use crate::lines::Scanned;

/// Bytes read per block (a block is cut at its last newline).
pub(crate) const BLOCK: usize = 4 << 20;
/// Blocks read but not yet folded, at most.
pub(crate) const IN_FLIGHT: usize = 8;

/// Reads the stream at `path` once: `map` runs on worker threads for every readable record, and `fold` gets
/// every mapped record and every skipped line, in line order. A line that ends the read (another schema
/// version) is an error after the lines before it were folded; nothing after it is. An error from `fold`
/// (a closed pipe) ends the pass and is returned.
pub fn scan<T: Send>(
    path: &Path,
    map: impl Fn(Entry) -> T + Sync,
    fold: impl FnMut(Scanned<T>) -> Result<()>,
) -> Result<()> {
    scan_with(path, threads(), BLOCK, move |entry, _| map(entry), fold)
}

/// Every record of the stream at `path`, as a command reads it: `map` on the workers, `each` in line order;
/// each skipped line is reported on stderr once the pass is done, and a stream without one readable record is
/// an error (see [`reader::records`](crate::reader::records)).
pub fn each_record<T: Send>(
    path: &Path,
    map: impl Fn(Entry) -> T + Sync,
    each: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    each_record_with_text(path, move |entry, _| map(entry), each)
}

/// [`each_record`] whose `map` also gets the record's text as the file holds it (valid while `map` runs).
pub fn each_record_with_text<T: Send>(
    path: &Path,
    map: impl Fn(Entry, &str) -> T + Sync,
    mut each: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let (mut problems, mut records) = (Vec::new(), 0);
    scan_with(path, threads(), BLOCK, map, |item| match item {
        Scanned::Record(mapped) => {
            records += 1;
            each(mapped)
        }
        Scanned::Problem(problem) => {
            problems.push(problem);
            Ok(())
        }
    })?;
    warn(path, &problems, records)
}

/// Reports a read's skipped lines on stderr, and fails a stream without one readable record (see
/// [`reader::records`](crate::reader::records)).
pub fn warn(path: &Path, problems: &[String], records: usize) -> Result<()> {
    for problem in problems {
        eprintln!("warning: {problem}");
    }
    if records == 0 {
        bail!("{} holds no readable record ({} lines skipped)", path.display(), problems.len());
    }
    Ok(())
}

fn scan_with<T: Send>(
    path: &Path,
    threads: usize,
    block: usize,
    map: impl Fn(Entry, &str) -> T + Sync,
    mut fold: impl FnMut(Scanned<T>) -> Result<()>,
) -> Result<()> {
    let name = path.display().to_string();
    let file = File::open(path).with_context(|| format!("reading {name}"))?;
    let small = file.metadata().is_ok_and(|m| m.len() <= block as u64);
    let mut blocks = Blocks::new(file, block);
    if threads <= 1 || small {
        while let Some(block) = blocks.next_block().with_context(|| format!("reading {name}"))? {
            let (items, fatal) = parse(&name, &block, &map);
            blocks.give_back(block.bytes);
            items.into_iter().try_for_each(&mut fold)?;
            if let Some(fatal) = fatal {
                return Err(fatal);
            }
        }
        return Ok(());
    }
    std::thread::scope(|scope| {
        let (work_tx, work_rx) = sync_channel::<(usize, Owned)>(IN_FLIGHT);
        let (done_tx, done_rx) = sync_channel::<(usize, Parsed<T>)>(IN_FLIGHT);
        let (token_tx, token_rx) = sync_channel::<()>(IN_FLIGHT);
        for _ in 0..IN_FLIGHT {
            token_tx.send(()).expect("the channel holds IN_FLIGHT tokens");
        }
        let recycle = blocks.recycler();
        let reader = scope.spawn(move || read_ahead(blocks, &work_tx, &token_rx));
        let work_rx = Arc::new(Mutex::new(work_rx));
        for _ in 0..threads {
            let (work_rx, done_tx, map, name) = (Arc::clone(&work_rx), done_tx.clone(), &map, &name);
            let recycle = recycle.clone();
            scope.spawn(move || {
                loop {
                    let Ok((index, block)) = work_rx.lock().map_err(|_| ()).and_then(|rx| rx.recv().map_err(|_| ()))
                    else {
                        return;
                    };
                    let parsed = parse(name, &block, map);
                    let _ = recycle.try_send(block.bytes);
                    if done_tx.send((index, parsed)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        let fatal = fold_in_order(&done_rx, &token_tx, &mut fold);
        // Unblock the reader and the workers before the scope joins them.
        drop((done_rx, token_tx));
        let read = reader.join().map_err(|_| anyhow!("the reader of {name} panicked"))?;
        match fatal {
            Some(fatal) => Err(fatal),
            None => read.with_context(|| format!("reading {name}")),
        }
    })
}

/// Hands parsed blocks to `fold` in order, returning a token to the reader per block folded; the error that
/// ended the pass, if one did.
fn fold_in_order<T>(
    done: &Receiver<(usize, Parsed<T>)>,
    tokens: &SyncSender<()>,
    fold: &mut impl FnMut(Scanned<T>) -> Result<()>,
) -> Option<anyhow::Error> {
    let mut waiting: BTreeMap<usize, Parsed<T>> = BTreeMap::new();
    let mut next = 0;
    while let Ok((index, parsed)) = done.recv() {
        waiting.insert(index, parsed);
        while let Some((items, fatal)) = waiting.remove(&next) {
            if let Err(stop) = items.into_iter().try_for_each(&mut *fold) {
                return Some(stop);
            }
            if fatal.is_some() {
                return fatal;
            }
            next += 1;
            let _ = tokens.send(());
        }
    }
    None
}

fn read_ahead(mut blocks: Blocks, work: &SyncSender<(usize, Owned)>, tokens: &Receiver<()>) -> std::io::Result<()> {
    for index in 0.. {
        if tokens.recv().is_err() {
            return Ok(());
        }
        let Some(block) = blocks.next_block()? else { return Ok(()) };
        if work.send((index, block)).is_err() {
            return Ok(());
        }
    }
    Ok(())
}

type Parsed<T> = (Vec<Scanned<T>>, Option<anyhow::Error>);

fn parse<T>(name: &str, block: &Owned, map: &impl Fn(Entry, &str) -> T) -> Parsed<T> {
    let mut items = Vec::new();
    let view = Block { first_line: block.first_line, offset: block.offset, bytes: &block.bytes, last: block.last };
    let fatal = parse_block(name, view, map, &mut items);
    (items, fatal)
}

/// A block read from the file.
pub(crate) struct Owned {
    pub first_line: usize,
    pub offset: u64,
    pub bytes: Vec<u8>,
    pub last: bool,
}

/// Cuts a file into blocks of whole lines.
pub(crate) struct Blocks {
    file: File,
    /// Bytes read at a time.
    size: usize,
    /// The start of a line not yet ended.
    carry: Vec<u8>,
    line: usize,
    offset: u64,
    done: bool,
    /// Buffers of blocks already parsed, to read the next blocks into: fresh 4 MiB buffers cost a page fault
    /// per page, about a tenth of a pass.
    returned: Option<Receiver<Vec<u8>>>,
    spare: Vec<Vec<u8>>,
}

impl Blocks {
    /// Blocks of `file`, read `size` bytes at a time.
    pub(crate) fn new(file: File, size: usize) -> Blocks {
        Blocks { file, size, carry: Vec::new(), line: 1, offset: 0, done: false, returned: None, spare: Vec::new() }
    }

    /// Where workers on other threads give back the buffers of the blocks they parsed.
    pub(crate) fn recycler(&mut self) -> SyncSender<Vec<u8>> {
        let (tx, rx) = sync_channel(2 * IN_FLIGHT);
        self.returned = Some(rx);
        tx
    }

    /// Gives back the buffer of a parsed block (on the reading thread).
    pub(crate) fn give_back(&mut self, bytes: Vec<u8>) {
        self.spare.push(bytes);
    }

    /// The next block, or `None` at the end of the file.
    pub(crate) fn next_block(&mut self) -> std::io::Result<Option<Owned>> {
        if self.done {
            return Ok(None);
        }
        let returned = self.returned.as_ref().and_then(|rx| rx.try_recv().ok());
        let mut bytes = self.spare.pop().or(returned).unwrap_or_default();
        bytes.clear();
        bytes.append(&mut self.carry);
        loop {
            let start = bytes.len();
            // Read into the vector's spare room: no zeroing of a block that is read over at once.
            bytes.reserve(self.size);
            let read = (&mut self.file).take(self.size as u64).read_to_end(&mut bytes)?;
            if read == 0 {
                self.done = true;
                break;
            }
            // A line longer than a block (a failure's log) grows the block until it ends.
            if let Some(end) = memchr::memrchr(b'\n', &bytes[start..]) {
                self.carry = bytes.split_off(start + end + 1);
                break;
            }
        }
        if bytes.is_empty() {
            return Ok(None);
        }
        let block = Owned { first_line: self.line, offset: self.offset, last: self.done, bytes };
        self.line += memchr::memchr_iter(b'\n', &block.bytes).count();
        self.offset += block.bytes.len() as u64;
        Ok(Some(block))
    }
}

/// Worker threads: `BENCHHOST_THREADS`, or the cores there are, at most 4.
pub fn threads() -> usize {
    let configured = std::env::var("BENCHHOST_THREADS").ok().and_then(|t| t.parse().ok());
    configured.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(4)))
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
