use std::collections::{BTreeMap, HashSet};

use benchhost_record::Record;

use super::*;
use crate::location::Location;
use crate::store::Warehouse;

const DAY_MS: u64 = 86_400_000;

/// A `wal` record of `bench` run at `ts_ms` (each its own identity), as the row publish makes of it.
fn row(bench: &str, ts_ms: u64, i: i64) -> Row {
    let mut record = Record::point_for_tests(ts_ms, i, 1.0);
    record.bench = bench.to_string();
    Row::of(&record, &record.to_line())
}

/// Writes `chunks` through one `PartitionWriters` into a new warehouse: the data files, closed.
fn written(chunks: Vec<Vec<Row>>) -> Vec<DataFile> {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let warehouse = Warehouse::open(&Location::Dir(dir.path().to_owned())).await.unwrap();
        let mut files = PartitionWriters::new(&warehouse.table().await.unwrap()).unwrap();
        for rows in chunks {
            files.write(rows).await.unwrap();
        }
        files.close().await.unwrap()
    })
}

fn records_by_partition(files: &[DataFile]) -> BTreeMap<String, u64> {
    let mut by = BTreeMap::new();
    for file in files {
        *by.entry(format!("{:?}", file.partition())).or_default() += file.record_count();
    }
    by
}

#[test]
fn a_partitions_records_of_every_chunk_land_in_one_file() {
    // Six chunks, each with records of two rigs in one month.
    let chunks = (0..6)
        .map(|c| {
            (0..10).map(|i| row(if i % 2 == 0 { "wal" } else { "ingest" }, c * DAY_MS, c as i64 * 10 + i)).collect()
        })
        .collect();
    let files = written(chunks);
    assert_eq!(files.len(), 2, "one file per partition");
    assert_eq!(records_by_partition(&files).into_values().collect::<Vec<_>>(), [30, 30]);
    let paths: HashSet<&str> = files.iter().map(|f| f.file_path()).collect();
    assert_eq!(paths.len(), 2);
}

#[test]
fn past_the_open_limit_the_least_recent_files_close_and_no_row_is_lost() {
    // Three chunks, each with one record in each of 40 months: 40 partitions open after the first chunk, 8 over
    // the limit; those 8 are closed and opened again (as new files) by the next chunk, and so on.
    let months = 40;
    let chunks = (0..3)
        .map(|c| (0..months).map(|m| row("wal", m * 31 * DAY_MS + c * DAY_MS, (c * months + m) as i64)).collect())
        .collect();
    let files = written(chunks);
    let by_partition = records_by_partition(&files);
    assert_eq!(by_partition.len(), months as usize);
    assert!(by_partition.values().all(|&n| n == 3), "{by_partition:?}");
    assert_eq!(files.len(), months as usize + 2 * (months as usize - OPEN));
    let paths: HashSet<&str> = files.iter().map(|f| f.file_path()).collect();
    assert_eq!(paths.len(), files.len(), "a file opened again has a new name");
}
