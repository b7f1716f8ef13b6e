//! An Iceberg `Storage` that counts what passes through it, wrapped around the crate's own memory or
//! local-filesystem storage.
//!
//! Neither iceberg 0.10.1 nor iceberg-datafusion exposes I/O metrics for a DataFusion scan (the scan node has
//! no `metrics()`, and `to_arrow()` drops the reader's byte count), and the per-table manifest cache has no
//! hit counter. Counting at the storage seam sees every byte the engine really fetches: data file ranges,
//! manifests and manifest lists (each whole-object `read` of an `.avro` file is a manifest cache miss, since
//! cached manifests are never read again).

use std::collections::{BTreeSet, HashSet};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use iceberg::io::{
    FileMetadata, FileRead, FileWrite, InputFile, LocalFsStorage, MemoryStorage, OutputFile, Storage, StorageConfig,
    StorageFactory,
};
use serde::{Deserialize, Serialize};

/// What went through the storage since the counters were made (or last [`IoCounters::take`]n).
#[derive(Debug, Default)]
pub struct IoCounters {
    data_bytes_read: AtomicU64,
    data_files: Mutex<HashSet<String>>,
    manifest_lists_read: AtomicU64,
    manifests_read: AtomicU64,
    bytes_written: AtomicU64,
    /// Every path written while `recording`, so a seeded warehouse can be kept (see [`crate::table::snapshot`]): the
    /// crate's storages cannot list their files. Off unless asked for, so timed writes pay nothing for it.
    recording: AtomicBool,
    written: Mutex<BTreeSet<String>>,
}

/// A snapshot of the counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Io {
    /// Bytes of Parquet data files fetched (footers, column chunks, whole small files).
    pub data_bytes_read: u64,
    /// Distinct data files of which at least one byte was fetched.
    pub data_files_read: u64,
    /// Whole-object reads of manifest lists (`snap-*.avro`).
    pub manifest_lists_read: u64,
    /// Whole-object reads of manifests (the other `.avro` files): each one is a manifest cache miss, or a
    /// manifest that planning did not skip on its partition summaries.
    pub manifests_read: u64,
    /// Bytes written, data and metadata.
    pub bytes_written: u64,
}

impl IoCounters {
    /// The counts so far, and zero them.
    pub fn take(&self) -> Io {
        Io {
            data_bytes_read: self.data_bytes_read.swap(0, Relaxed),
            data_files_read: self.data_files.lock().map_or(0, |mut files| files.drain().count() as u64),
            manifest_lists_read: self.manifest_lists_read.swap(0, Relaxed),
            manifests_read: self.manifests_read.swap(0, Relaxed),
            bytes_written: self.bytes_written.swap(0, Relaxed),
        }
    }

    /// Counters that also record the path of every write, for [`IoCounters::written`].
    pub fn recording() -> Self {
        IoCounters { recording: AtomicBool::new(true), ..IoCounters::default() }
    }

    /// The paths written so far, sorted (none unless made [`IoCounters::recording`]).
    pub fn written(&self) -> Vec<String> {
        self.written.lock().map_or_else(|_| Vec::new(), |paths| paths.iter().cloned().collect())
    }

    fn wrote(&self, path: &str) {
        if self.recording.load(Relaxed)
            && let Ok(mut paths) = self.written.lock()
        {
            paths.insert(path.to_string());
        }
    }

    fn read(&self, path: &str, bytes: u64) {
        if path.ends_with(".parquet") {
            self.data_bytes_read.fetch_add(bytes, Relaxed);
            if let Ok(mut files) = self.data_files.lock()
                && !files.contains(path)
            {
                files.insert(path.to_string());
            }
        } else if path.ends_with(".avro") {
            // Iceberg names a manifest list `snap-{snapshot id}-{attempt}-{uuid}.avro`, a manifest `{uuid}-m{n}.avro`.
            let list = path.rsplit('/').next().is_some_and(|name| name.starts_with("snap-"));
            let counter = if list { &self.manifest_lists_read } else { &self.manifests_read };
            counter.fetch_add(1, Relaxed);
        }
    }
}

/// Which storage holds the warehouse.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Backend {
    /// The crate's in-memory storage (what seed 000 measured).
    Memory(MemoryStorage),
    /// A local directory.
    Fs(LocalFsStorage),
}

/// A storage that forwards to its backend and counts. Clones share the backend and the counters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CountingStorage {
    backend: Backend,
    #[serde(skip)]
    counters: Arc<IoCounters>,
}

impl CountingStorage {
    /// A storage over `backend`, counting into `counters`.
    pub fn new(backend: Backend, counters: Arc<IoCounters>) -> Self {
        CountingStorage { backend, counters }
    }

    fn inner(&self) -> &dyn Storage {
        match &self.backend {
            Backend::Memory(s) => s,
            Backend::Fs(s) => s,
        }
    }
}

#[async_trait]
#[typetag::serde]
impl Storage for CountingStorage {
    async fn exists(&self, path: &str) -> iceberg::Result<bool> {
        self.inner().exists(path).await
    }
    async fn metadata(&self, path: &str) -> iceberg::Result<FileMetadata> {
        self.inner().metadata(path).await
    }
    async fn read(&self, path: &str) -> iceberg::Result<Bytes> {
        let bytes = self.inner().read(path).await?;
        self.counters.read(path, bytes.len() as u64);
        Ok(bytes)
    }
    async fn reader(&self, path: &str) -> iceberg::Result<Box<dyn FileRead>> {
        let inner = self.inner().reader(path).await?;
        Ok(Box::new(CountingRead { inner, path: path.to_string(), counters: self.counters.clone() }))
    }
    async fn write(&self, path: &str, bs: Bytes) -> iceberg::Result<()> {
        self.counters.bytes_written.fetch_add(bs.len() as u64, Relaxed);
        self.counters.wrote(path);
        self.inner().write(path, bs).await
    }
    async fn writer(&self, path: &str) -> iceberg::Result<Box<dyn FileWrite>> {
        let inner = self.inner().writer(path).await?;
        self.counters.wrote(path);
        Ok(Box::new(CountingWrite { inner, counters: self.counters.clone() }))
    }
    async fn delete(&self, path: &str) -> iceberg::Result<()> {
        self.inner().delete(path).await
    }
    async fn delete_prefix(&self, path: &str) -> iceberg::Result<()> {
        self.inner().delete_prefix(path).await
    }
    async fn delete_stream(&self, paths: BoxStream<'static, String>) -> iceberg::Result<()> {
        self.inner().delete_stream(paths).await
    }
    // Inputs and outputs must hold this wrapper, not the backend, or their reads would go uncounted.
    fn new_input(&self, path: &str) -> iceberg::Result<InputFile> {
        Ok(InputFile::new(Arc::new(self.clone()), path.to_string()))
    }
    fn new_output(&self, path: &str) -> iceberg::Result<OutputFile> {
        Ok(OutputFile::new(Arc::new(self.clone()), path.to_string()))
    }
}

struct CountingRead {
    inner: Box<dyn FileRead>,
    path: String,
    counters: Arc<IoCounters>,
}

#[async_trait]
impl FileRead for CountingRead {
    async fn read(&self, range: Range<u64>) -> iceberg::Result<Bytes> {
        let bytes = self.inner.read(range).await?;
        self.counters.read(&self.path, bytes.len() as u64);
        Ok(bytes)
    }
}

struct CountingWrite {
    inner: Box<dyn FileWrite>,
    counters: Arc<IoCounters>,
}

#[async_trait]
impl FileWrite for CountingWrite {
    async fn write(&mut self, bs: Bytes) -> iceberg::Result<()> {
        self.counters.bytes_written.fetch_add(bs.len() as u64, Relaxed);
        self.inner.write(bs).await
    }
    async fn close(&mut self) -> iceberg::Result<()> {
        self.inner.close().await
    }
}

/// Hands every FileIO of a catalog the same counting storage, so the catalog, its tables and their scans
/// share one store and one set of counters.
#[derive(Debug, Serialize, Deserialize)]
pub struct CountingFactory {
    storage: CountingStorage,
}

impl CountingFactory {
    /// A factory handing out `storage`.
    pub fn new(storage: CountingStorage) -> Self {
        CountingFactory { storage }
    }
}

#[typetag::serde]
impl StorageFactory for CountingFactory {
    fn build(&self, _: &StorageConfig) -> iceberg::Result<Arc<dyn Storage>> {
        Ok(Arc::new(self.storage.clone()))
    }
}
