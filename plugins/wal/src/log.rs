//! An on-disk write-ahead log: records appended to numbered segment files, each framed as
//! `[len: u32 LE][crc32 of payload: u32 LE][payload]`, and a replay that returns every complete record in
//! order. A torn tail (a record cut short or failing its checksum at the end of the last segment, as a crash
//! mid-append leaves it) is detected and cut off; every complete record before it is kept.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

const HEADER: usize = 8;

/// When appends are made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fsync {
    /// Never: the OS decides (page cache only).
    None,
    /// Group commit: `fdatasync` once per batch of records.
    Batch,
    /// `fdatasync` after every record.
    Always,
}

/// An open log, appending to its newest segment.
pub struct Log {
    dir: PathBuf,
    segment_bytes: u64,
    fsync: Fsync,
    file: File,
    segment: u32,
    written: u64,
    unsynced: u64,
    syncs: u64,
}

impl Log {
    /// A new, empty log in `dir`, rolling segments at `segment_bytes`, its appends made durable per `fsync`.
    pub fn create(dir: &Path, segment_bytes: u64, fsync: Fsync) -> io::Result<Log> {
        std::fs::create_dir_all(dir)?;
        let file = open_segment(dir, 0)?;
        Ok(Log { dir: dir.to_owned(), segment_bytes, fsync, file, segment: 0, written: 0, unsynced: 0, syncs: 0 })
    }

    /// Appends one record (one `write` call for frame and payload); returns the bytes written.
    pub fn append(&mut self, payload: &[u8]) -> io::Result<u64> {
        if self.written > 0 && self.written + (HEADER + payload.len()) as u64 > self.segment_bytes {
            // A durable log seals a full segment before writing past it: a later sync reaches only the new
            // one. With `fsync = none` nothing is ever synced, at a roll either (the OS decides).
            if self.fsync != Fsync::None {
                self.sync()?;
            }
            self.segment += 1;
            self.file = open_segment(&self.dir, self.segment)?;
            self.written = 0;
        }
        let mut frame = Vec::with_capacity(HEADER + payload.len());
        frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        frame.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
        frame.extend_from_slice(payload);
        self.file.write_all(&frame)?;
        self.written += frame.len() as u64;
        self.unsynced += 1;
        Ok(frame.len() as u64)
    }

    /// Records appended since the last sync.
    pub fn unsynced(&self) -> u64 {
        self.unsynced
    }

    /// Makes everything appended so far durable.
    pub fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()?;
        self.unsynced = 0;
        self.syncs += 1;
        Ok(())
    }

    /// `fdatasync` calls so far.
    pub fn syncs(&self) -> u64 {
        self.syncs
    }
}

fn segment_path(dir: &Path, segment: u32) -> PathBuf {
    dir.join(format!("wal-{segment:08}.log"))
}

fn open_segment(dir: &Path, segment: u32) -> io::Result<File> {
    OpenOptions::new().create_new(true).append(true).open(segment_path(dir, segment))
}

/// What a replay found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Replay {
    /// Complete records, in append order.
    pub records: Vec<Vec<u8>>,
    /// Bytes cut from the end of the last segment (a torn tail), 0 when the log ended cleanly.
    pub cut_bytes: u64,
    /// Bytes on disk after the replay.
    pub bytes_on_disk: u64,
}

/// Reads every segment of the log in `dir` in order. A bad frame at the end of the last segment is a torn
/// tail: it is truncated away. A bad frame anywhere else is corruption, and an error.
pub fn replay(dir: &Path) -> io::Result<Replay> {
    let mut segments: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("wal-") && n.ends_with(".log"))
        })
        .collect();
    segments.sort();
    let mut replay = Replay::default();
    for (i, path) in segments.iter().enumerate() {
        let mut bytes = Vec::new();
        File::open(path)?.read_to_end(&mut bytes)?;
        let mut at = 0usize;
        while at < bytes.len() {
            match frame(&bytes[at..]) {
                Some(payload) => {
                    replay.records.push(payload.to_vec());
                    at += HEADER + payload.len();
                }
                None if i + 1 == segments.len() => {
                    replay.cut_bytes = (bytes.len() - at) as u64;
                    OpenOptions::new().write(true).open(path)?.set_len(at as u64)?;
                    break;
                }
                None => {
                    let at = at as u64;
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("{}: corrupt record at byte {at}", path.display()),
                    ));
                }
            }
        }
        replay.bytes_on_disk += at as u64;
    }
    Ok(replay)
}

/// The payload of a complete, intact frame at the start of `bytes`.
fn frame(bytes: &[u8]) -> Option<&[u8]> {
    let len = u32::from_le_bytes(bytes.get(0..4)?.try_into().ok()?) as usize;
    let crc = u32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?);
    let payload = bytes.get(HEADER..HEADER + len)?;
    (crc32fast::hash(payload) == crc).then_some(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payloads(n: u32) -> Vec<Vec<u8>> {
        (0..n).map(|i| format!("record {i} {}", "x".repeat(i as usize % 50)).into_bytes()).collect()
    }

    #[test]
    fn replay_returns_every_record_in_order_across_segments() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = Log::create(dir.path(), 256, Fsync::Batch).unwrap();
        for p in payloads(40) {
            log.append(&p).unwrap();
        }
        log.sync().unwrap();
        let segments = std::fs::read_dir(dir.path()).unwrap().count();
        assert!(segments > 3, "small segments roll: {segments}");
        let replay = replay(dir.path()).unwrap();
        assert_eq!(replay.records, payloads(40));
        assert_eq!(replay.cut_bytes, 0);
    }

    #[test]
    fn a_log_without_fsync_never_syncs_and_a_durable_one_seals_every_full_segment() {
        for (fsync, synced_rolls) in [(Fsync::None, false), (Fsync::Batch, true), (Fsync::Always, true)] {
            let dir = tempfile::tempdir().unwrap();
            let mut log = Log::create(dir.path(), 256, fsync).unwrap();
            for p in payloads(40) {
                log.append(&p).unwrap();
            }
            let rolls = std::fs::read_dir(dir.path()).unwrap().count() as u64 - 1;
            assert!(rolls >= 3, "{fsync:?}: small segments roll: {rolls}");
            assert_eq!(log.syncs(), if synced_rolls { rolls } else { 0 }, "{fsync:?}");
            assert_eq!(replay(dir.path()).unwrap().records, payloads(40), "{fsync:?}");
        }
    }

    #[test]
    fn a_torn_tail_is_cut_and_every_complete_record_kept() {
        // regression guard: a crash mid-append must cost only the record being written.
        let dir = tempfile::tempdir().unwrap();
        let mut log = Log::create(dir.path(), 1 << 20, Fsync::None).unwrap();
        for p in payloads(10) {
            log.append(&p).unwrap();
        }
        drop(log);
        let path = segment_path(dir.path(), 0);
        let len = std::fs::metadata(&path).unwrap().len();
        OpenOptions::new().write(true).open(&path).unwrap().set_len(len - 5).unwrap();
        let replay = super::replay(dir.path()).unwrap();
        assert_eq!(replay.records, payloads(9));
        assert_eq!(replay.cut_bytes, (HEADER + payloads(10)[9].len() - 5) as u64);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), replay.bytes_on_disk, "the tail is gone from disk");
        assert_eq!(super::replay(dir.path()).unwrap().cut_bytes, 0, "a second replay finds a clean log");
    }

    #[test]
    fn corruption_before_the_tail_is_an_error_not_a_silent_cut() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = Log::create(dir.path(), 64, Fsync::None).unwrap();
        for p in payloads(10) {
            log.append(&p).unwrap();
        }
        drop(log);
        let first = segment_path(dir.path(), 0);
        let mut bytes = std::fs::read(&first).unwrap();
        bytes[HEADER] ^= 0xFF;
        std::fs::write(&first, bytes).unwrap();
        let err = super::replay(dir.path()).unwrap_err();
        assert!(err.to_string().contains("corrupt record at byte 0"), "{err}");
    }
}
