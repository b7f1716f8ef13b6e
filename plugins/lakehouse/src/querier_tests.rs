//! The querier rig as plain Rust: every shape gives its exact answer on both caches, the cold arm misses on
//! every query and the warm one never does, and the scan facts say what the plan did.

use benchhost_plugin_api::testing;
use serde_json::json;

use super::*;

fn run(shape: &str, cache: &str) -> Outcome {
    testing::run::<Querier>(json!({"shape": shape, "cache": cache, "storage": "memory"}), 3)
        .unwrap_or_else(|e| panic!("{shape}/{cache}: {e}"))
        .outcome
}

#[test]
fn every_shape_answers_exactly_and_the_cache_arms_hit_and_miss_as_declared() {
    for (shape, rows, missed, sort) in [
        ("lookup_by_id", 3, 0, 0),
        ("lookup_by_id_windowed", 1, 2, 0),
        ("recent_first_topk", 20, 0, 1),
        ("oldest_first_topk", 20, 0, 1),
        ("trace_search_groups", 20, 0, 0),
    ] {
        for cache in ["warm", "cold"] {
            let outcome = run(shape, cache);
            let c = &outcome.counters;
            let arm = format!("{shape}/{cache}: {c:?}");
            assert_eq!((c["rows"], c["rows_out"], c["trace_rows_missed"]), (rows, rows, missed), "{arm}");
            assert_eq!(c["sort_kept"], sort, "{arm}");
            assert_eq!(c["cache_violations"], 0, "{arm}");
            assert_eq!(c["manifest_reads"] > 0, cache == "cold", "{arm}");
            assert!(c["bytes_scanned"] > 0 && c["files_read"] > 0, "{arm}");
            assert!(outcome.note.as_deref().is_some_and(|n| n.contains("in the snapshot")), "{arm}");
        }
    }
}

#[test]
fn the_windowed_lookup_is_pruned_to_its_day_and_the_unbounded_one_plans_every_file() {
    let windowed = run("lookup_by_id_windowed", "warm").counters;
    let unbounded = run("lookup_by_id", "warm").counters;
    assert_eq!(unbounded["files_total"], 18);
    assert_eq!(windowed["files_total"], 18);
    // Partitions prune days 1 and 2 (12 files); timestamp statistics prune day 0's files 0 (00:00-05:33) and
    // 3 (16:40-22:13). Left: file 1 (05:33-11:06), file 2 (11:06-16:40), the filler (00:00-16:39), the target's
    // first write (12:00).
    assert_eq!(windowed["files_pruned"], 14, "{windowed:?}");
    assert!(windowed["files_read"] <= 4, "{windowed:?}");
}

#[test]
fn the_ordered_full_scan_returns_every_row_in_order() {
    let c = run("ordered_full_scan", "warm").counters;
    assert_eq!((c["rows_out"], c["files_total"], c["sort_kept"]), (60_000, 60, 1));
}

#[test]
fn a_wrong_order_is_a_verification_failure() {
    let spans = corpus::sequential_files().concat();
    let schema = Arc::new(arrow::datatypes::Schema::new(vec![
        arrow::datatypes::Field::new("trace_id", arrow::datatypes::DataType::Utf8, false),
        arrow::datatypes::Field::new("span_id", arrow::datatypes::DataType::Utf8, false),
        arrow::datatypes::Field::new(
            "timestamp",
            arrow::datatypes::DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, None),
            false,
        ),
    ]));
    let batch = |rows: &[crate::traces::Span]| {
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(arrow::array::StringArray::from_iter_values(rows.iter().map(|s| &s.trace_id))),
                Arc::new(arrow::array::StringArray::from_iter_values(rows.iter().map(|s| &s.span_id))),
                Arc::new(arrow::array::TimestampMicrosecondArray::from_iter_values(
                    rows.iter().map(|s| s.timestamp_us),
                )),
            ],
        )
        .unwrap()
    };
    let first: Vec<_> = spans[..20].to_vec();
    assert_eq!(Shape::OldestFirstTopk.check(&[batch(&first)]).unwrap().rows, 20);
    let mut swapped = first.clone();
    swapped.swap(3, 4);
    let err = Shape::OldestFirstTopk.check(&[batch(&swapped)]).unwrap_err();
    assert!(err.starts_with("row 3 is "), "{err}");
    let err = Shape::RecentFirstTopk.check(&[batch(&first)]).unwrap_err();
    assert!(err.starts_with("row 0 is "), "{err}");
}

#[test]
fn instances_that_share_a_seed_dir_seed_once_and_scan_the_same_table() {
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
        let params = serde_json::from_value(
            json!({"shape": "ordered_full_scan", "cache": "cold", "storage": "memory", "workers": 2}),
        );
        let mut rig = Querier::setup(params.unwrap(), &ctx).unwrap();
        rig.iterate().unwrap();
        rig.teardown().unwrap().counters
    };
    let first = outcome("a");
    let pointer = seeds.join("querier-spans/metadata-location");
    let kept_at = std::fs::metadata(&pointer).unwrap().modified().unwrap();
    let second = outcome("b");
    assert_eq!(std::fs::metadata(&pointer).unwrap().modified().unwrap(), kept_at, "the seed was not built again");
    assert_eq!(std::fs::read_dir(&seeds).unwrap().count(), 1, "one seed, no draft left");
    for counter in ["rows_out", "files_total", "files_read", "bytes_scanned", "manifest_reads"] {
        assert_eq!(first[counter], second[counter], "{counter}");
    }
    assert_eq!((second["rows_out"], second["files_total"]), (60_000, 60));
}
