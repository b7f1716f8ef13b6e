//! The writer rig as plain Rust: every op runs and checks its answer, concurrent tenants each hold their own
//! rows, the sort leaves a group in key order, and a wrong append (a dropped batch) is a verification failure.

use benchhost_plugin_api::testing;
use serde_json::{Value, json};

use super::*;

fn run(params: Value) -> Outcome {
    testing::run::<Writer>(params.clone(), 3).unwrap_or_else(|e| panic!("{params}: {e}")).outcome
}

#[test]
fn appends_commit_one_snapshot_each_and_every_tenant_reads_back_its_rows() {
    let c = run(json!({"op": "append", "rows": 1000, "batches": 2, "writers": 3})).counters;
    assert_eq!((c["commits"], c["rows"]), (3, 6000), "{c:?}");
    assert_eq!(c["snapshots"], c["commits_made"], "{c:?}");
    assert_eq!((c["rows_read_back"], c["checksum_read_back"]), (c["rows_appended"], c["checksum_appended"]));
    assert_eq!(c["files_out_of_order"], 0);
    // 1,000 rows one second apart from 22:13:20 span one hour: one file per tenant.
    assert_eq!(c["data_files"], 3, "{c:?}");
    let c = run(json!({"op": "append", "rows": 10_000})).counters;
    assert_eq!(c["data_files"], 3, "10,000 s from 22:13:20 end at 00:59:59, in the third hour: {c:?}");
}

#[test]
fn the_sort_leaves_a_shuffled_group_in_key_order_with_its_rows_and_creation_makes_tables() {
    for order in ["in_order", "shuffled"] {
        let outcome = run(json!({"op": "sort", "rows": 1000, "order": order}));
        assert!(outcome.note.as_deref().is_some_and(|n| n.ends_with("each checked in key order with its rows")));
        assert_eq!(outcome.counters["rows"], 1000);
    }
    assert_eq!(run(json!({"op": "create"})).counters["rows"], 0);
}

#[test]
fn a_dropped_batch_is_a_verification_failure_with_both_counts() {
    let params = json!({"op": "append", "rows": 100, "batches": 2, "writers": 1, "order": "in_order",
        "storage": "memory", "workers": 2});
    let mut rig = Writer::setup(serde_json::from_value(params).unwrap(), &SetupContext::default()).unwrap();
    rig.prepare(1).unwrap();
    let tenants = rig.ready.pop_front().unwrap();
    let dropped = &rig.input[..1];
    rig.runtime.block_on(tenants[0].append(dropped, "wrong".into())).unwrap();
    rig.done.extend(tenants);
    let err = rig.check_done().err().unwrap();
    assert_eq!(err.kind, benchhost_plugin_api::ErrorKind::Verification);
    assert!(
        err.message.contains(": 200 rows with checksum") && err.message.contains("appended, 100 rows with"),
        "{}",
        err.message
    );
}

#[test]
fn shuffled_input_is_a_permutation_and_sorting_restores_the_order() {
    let input = gauge::rows(1000).unwrap();
    let shuffled = gauge::shuffled(&input).unwrap();
    assert_eq!(gauge::tally([&input]), gauge::tally([&shuffled]));
    let params = json!({"op": "sort", "rows": 1000, "batches": 1, "writers": 1, "order": "shuffled",
        "storage": "memory", "workers": 2});
    let rig = Writer::setup(serde_json::from_value(params).unwrap(), &SetupContext::default()).unwrap();
    let group = rig.group.clone().unwrap();
    assert!(gauge::out_of_order(&group).is_some(), "the shuffled group is not already sorted");
    assert_eq!(gauge::out_of_order(&gauge::sorted(&group).unwrap()), None);
}
