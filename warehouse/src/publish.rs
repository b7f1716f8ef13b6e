//! Publishing results files: read in one pass on the cores (`benchhost_record::scan`), written as compressed Parquet a
//! chunk at a time (`partition_writers`: one file per partition, fed by every chunk), committed once. Memory is a few
//! chunks, the open files' row groups and 16 bytes per record (its identity), whatever the files' length.
//!
//! Publishing is idempotent: a record whose identity (as `merge` counts records) the table holds is not added again.
//! Before its commit, publish reads the identity column of the partitions its records fall in, and the commit lands on
//! exactly the table it checked or not at all (see `CheckedTableCatalog`); when another publisher committed first, it
//! checks again. So two publishers of one file, or the retry of a publisher killed mid-commit, add its records once. On
//! any error the files written so far are deleted: a failed publish leaves neither a record in the table nor a file (a
//! killed one leaves files no snapshot references: `gc` removes them).

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use benchhost_record::scan::each_record_with_text;
use iceberg::io::FileIO;
use iceberg::spec::DataFile;
use tokio::sync::mpsc;

use crate::partition_writers::PartitionWriters;
use crate::store::Warehouse;
use crate::table_identities::{CheckedFiles, IncomingRecords};
use crate::table_rows::{self, Row};

/// Records per chunk: ~64 MB of record text.
const CHUNK: usize = 32_768;
/// Commits that lose the compare-and-swap are checked and tried again this many times.
const ATTEMPTS: u32 = 50;

/// What a publish did.
#[derive(Debug)]
pub struct Published {
    /// Records added.
    pub records: usize,
    /// Records the warehouse held already (published before), not added again.
    pub held: usize,
    /// Records of the files that repeat one read before them (the same identity), not added twice.
    pub duplicates: usize,
    /// Parquet files written.
    pub files: usize,
    /// Commits tried: 1 unless another publisher committed first.
    pub attempts: u32,
}

/// What one attempt wrote, and the FileIO it wrote with (to remove it again).
struct Written {
    files: Vec<DataFile>,
    incoming: IncomingRecords,
    io: FileIO,
}

/// Appends every record of `files` that the warehouse does not hold to it, in one commit.
pub async fn publish(warehouse: &Warehouse, files: &[PathBuf]) -> Result<Published> {
    let mut held: HashSet<u128> = HashSet::new();
    let mut checked = CheckedFiles::default();
    let mut attempts = 0;
    loop {
        let written = write(warehouse, files, &held).await?;
        match land(warehouse, &written, &mut checked, &mut attempts).await {
            Ok(None) => {
                return Ok(Published {
                    records: written.incoming.ids.len(),
                    held: held.len(),
                    duplicates: written.incoming.duplicates,
                    files: written.files.len(),
                    attempts,
                });
            }
            // Some records are in already (published by another or by a killed attempt): written again without
            // them. Commits are all or nothing, so this happens at most once per publish that raced one of the
            // same records.
            Ok(Some(found)) => {
                table_rows::remove(&written.io, &written.files).await;
                held.extend(found);
            }
            Err(e) => {
                // The files go whatever the error, even one that stops the table from loading.
                table_rows::remove(&written.io, &written.files).await;
                return Err(e);
            }
        }
    }
}

/// Commits `written` on a table that holds none of its records: `None` once it landed, or the identities of
/// those it holds.
async fn land(
    warehouse: &Warehouse,
    written: &Written,
    checked: &mut CheckedFiles,
    attempts: &mut u32,
) -> Result<Option<HashSet<u128>>> {
    if written.incoming.ids.is_empty() {
        return Ok(None);
    }
    for _ in 0..ATTEMPTS {
        *attempts += 1;
        let table = warehouse.table().await?;
        let found = checked.held(&table, &written.incoming).await?;
        if !found.is_empty() {
            return Ok(Some(found));
        }
        if warehouse.commit_on(table, written.files.clone()).await? {
            return Ok(None);
        }
        // Publishers that lost to the same commit spread out before they load again.
        let jitter = uuid::Uuid::new_v4().as_u128() % 20;
        tokio::time::sleep(Duration::from_millis(5 * u64::from(*attempts) + jitter as u64)).await;
    }
    bail!("the commit lost the race {ATTEMPTS} times in a row; publish again (it adds nothing twice)")
}

/// Writes the records of `files` but those `held`, and each identity once, as data files of the table.
async fn write(warehouse: &Warehouse, files: &[PathBuf], held: &HashSet<u128>) -> Result<Written> {
    let table = warehouse.table().await?;
    let (tx, mut rx) = mpsc::channel::<Vec<Row>>(2);
    let (inputs, held) = (files.to_vec(), held.clone());
    let reader = tokio::task::spawn_blocking(move || read_chunks(&inputs, &held, &tx));
    let mut written = PartitionWriters::new(&table)?;
    let mut failed = None;
    while let Some(rows) = rx.recv().await {
        if let Err(e) = written.write(rows).await {
            failed = Some(e);
            break;
        }
    }
    drop(rx);
    let read = reader.await.map_err(|e| anyhow!("the reader stopped: {e}"));
    let error = match (failed, read) {
        (Some(e), _) => e,
        (None, Err(e)) | (None, Ok(Err(e))) => e,
        (None, Ok(Ok(incoming))) => {
            let io = written.io().clone();
            return Ok(Written { files: written.close().await?, incoming, io });
        }
    };
    written.abandon().await;
    Err(error)
}

/// Reads `files` into chunks of rows, sent as they fill: each identity once, and none of `held`.
fn read_chunks(files: &[PathBuf], held: &HashSet<u128>, tx: &mpsc::Sender<Vec<Row>>) -> Result<IncomingRecords> {
    let mut incoming = IncomingRecords { first_ms: u64::MAX, ..IncomingRecords::default() };
    let mut chunk = Vec::with_capacity(CHUNK);
    for file in files {
        each_record_with_text(
            file,
            |entry, text| Row::of(&entry.record, text),
            |row| {
                if held.contains(&row.identity) {
                    return Ok(());
                }
                if !incoming.ids.insert(row.identity) {
                    incoming.duplicates += 1;
                    return Ok(());
                }
                incoming.first_ms = incoming.first_ms.min(row.ts_ms);
                incoming.last_ms = incoming.last_ms.max(row.ts_ms);
                if !incoming.benches.contains(&row.bench) {
                    incoming.benches.insert(row.bench.clone());
                }
                chunk.push(row);
                if chunk.len() == CHUNK {
                    send(tx, std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)))?;
                }
                Ok(())
            },
        )?;
        // Each file's last chunk is written before the next file is read.
        if !chunk.is_empty() {
            send(tx, std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)))?;
        }
    }
    Ok(incoming)
}

fn send(tx: &mpsc::Sender<Vec<Row>>, chunk: Vec<Row>) -> Result<()> {
    tx.blocking_send(chunk).map_err(|_| anyhow!("the writer stopped"))
}
