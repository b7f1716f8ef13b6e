//! The table's files as DataFusion reads them: an `ObjectStore` over the warehouse's own Iceberg `FileIO`, so
//! a scan's every byte passes the same storage, and the same counters ([`crate::table::counting`]), as the catalog's
//! writes and the manifests' reads. Read-only: a scan only ever gets (ranges of) objects.

use std::fmt;
use std::ops::Range;

use async_trait::async_trait;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::object_store::path::Path;
use datafusion::object_store::{
    self as os, Attributes, CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use futures::stream::{self, BoxStream, StreamExt};
use iceberg::io::FileIO;

/// The URL DataFusion knows the store by.
pub const URL: &str = "iceberg://warehouse";

/// The store's URL, parsed.
pub fn url() -> ObjectStoreUrl {
    ObjectStoreUrl::parse(URL).expect("a scheme and a host")
}

/// Reads objects through an Iceberg `FileIO`.
pub struct IcebergStore {
    file_io: FileIO,
    /// What an Iceberg location has before the object path: `memory://` or `/`.
    prefix: String,
}

impl IcebergStore {
    /// A store over `file_io`, whose locations start with `prefix` and then the object path.
    pub fn new(file_io: FileIO, prefix: &str) -> IcebergStore {
        IcebergStore { file_io, prefix: prefix.to_string() }
    }

    /// The object path of an Iceberg `location` (`memory://warehouse/a.parquet` is `warehouse/a.parquet`).
    pub fn path_of(location: &str) -> String {
        location.strip_prefix("memory://").unwrap_or(location).trim_start_matches('/').to_string()
    }

    /// What an Iceberg location starts with in a warehouse at `warehouse` (its location).
    pub fn prefix_of(warehouse: &str) -> &'static str {
        if warehouse.starts_with("memory://") { "memory://" } else { "/" }
    }

    fn location(&self, path: &Path) -> String {
        format!("{}{path}", self.prefix)
    }

    async fn read(&self, location: &str, options: &GetOptions) -> iceberg::Result<(u64, Range<u64>, bytes::Bytes)> {
        let input = self.file_io.new_input(location)?;
        let size = input.metadata().await?.size;
        let range = match &options.range {
            Some(range) => range.as_range(size).map_err(|e| {
                iceberg::Error::new(iceberg::ErrorKind::DataInvalid, format!("range of {location}: {e}"))
            })?,
            None => 0..size,
        };
        let bytes = if options.head { bytes::Bytes::new() } else { input.reader().await?.read(range.clone()).await? };
        Ok((size, range, bytes))
    }
}

impl fmt::Debug for IcebergStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IcebergStore({})", self.prefix)
    }
}

impl fmt::Display for IcebergStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IcebergStore({})", self.prefix)
    }
}

fn refused(operation: &str) -> os::Error {
    os::Error::NotImplemented { operation: operation.to_string(), implementer: "IcebergStore (read-only)".into() }
}

#[async_trait]
impl ObjectStore for IcebergStore {
    async fn put_opts(&self, _: &Path, _: PutPayload, _: PutOptions) -> os::Result<PutResult> {
        Err(refused("put"))
    }

    async fn put_multipart_opts(&self, _: &Path, _: PutMultipartOptions) -> os::Result<Box<dyn MultipartUpload>> {
        Err(refused("put_multipart"))
    }

    async fn get_opts(&self, path: &Path, options: GetOptions) -> os::Result<GetResult> {
        let location = self.location(path);
        let (size, range, bytes) = self.read(&location, &options).await.map_err(|e| match e.kind() {
            iceberg::ErrorKind::FeatureUnsupported => refused("get"),
            _ => os::Error::Generic { store: "iceberg", source: Box::new(e) },
        })?;
        // Every file of a snapshot is immutable: one fixed modification time keys the footer cache by path and size.
        let meta =
            ObjectMeta { location: path.clone(), last_modified: Default::default(), size, e_tag: None, version: None };
        let range = if options.head { 0..0 } else { range };
        let payload = GetResultPayload::Stream(stream::once(async move { Ok(bytes) }).boxed());
        Ok(GetResult { payload, meta, range, attributes: Attributes::default() })
    }

    fn delete_stream(&self, _: BoxStream<'static, os::Result<Path>>) -> BoxStream<'static, os::Result<Path>> {
        stream::once(async { Err(refused("delete")) }).boxed()
    }

    fn list(&self, _: Option<&Path>) -> BoxStream<'static, os::Result<ObjectMeta>> {
        stream::once(async { Err(refused("list")) }).boxed()
    }

    async fn list_with_delimiter(&self, _: Option<&Path>) -> os::Result<ListResult> {
        Err(refused("list"))
    }

    async fn copy_opts(&self, _: &Path, _: &Path, _: CopyOptions) -> os::Result<()> {
        Err(refused("copy"))
    }
}
