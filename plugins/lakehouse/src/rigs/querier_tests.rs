//! The querier rig as plain Rust: every shape gives its exact answer, the declared-ordering arms do what seed
//! 000's table says (the attested oldest-first scan elides its sort and reaches a few files), the mechanism
//! columns come from the plan that ran (pruning off: nothing pruned, every file read), the footer cache arms
//! fetch what they should, and a file that attests an order it does not hold is caught.

use benchhost_plugin_api::testing;
use serde_json::{Value, json};

use super::*;

fn run(params: Value) -> Outcome {
    let all = with_defaults(params);
    testing::run::<Querier>(all.clone(), 3).unwrap_or_else(|e| panic!("{all}: {e}")).outcome
}

/// As [`run`], on one thread as `run --instructions` runs it: which files a top-k prunes depends on whether a
/// file opens before or after the threshold tightens, which on two workers depends on the machine's load.
fn run_on_one_thread(params: Value) -> Outcome {
    let all = with_defaults(params);
    testing::run_counting::<Querier>(all.clone(), 3).unwrap_or_else(|e| panic!("{all}: {e}")).outcome
}

fn with_defaults(params: Value) -> Value {
    let mut all = json!({"storage": "memory", "workers": 2});
    all.as_object_mut().unwrap().extend(params.as_object().unwrap().clone());
    all
}

#[test]
fn every_shape_answers_exactly() {
    // regression (issue 81): shapes that look up no trace recorded `trace_rows_missed = 0`: absent, not 0.
    for (shape, rows, missed) in [
        ("lookup_by_id", 3, Some(0)),
        ("lookup_by_id_windowed", 1, Some(2)),
        ("lookup_via_index", 3, Some(0)),
        ("trace_search_groups", 20, None),
        ("recent_first_topk", 20, None),
        ("oldest_first_topk", 20, None),
        ("ordered_full_scan", 60_000, None),
    ] {
        let outcome = run(json!({ "shape": shape }));
        let c = &outcome.counters;
        assert_eq!((c["rows"], c["rows_out"]), (rows, rows), "{shape}: {c:?}");
        assert_eq!(c.get("trace_rows_missed").copied(), missed, "{shape}: {c:?}");
        // Only a statement that asks for an order has a sort to keep or elide.
        let ordered = ["recent_first_topk", "oldest_first_topk", "ordered_full_scan"].contains(&shape);
        assert_eq!(c.contains_key("sorts_kept"), ordered, "{shape}: {c:?}");
        assert_eq!(
            outcome.note.as_deref().is_some_and(|n| n.contains("sort ")),
            ordered,
            "{shape}: {:?}",
            outcome.note
        );
        assert!(c["manifests_read"] > 0, "{shape}: manifests are read on every query: {c:?}");
        assert!(outcome.note.as_deref().is_some_and(|n| n.contains("files reached")), "{shape}");
    }
}

#[test]
fn the_declared_ordering_arms_do_what_the_seed_table_says() {
    // On one thread, as `run --instructions` runs the rig: which files a TopK prunes depends on which files open
    // after its threshold tightens, and on two workers that depends on the machine's load.
    let arm = |shape: &str, order: &str| run_on_one_thread(json!({ "shape": shape, "order": order })).counters;
    // `sort_kept` is the share of timed queries whose plan kept a sort: none, or every one of the three.
    let kept = |c: &std::collections::BTreeMap<String, u64>| match (c["sorts_kept"], c["queries"]) {
        (0, _) => 0,
        (k, q) if k == q => 1,
        _ => panic!("some queries kept a sort and others not: {c:?}"),
    };
    for order in ["attested", "attested_split_off"] {
        // Oldest first matches the declared order: no sort, and the limit stops after the first files.
        let c = arm("oldest_first_topk", order);
        assert_eq!((kept(&c), c["files_reached"]), (0, 4), "{order}: {c:?}");
        // A full ordered scan elides the sort too, and reads every file.
        let c = arm("ordered_full_scan", order);
        assert_eq!((kept(&c), c["files_read"]), (0, 60), "{order}: {c:?}");
    }
    // Unattested, a TopK reads the oldest file first and its threshold prunes every other.
    let c = arm("oldest_first_topk", "unattested");
    assert_eq!((kept(&c), c["files_reached"], c["files_pruned"]), (1, 60, 59), "{c:?}");
    // Recent first keeps a TopK in every arm, attested or not, and reads each group's files newest first: the
    // heap fills from the first file of each group and its threshold prunes the rest, as the seed's 56-59.
    for order in ["attested", "attested_split_off", "unattested"] {
        let c = arm("recent_first_topk", order);
        assert_eq!((kept(&c), c["files_reached"]), (1, 60), "{order}: {c:?}");
        assert!(c["files_pruned"] >= 56, "{order}: {c:?}");
    }
}

#[test]
fn datafusion_53_reverses_a_declared_order_only_for_its_exact_reverse_nulls_included() {
    // Why the querier's session orders a top-k's files itself ([`crate::scan::topk_order`]): without it, recent
    // first prunes nothing on the attested table, since `ORDER BY timestamp DESC` means NULLS FIRST, which is
    // not the reverse of the declared `timestamp ASC NULLS FIRST`. Asked NULLS LAST, DataFusion 53 reverses each
    // group's files, reads the newest first, and the TopK's threshold prunes every other file.
    // One thread and one partition: over an in-memory store every read is ready when polled, so which files
    // open before the threshold tightens is fixed by the plan, not by how busy the machine is (two workers and
    // two partitions pruned 56-58 files idle and 25 under CI's load).
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pruned = |nulls: &str| {
        runtime.block_on(async {
            let warehouse = Warehouse::new(Storage::Memory, dir.path()).await.unwrap();
            let name = format!("spans_{}", nulls.replace(' ', "_").to_lowercase());
            let mut table =
                warehouse.create_ordered(&name, crate::table::warehouse::Layout::Unpartitioned, true).await.unwrap();
            for file in crate::table::corpus::sequential_files() {
                table = warehouse.append(&table, &file).await.unwrap();
            }
            let store = IcebergStore::new(warehouse.file_io(), IcebergStore::prefix_of(&warehouse.location));
            let ctx = Config { topk_file_order: false, ..Config::querier(1) }.session(store).unwrap();
            ctx.register_table(SCANNED, Arc::new(IcebergParquetTable::new(table).unwrap())).unwrap();
            let sql =
                format!("SELECT trace_id, span_id, timestamp FROM {SCANNED} ORDER BY timestamp DESC {nulls} LIMIT 20");
            let plan = ctx.sql(&sql).await.unwrap().create_physical_plan().await.unwrap();
            let batches = datafusion::physical_plan::collect(plan.clone(), ctx.task_ctx()).await.unwrap();
            Shape::RecentFirstTopk.check(&batches).unwrap();
            Facts::of(&plan).files_pruned
        })
    };
    let (first, last) = (pruned("NULLS FIRST"), pruned("NULLS LAST"));
    assert_eq!(first, 0, "nothing is reversed, so each file opens ahead of the rows that would prune it");
    // Reversed, the newest file is read first and its 20 rows set a threshold no other file passes.
    assert_eq!(last, 59);
}

#[test]
fn with_pruning_off_nothing_is_pruned_and_every_file_is_read() {
    let on = run_on_one_thread(json!({ "shape": "oldest_first_topk" })).counters;
    let off = run(json!({ "shape": "oldest_first_topk", "pruning": false })).counters;
    assert_eq!(on["files_pruned"], 59, "{on:?}");
    assert_eq!((off["files_reached"], off["files_pruned"], off["files_read"]), (60, 0, 60), "{off:?}");
}

#[test]
fn a_point_index_narrows_the_lookup_to_the_files_that_hold_the_trace() {
    let unbounded = run(json!({ "shape": "lookup_by_id" })).counters;
    let indexed = run(json!({ "shape": "lookup_via_index" })).counters;
    assert_eq!(unbounded["files_total"], 18);
    // regression: the indexed lookup read `files_total` off a provider it had swapped out, and said 0.
    assert_eq!(indexed["files_total"], 18, "the snapshot's files, whatever the index chose: {indexed:?}");
    assert_eq!(indexed["files_reached"], 3, "the three writes of the target: {indexed:?}");
    assert!(unbounded["files_reached"] > 3, "{unbounded:?}");
}

#[test]
fn a_time_window_skips_manifests_and_files_at_planning() {
    let count = |c: &std::collections::BTreeMap<String, u64>| {
        (c["manifests_read"], c["manifests_pruned"], c["files_total"], c["files_planned"])
    };
    // One manifest per append. No partition holds a trace id: every manifest is read, every file planned (only
    // bloom filters can help).
    let unbounded = run(json!({ "shape": "lookup_by_id" })).counters;
    assert_eq!(count(&unbounded), (18, 0, 18, 18), "{unbounded:?}");
    // ±1 h around 12:30 of day 0 is hours 11-13: the target's first write and the ordinary file at 12:00.
    let windowed = run(json!({ "shape": "lookup_by_id_windowed" })).counters;
    assert_eq!(count(&windowed), (2, 16, 18, 2), "{windowed:?}");
    // Without pruning nothing is skipped, at planning either.
    let off = run(json!({ "shape": "lookup_by_id_windowed", "pruning": false })).counters;
    assert_eq!(count(&off), (18, 0, 18, 18), "{off:?}");
}

#[test]
fn warm_footers_are_not_fetched_again_cold_and_off_ones_are() {
    let fetched =
        |cache: &str| run(json!({ "shape": "lookup_by_id", "footer_cache": cache })).counters["bytes_fetched"];
    let (warm, cold, off) = (fetched("warm"), fetched("cold"), fetched("off"));
    assert!(warm < cold && warm < off, "warm {warm}, cold {cold}, off {off}");
}

#[test]
fn an_order_on_a_shape_that_has_none_is_refused_naming_both() {
    let params = json!({"shape": "lookup_by_id", "order": "attested", "footer_cache": "warm", "pruning": true,
        "storage": "memory", "workers": 2});
    let err = Querier::setup(serde_json::from_value(params).unwrap(), &SetupContext::default()).err().unwrap();
    assert_eq!(err.kind, benchhost_plugin_api::ErrorKind::InvalidParams);
    assert_eq!(err.message, "order = attested applies to the ordered shapes only (shape = lookup_by_id)");
}

#[test]
fn a_file_that_attests_an_order_it_does_not_hold_is_caught() {
    // An ingester that declares the order without sorting: its file's rows are reversed. The scan trusts the
    // declaration and elides the sort; the answer's order check is what catches it.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let err = runtime.block_on(async {
        let warehouse = Warehouse::new(Storage::Memory, dir.path()).await.unwrap();
        let mut table = warehouse
            .create_ordered("spans_sorted", crate::table::warehouse::Layout::Unpartitioned, true)
            .await
            .unwrap();
        let mut files = crate::table::corpus::sequential_files();
        files[0].reverse();
        for file in &files {
            table = warehouse.append(&table, file).await.unwrap();
        }
        let store = IcebergStore::new(warehouse.file_io(), IcebergStore::prefix_of(&warehouse.location));
        let ctx = Config::querier(2).session(store).unwrap();
        ctx.register_table(SCANNED, Arc::new(IcebergParquetTable::new(table).unwrap())).unwrap();
        let batches = ctx.sql(&Shape::OldestFirstTopk.sql(SCANNED, 0)).await.unwrap().collect().await.unwrap();
        Shape::OldestFirstTopk.check(&batches).unwrap_err()
    });
    assert!(err.starts_with("row 0 is "), "{err}");
}

#[test]
fn instances_that_share_a_seed_dir_seed_once_and_scan_the_same_table() {
    // In memory each instance copies the kept table; on disk every instance reads the kept files in place.
    for (storage, key) in [("memory", "querier-spans_sorted"), ("fs", "querier-spans_sorted-on-disk")] {
        let dir = tempfile::tempdir().unwrap();
        let seeds = dir.path().join("seeds");
        let outcome = |instance: &str| {
            let ctx = SetupContext {
                scratch_dir: dir.path().join(instance),
                quick: true,
                seed_dir: Some(seeds.clone()),
                counting: false,
                window_ns: None,
            };
            let params = json!({"shape": "ordered_full_scan", "order": "attested", "footer_cache": "cold",
                "pruning": true, "storage": storage, "workers": 2});
            let mut rig = Querier::setup(serde_json::from_value(params).unwrap(), &ctx).unwrap();
            rig.iterate().unwrap();
            let location = rig.warehouse.location.clone();
            (rig.teardown().unwrap().counters, location)
        };
        let (first, at) = outcome("a");
        let pointer = seeds.join(key).join("metadata-location");
        let kept_at = std::fs::metadata(&pointer).unwrap().modified().unwrap();
        let (second, second_at) = outcome("b");
        assert_eq!(std::fs::metadata(&pointer).unwrap().modified().unwrap(), kept_at, "{storage}: built again");
        assert_eq!(std::fs::read_dir(&seeds).unwrap().count(), 1, "{storage}: one seed, no draft left");
        for counter in ["rows_out", "files_total", "files_read", "bytes_scanned", "manifests_read"] {
            assert_eq!(first[counter], second[counter], "{storage}: {counter}");
        }
        assert_eq!((second["rows_out"], second["files_total"]), (60_000, 60), "{storage}");
        if storage == "fs" {
            let place = seeds.join(key).join("files");
            assert_eq!((&at, &second_at), (&place.display().to_string(), &place.display().to_string()));
            let data = place.join("bench/spans_sorted/data");
            assert_eq!(std::fs::read_dir(&data).unwrap().count(), 60, "{}", data.display());
        }
    }
}
