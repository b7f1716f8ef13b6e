//! The IPC round trip itself, as SignalDB's `record_batch_to_bytes` / `bytes_to_record_batch`. Also compiled
//! into the harness benchmarks (`#[path]`), so both measure the very same code.

use std::io::Cursor;

use arrow::error::ArrowError;
use arrow::ipc::CompressionType;
use arrow::ipc::reader::StreamReader;
use arrow::ipc::writer::{IpcWriteOptions, StreamWriter};
use arrow::record_batch::RecordBatch;
use benchhost_plugin_api::RigError;
use serde::Deserialize;

/// Codec of the IPC body buffers.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compression {
    /// Uncompressed.
    None,
    /// LZ4 frame.
    Lz4,
    /// Zstandard (SignalDB's choice).
    Zstd,
}

impl Compression {
    fn ipc(self) -> Option<CompressionType> {
        match self {
            Compression::None => None,
            Compression::Lz4 => Some(CompressionType::LZ4_FRAME),
            Compression::Zstd => Some(CompressionType::ZSTD),
        }
    }
}

/// Writes `batch` as a one-batch IPC stream into a new buffer.
pub fn encode(batch: &RecordBatch, compression: Compression) -> Result<Vec<u8>, ArrowError> {
    let options = IpcWriteOptions::default().try_with_compression(compression.ipc())?;
    let mut writer = StreamWriter::try_new_with_options(Vec::new(), batch.schema_ref(), options)?;
    writer.write(batch)?;
    writer.into_inner()
}

/// Reads the first batch of an IPC stream.
pub fn decode(bytes: &[u8]) -> Result<RecordBatch, RigError> {
    let mut reader = StreamReader::try_new(Cursor::new(bytes), None)?;
    reader.next().ok_or_else(|| RigError::verification("the IPC stream holds no batch"))?.map_err(Into::into)
}
