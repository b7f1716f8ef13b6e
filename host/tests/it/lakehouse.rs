//! The lakehouse rigs through the real child-process path, on the repository's own matrix under `--quick`:
//! every cell a measurement whose invariants hold, with the mechanism (files, bytes, cache misses, sort) in it.

use crate::support::quick_run_of_repo_matrix;
use benchhost_record::Kind;

#[test]
fn compaction_rewrites_every_seeded_table_into_one_file_with_the_same_rows() {
    let records = quick_run_of_repo_matrix("compaction");
    let cells: Vec<String> = records
        .iter()
        .map(|r| format!("{}x{}/{}", r.variant["files"], r.variant["rows_per_file"], r.variant["storage"]))
        .collect();
    assert_eq!(cells, [r#"6x100/"memory""#, r#"6x100/"fs""#, r#"24x1000/"memory""#]);
    for r in &records {
        assert_eq!(r.kind, Kind::Measurement, "{:?}", r.failure);
        let checks: Vec<(&str, bool)> = r.checks.iter().map(|c| (c.invariant.as_str(), c.ok)).collect();
        assert_eq!(
            checks,
            [
                ("rows_after == rows_seeded", true),
                ("checksum_after == checksum_seeded", true),
                ("live_files_after == files_written", true)
            ]
        );
        assert_eq!(r.metrics["input_files"].value, r.variant["files"].as_f64().unwrap());
        assert_eq!(r.metrics["output_files"].value, 1.0);
        assert!(r.metrics["bytes_read"].value > 0.0 && r.metrics["bytes_written"].value > 0.0);
    }
}

#[test]
fn querier_answers_every_shape_and_each_cache_arm_hits_or_misses_as_declared() {
    let records = quick_run_of_repo_matrix("querier");
    assert_eq!(records.len(), 14);
    for r in &records {
        let arm = format!("{:?}", r.variant);
        assert_eq!(r.kind, Kind::Measurement, "{arm}: {:?}", r.failure);
        assert!(r.checks.iter().all(|c| c.ok), "{arm}: {:?}", r.checks);
        let cold = r.variant["cache"] == "cold";
        assert_eq!(r.metrics["manifest_reads"].value > 0.0, cold, "{arm}");
        assert!(r.metrics["planning_time"].value > 0.0, "{arm}");
        let shape = r.variant["shape"].as_str().unwrap();
        let sorted = ["recent_first_topk", "oldest_first_topk", "ordered_full_scan"].contains(&shape);
        assert_eq!(r.metrics["sort_kept"].value, if sorted { 1.0 } else { 0.0 }, "{arm}");
        let missed = if r.variant["shape"] == "lookup_by_id_windowed" { 2.0 } else { 0.0 };
        assert_eq!(r.metrics["trace_rows_missed"].value, missed, "{arm}");
        assert!(r.note.as_deref().is_some_and(|n| n.contains("in the snapshot")), "{arm}: {:?}", r.note);
    }
}
