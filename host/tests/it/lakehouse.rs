//! The lakehouse rigs through the real child-process path, on the repository's own matrix under `--quick`:
//! every cell a measurement whose invariants hold, with the mechanism (files, bytes, cache misses, sort) in it.

use crate::support::{quick_run_of_repo_matrix, quick_run_of_repo_matrix_with, short_run_of_repo_matrix_with};
use benchhost_record::Kind;

#[test]
fn compaction_rewrites_every_seeded_table_into_one_file_with_the_same_rows() {
    // --quick runs both blocks in memory; the seed's table on disk is run here too.
    let mut records = quick_run_of_repo_matrix("compaction");
    records.extend(quick_run_of_repo_matrix_with("compaction", &["--set", "storage=fs", "rows_per_file=100 "]));
    let cells: Vec<String> = records
        .iter()
        .map(|r| format!("{}x{}/{}", r.variant["files"], r.variant["rows_per_file"], r.variant["storage"]))
        .collect();
    assert_eq!(cells, [r#"6x100/"memory""#, r#"24x1000/"memory""#, r#"6x100/"fs""#]);
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
        for part in ["load_time", "read_time", "sort_time", "write_time", "commit_time"] {
            assert!(r.metrics[part].value > 0.0, "{part} is in the record: {:?}", r.metrics.keys());
        }
    }
}

#[test]
fn querier_answers_every_shape_with_the_mechanism_read_from_the_plan_that_ran() {
    // --quick runs the ordering block on oldest first attested only; every shape and order is run here too.
    let mut records = quick_run_of_repo_matrix("querier");
    assert_eq!(records.len(), 7);
    let ordered = short_run_of_repo_matrix_with("querier", &["footer_cache=warm .*storage=memory"]);
    let arms: std::collections::BTreeSet<(&str, &str)> =
        ordered.iter().map(|r| (r.variant["shape"].as_str().unwrap(), r.variant["order"].as_str().unwrap())).collect();
    assert_eq!(arms.len(), 9 + 4, "every ordered shape in every order, and the first block's four shapes: {arms:?}");
    records.extend(ordered);
    for r in &records {
        let arm = format!("{:?}", r.variant);
        assert_eq!(r.kind, Kind::Measurement, "{arm}: {:?}", r.failure);
        assert!(r.checks.iter().all(|c| c.ok), "{arm}: {:?}", r.checks);
        assert!(r.metrics["manifests_read"].value > 0.0, "{arm}: manifests are read on every query");
        assert!(r.metrics["planning_time"].value > 0.0, "{arm}");
        let (shape, order) = (r.variant["shape"].as_str().unwrap(), r.variant["order"].as_str().unwrap());
        let m = |name: &str| r.metrics[name].value;
        assert_eq!(m("files_read"), m("files_reached") - m("files_pruned"), "{arm}");
        // The seed's table: the attested scan serves oldest first and the full ordered scan without a sort.
        let elided = order != "unattested" && ["oldest_first_topk", "ordered_full_scan"].contains(&shape);
        let sorted = ["recent_first_topk", "oldest_first_topk", "ordered_full_scan"].contains(&shape);
        // A shape that asks for no order has no sort to keep: its share is absent, not 0 (issue 81).
        let sort_kept = r.metrics.get("sort_kept").map(|m| m.value);
        assert_eq!(sort_kept, sorted.then_some(if elided { 0.0 } else { 1.0 }), "{arm}");
        if shape == "oldest_first_topk" && elided {
            assert!(m("files_reached") <= 4.0, "{arm}: the limit stops the scan after the first files");
        }
        // A shape that looks up no trace misses none and says nothing of it (issue 81).
        let missed = match shape {
            "lookup_by_id_windowed" => Some(2.0),
            "lookup_by_id" | "lookup_via_index" => Some(0.0),
            _ => None,
        };
        assert_eq!(r.metrics.get("trace_rows_missed").map(|m| m.value), missed, "{arm}");
        let note = r.note.as_deref().unwrap_or("");
        assert!(note.contains("files reached") && note.contains("session: target_partitions 2"), "{arm}: {note}");
    }
}

#[test]
fn the_querier_service_answers_each_of_the_seeds_tickets_through_do_get() {
    let records = quick_run_of_repo_matrix("querier_service");
    let tickets: Vec<&str> = records.iter().map(|r| r.variant["ticket"].as_str().unwrap()).collect();
    assert_eq!(tickets, ["find_trace", "find_trace_hinted", "search_recent", "promql_range", "logql_line_filter"]);
    for r in &records {
        let arm = format!("{:?}", r.variant);
        assert_eq!(r.kind, Kind::Measurement, "{arm}: {:?}", r.failure);
        assert!(r.checks.iter().all(|c| c.ok) && r.checks.len() == 1, "{arm}: {:?}", r.checks);
        let m = |name: &str| r.metrics[name].value;
        assert!(m("manifests_read") > 0.0 && m("planning_time") > 0.0 && m("bytes_scanned") > 0.0, "{arm}");
        assert_eq!(m("files_read"), m("files_reached") - m("files_pruned"), "{arm}");
        let missed = match r.variant["ticket"].as_str() {
            Some("find_trace_hinted") => Some(2.0),
            Some("find_trace") => Some(0.0),
            _ => None,
        };
        let got = r.metrics.get("trace_rows_missed").map(|m| m.value);
        assert_eq!(got, missed, "{arm}: the hint's window leaves two of the trace's spans out; no lookup, no count");
    }
}

#[test]
fn the_trace_index_finds_each_trace_in_one_row_group() {
    let records = quick_run_of_repo_matrix("trace_index");
    let footers: Vec<&str> = records.iter().map(|r| r.variant["footers"].as_str().unwrap()).collect();
    assert_eq!(footers, ["per_lookup", "kept"], "the seed's lookup, then the warm probe");
    for r in &records {
        assert_eq!(r.kind, Kind::Measurement, "{:?}", r.failure);
        assert_eq!(r.metrics["row_groups_read"].value, 1.0);
        assert_eq!(r.metrics["row_groups_read"].unit, "row_groups", "a count, not a ratio");
        let per_lookup = r.variant["footers"] == "per_lookup";
        assert_eq!(r.metrics["footers_read"].value, if per_lookup { 1.0 } else { 0.0 });
        assert!(r.metrics["lookup_time"].value > 0.0 && r.metrics["index_bytes"].value > 0.0);
    }
}

#[test]
fn the_writer_times_each_seed_group_under_its_own_metric_and_reads_every_tenant_back() {
    let records = quick_run_of_repo_matrix("writer");
    assert_eq!(records.len(), 5, "one cell per seed group");
    for r in &records {
        let arm = format!("{:?}", r.variant);
        assert_eq!(r.kind, Kind::Measurement, "{arm}: {:?}", r.failure);
        let op = r.variant["op"].as_str().unwrap();
        // Each op is checked on its own work: the append's four laws, the creation's one, the sort's two.
        let laws = match op {
            "append" => 4,
            "create" => 1,
            _ => 2,
        };
        assert!(r.checks.iter().all(|c| c.ok) && r.checks.len() == laws, "{arm}: {:?}", r.checks);
        assert!(
            r.checks.iter().all(|c| c.values.is_some_and(|[left, _]| left > 0)),
            "{arm}: 0 against 0: {:?}",
            r.checks
        );
        let times: Vec<&str> = r.metrics.keys().filter(|k| k.ends_with("_time")).map(String::as_str).collect();
        assert_eq!(times, [format!("{op}_time")], "{arm}: each op reports its own time, and only it");
        if op == "append" {
            let writers = r.variant["writers"].as_f64().unwrap();
            assert_eq!(r.metrics["commits"].value, writers, "{arm}: one commit per tenant");
            assert!(r.metrics["data_files"].value >= writers && r.metrics["bytes_written"].value > 0.0, "{arm}");
        } else {
            assert!(!r.metrics.contains_key("commits"), "{arm}: no commit to count");
        }
    }
}

#[test]
fn writer_parameters_out_of_range_or_where_they_mean_nothing_are_config_errors_at_their_spot() {
    let sandbox = crate::support::Sandbox::new();
    let cases = [
        (
            "[rig.writer]\nparams = { rows = 0 }\n",
            "rigs.toml:2:",
            "`rows = 0` is out of range for rig `writer` (1 ..= 1000000)",
        ),
        ("[rig.writer]\nmatrix = { batches = [0, 2] }\n", "rigs.toml:2:", "`batches = 0` is out of range"),
        (
            "[rig.writer]\nmatrix = { writers = [8, 65] }\n",
            "rigs.toml:2:",
            "`writers = 65` is out of range for rig `writer` (1 ..= 64)",
        ),
        (
            "[rig.writer]\n\nparams = { order = \"shuffled\" }\n",
            "rigs.toml:3:",
            "`order = shuffled` of rig `writer` applies only where `op` is one of sort",
        ),
    ];
    for (config, spot, message) in cases {
        let path = sandbox.write("rigs.toml", config);
        let mut cmd = sandbox.cmd();
        cmd.arg("plan").arg("--config").arg(&path).arg("--plugin-dir").arg(crate::support::workspace_plugins());
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{config}: {stderr}");
        assert!(stderr.contains(spot) && stderr.contains(message), "{config}: {stderr}");
    }
}
