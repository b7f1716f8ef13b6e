//! The compaction rig as plain Rust: every rewrite keeps the rows, leaves one live file, and a changed row
//! or a doubled append would be caught.

use benchhost_plugin_api::testing;
use serde_json::json;

use super::*;

#[test]
fn every_rewrite_keeps_the_rows_and_leaves_only_the_file_it_wrote() {
    // Both storages on the default current-thread runtime, and once on two worker threads.
    for (storage, workers) in [("memory", 0), ("fs", 0), ("memory", 2)] {
        let params = json!({"files": 6, "rows_per_file": 100, "storage": storage, "workers": workers});
        let report = testing::run::<Compaction>(params, 3).unwrap_or_else(|e| panic!("{storage} {workers}: {e}"));
        let c = &report.outcome.counters;
        assert_eq!((c["rewrites"], c["input_files"], c["output_files"]), (3, 6, 1), "{storage}");
        assert_eq!((c["rows"], c["rows_after"], c["rows_seeded"]), (600, 1800, 1800), "{storage}");
        assert_eq!(c["live_files_after"], 3, "{storage}");
        assert!(c["bytes_read"] > 0 && c["bytes_written"] > 0, "{storage}: {c:?}");
        for part in ["load_ns", "read_ns", "sort_ns", "write_ns", "commit_ns"] {
            assert!(c[part] > 0, "{storage}: {part} is reported: {c:?}");
        }
    }
}

/// The rig's own planner and timed rewrite, on one table.
fn rewrite_planned(rig: &Compaction, table: &mut Table) {
    rig.runtime.block_on(plan(table)).unwrap();
    table.planned = true;
    rig.runtime.block_on(execute(table)).unwrap();
}

#[test]
fn the_rewritten_file_is_in_key_order_and_a_file_out_of_it_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let mut rig = compaction("memory", dir.path());
    let mut table = rig.seed().unwrap();
    rewrite_planned(&rig, &mut table);
    let (batches, _) = rig.runtime.block_on(read_back(&table)).unwrap();
    assert_eq!(traces::first_out_of_key_order(&batches), None);
    rig.rewritten.push(table);
    rig.check_rewritten().unwrap();

    // A replace of the same rows, written in reverse: the rows and the files are right, the order is not.
    let mut table = rig.seed().unwrap();
    rig.runtime
        .block_on(async {
            let loaded = table.warehouse.catalog.load_table(&table.ident).await?;
            let old = replace::live_entries(&loaded).await?;
            let (batches, _) = read_back(&table).await?;
            let merged = arrow::compute::concat_batches(&batches[0].schema(), &batches)?;
            let reversed: Vec<u32> = (0..merged.num_rows() as u32).rev().collect();
            let reversed = arrow::compute::take_record_batch(&merged, &arrow::array::UInt32Array::from(reversed))?;
            let schema = warehouse::arrow_schema(&loaded)?;
            let new =
                warehouse::write_file(&loaded, RecordBatch::try_new(schema, reversed.columns().to_vec())?, 0).await?;
            table.written = new.iter().map(|f| f.file_path().to_string()).collect();
            replace::commit(table.warehouse.catalog.as_ref(), &loaded, &old, new).await?;
            Ok::<_, RigError>(())
        })
        .unwrap();
    rig.rewritten.push(table);
    let err = rig.check_rewritten().unwrap_err();
    assert_eq!(
        err.message,
        "the rewritten file is not in (timestamp, trace_id) order: row 1 comes before the row above it"
    );
}

#[test]
fn seeded_rows_out_of_key_order_come_out_sorted() {
    let schema = std::sync::Arc::new(iceberg::arrow::schema_to_arrow_schema(&traces::schema().unwrap()).unwrap());
    let mut spans = [traces::compaction_file(1, 5), traces::compaction_file(0, 5)].concat();
    spans.swap(0, 7);
    let batch = traces::to_batch(&schema, &spans).unwrap();
    assert!(traces::first_out_of_key_order(std::slice::from_ref(&batch)).is_some());
    let sorted = rewrite::sorted_by_key(&batch).unwrap();
    assert_eq!(traces::first_out_of_key_order(std::slice::from_ref(&sorted)), None);
    assert_eq!(Tally::of(&[sorted]), Tally::of(&[batch]), "the same rows");
}

fn compaction(storage: &str, dir: &std::path::Path) -> Compaction {
    Compaction::setup(
        serde_json::from_value(json!({"files": 3, "rows_per_file": 50, "storage": storage, "workers": 0})).unwrap(),
        &SetupContext {
            scratch_dir: dir.to_path_buf(),
            quick: true,
            seed_dir: Some(dir.join("seeds")),
            counting: false,
            window_ns: None,
        },
    )
    .unwrap()
}

#[test]
fn the_seeded_tally_is_what_a_plain_scan_reads() {
    // On disk each directory's first table is seeded and later ones copied from it; in memory each is a copy of
    // the seed kept for the run.
    for storage in ["fs", "memory"] {
        let dir = tempfile::tempdir().unwrap();
        let mut rig = compaction(storage, dir.path());
        let table = rig.seed().unwrap();
        // In the rig's runtime: iceberg spawns into the runtime a table was made in, and a current-thread
        // runtime runs those tasks only inside its own block_on.
        let (batches, live) = rig.runtime.block_on(read_back(&table)).unwrap();
        let tally = Tally::of(&batches);
        assert_eq!(tally, table.seeded, "{storage}");
        assert_eq!((tally.rows, live.len()), (150, 3), "{storage}");
    }
}

#[test]
fn tables_copied_from_one_kept_seed_do_not_share_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut rig = compaction("memory", dir.path());
    let (mut first, second) = (rig.seed().unwrap(), rig.seed().unwrap());
    rewrite_planned(&rig, &mut first);
    let (after, live) = rig.runtime.block_on(read_back(&first)).unwrap();
    assert_eq!((Tally::of(&after), live.len()), (first.seeded, 1));
    let (untouched, live) = rig.runtime.block_on(read_back(&second)).unwrap();
    assert_eq!((Tally::of(&untouched), live.len()), (second.seeded, 3), "the other copy still has its three files");
    // Built once, by the first instance; a second instance of the same library reads it.
    let seeds = dir.path().join("seeds");
    assert_eq!(std::fs::read_dir(&seeds).unwrap().count(), 1);
    assert_eq!(compaction("memory", dir.path()).seeded, first.seeded);
}

#[test]
fn a_directory_freed_by_its_check_takes_a_fresh_copy_of_its_seed() {
    let dir = tempfile::tempdir().unwrap();
    let mut rig = compaction("fs", dir.path());
    let (mut first, second) = (rig.seed().unwrap(), rig.seed().unwrap());
    assert_eq!((first.dir, second.dir), (Some(0), Some(1)));
    rewrite_planned(&rig, &mut first);
    rig.rewritten.push(first);
    rig.check_rewritten().unwrap();
    assert!(!dir.path().join("warehouse-0").exists(), "a checked table's directory is removed");
    // The next table goes into the freed directory, from that directory's seed: not seeded again, and on disk
    // with the three appended files, not the rewritten one.
    let third = rig.seed().unwrap();
    assert_eq!(third.dir, Some(0));
    assert!(matches!(&rig.seeds, Seeds::Directories { kept, .. } if kept.len() == 2));
    let (batches, live) = rig.runtime.block_on(read_back(&third)).unwrap();
    assert_eq!((Tally::of(&batches), live.len()), (rig.seeded, 3));
    let data = dir.path().join("warehouse-0/bench/traces/data");
    assert_eq!(std::fs::read_dir(&data).map(|files| files.count()).unwrap_or(0), 3, "{}", data.display());
}

#[test]
fn a_fast_append_of_the_merged_file_is_caught_as_doubled_rows() {
    // What simply appending the merged file (iceberg-rust's only action) would leave behind.
    let dir = tempfile::tempdir().unwrap();
    let params = json!({"files": 2, "rows_per_file": 10, "storage": "memory", "workers": 0});
    let mut rig = Compaction::setup(
        serde_json::from_value(params).unwrap(),
        &SetupContext { scratch_dir: dir.path().to_path_buf(), quick: true, seed_dir: None, ..SetupContext::default() },
    )
    .unwrap();
    let mut table = rig.seed().unwrap();
    rig.runtime
        .block_on(async {
            let loaded = table.warehouse.catalog.load_table(&table.ident).await?;
            let spans = [traces::compaction_file(0, 10), traces::compaction_file(1, 10)].concat();
            let appended = table.warehouse.append(&loaded, &spans).await?;
            let tasks: Vec<_> = appended.scan().build()?.plan_files().await?.try_collect().await?;
            table.written = tasks.iter().map(|t| t.data_file_path.clone()).collect();
            table.written.sort();
            Ok::<_, RigError>(())
        })
        .unwrap();
    rig.rewritten.push(table);
    let err = rig.check_rewritten().unwrap_err();
    assert!(err.message.starts_with("the rewrite changed the rows: 20 rows"), "{}", err.message);
    assert!(err.message.contains(", 40 with "), "{}", err.message);
}

#[test]
fn a_table_below_the_planners_threshold_is_no_candidate() {
    let dir = tempfile::tempdir().unwrap();
    let mut rig = compaction("fs", dir.path());
    rig.params.files = 2;
    let table = rig.seed().unwrap();
    let err = rig.runtime.block_on(plan(&table)).err().unwrap();
    assert_eq!(err.message, "2 live files: no candidate below the threshold of 3");
}
