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
    assert!(c["batches_read_back"] > 0 && c["batches_in_key_order"] == c["batches_read_back"], "{c:?}");
    // 1,000 rows one second apart from 22:13:20 span one hour: one file per tenant.
    assert_eq!(c["data_files"], 3, "{c:?}");
    let c = run(json!({"op": "append", "rows": 10_000})).counters;
    assert_eq!(c["data_files"], 3, "10,000 s from 22:13:20 end at 00:59:59, in the third hour: {c:?}");
}

#[test]
fn the_sort_leaves_a_shuffled_group_in_key_order_with_its_rows_and_creation_makes_tables() {
    for order in ["in_order", "shuffled"] {
        let outcome = run(json!({"op": "sort", "rows": 1000, "order": order}));
        assert!(outcome.note.as_deref().is_some_and(|n| n.ends_with("checked in key order with its rows")));
        let c = &outcome.counters;
        assert_eq!(c["rows"], 1000);
        assert_eq!((c["groups_checked"], c["groups_in_key_order"]), (1, 1), "the last group of the batch: {c:?}");
        assert_eq!((c["rows_to_sort"], c["rows_sorted"]), (1000, 1000), "{c:?}");
    }
    let c = run(json!({"op": "create"})).counters;
    assert_eq!(c["rows"], 0);
    assert_eq!((c["tables_created"], c["tables_loaded_back"]), (3, 3), "each table loads back as created: {c:?}");
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

#[test]
fn each_op_is_checked_on_its_own_work_only() {
    let d = Writer::describe();
    let laws = |op: &str| {
        let params = [("op".to_string(), json!(op))].into();
        d.invariants_for(&params).iter().map(ToString::to_string).collect::<Vec<_>>()
    };
    assert_eq!(laws("create"), ["tables_loaded_back == tables_created"]);
    assert_eq!(laws("sort"), ["groups_in_key_order == groups_checked", "rows_sorted == rows_to_sort"]);
    assert_eq!(laws("append").len(), 4, "{:?}", laws("append"));
}

#[test]
fn a_table_that_does_not_load_back_as_it_was_created_is_caught() {
    use iceberg::transaction::{ApplyTransactionAction, Transaction};
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let tenant = Tenant::create(Storage::Memory, None).await.unwrap();
        assert!(tenant.loads_back().await.unwrap(), "as created");
        // Someone else changes its properties in the catalog: it no longer loads back as this writer made it.
        let tx = Transaction::new(&tenant.table);
        let tx = tx.update_table_properties().set("owner".into(), "another".into()).apply(tx).unwrap();
        tx.commit(tenant.warehouse.catalog.as_ref()).await.unwrap();
        assert!(!tenant.loads_back().await.unwrap(), "its properties changed");
    });
}
