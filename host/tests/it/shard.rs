//! A fleet's run: the matrix split with `--shard I/N` over "machines" sharing one `--run-id`, each slice a
//! stream of its own, then `benchhost merge` into one stream that holds every cell once.

use crate::support::{Sandbox, workspace_plugins};
use predicates::prelude::*;

const RIGS: &str = "[rig.wal]\nmatrix = { compression = [\"none\", \"lz4\", \"zstd\"], rows = [100, 200, 300] }\n";

#[test]
fn shards_cover_the_matrix_once_and_merge_joins_them() {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", RIGS);
    let plan = |shard: &str| {
        let out =
            sandbox.cmd().args(["plan", "--shard", shard, "--plugin-dir"]).arg(workspace_plugins()).assert().success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    let first = plan("1/2");
    assert!(first.contains("5 cells"), "{first}");
    assert_eq!(plan("1/2"), first, "the same shard plans the same cells every time");
    assert!(plan("2/2").contains("4 cells"));

    for (shard, out) in [("1/2", "a.jsonl"), ("2/2", "b.jsonl")] {
        let mut run = sandbox.cmd();
        run.args(["run", "--quick", "--shard", shard, "--run-id", "nightly-42", "--out", out, "--plugin-dir"]);
        run.arg(workspace_plugins()).assert().success();
    }
    let (a, _) = sandbox.records("a.jsonl");
    let (b, _) = sandbox.records("b.jsonl");
    assert_eq!((a.len(), b.len()), (5, 4));
    assert!(a.iter().chain(&b).all(|r| r.run.id.as_deref() == Some("nightly-42")));
    assert!(a.iter().all(|r| r.run.shard.as_deref() == Some("1/2")));
    assert!(b.iter().all(|r| r.run.shard.as_deref() == Some("2/2")));

    // b.jsonl uploaded twice: its records are dropped as identical duplicates.
    let merge = sandbox.cmd().args(["merge", "all.jsonl", "a.jsonl", "b.jsonl", "b.jsonl"]).assert().success();
    merge.stdout(predicate::str::contains(
        "9 records in all.jsonl (9 added), 4 identical duplicates dropped, 0 conflicts, 0 unreadable lines",
    ));
    let (all, problems) = sandbox.records("all.jsonl");
    assert!(problems.is_empty());
    let mut cells: Vec<String> = all.iter().map(|r| serde_json::to_string(&r.variant).unwrap()).collect();
    cells.sort();
    cells.dedup();
    assert_eq!(cells.len(), 9, "every cell once");

    // A record that differs under the same identity is a conflict: reported, exit 1, the first kept.
    let first_line =
        std::fs::read_to_string(sandbox.path().join("a.jsonl")).unwrap().lines().next().unwrap().to_string();
    let mut record: serde_json::Value = serde_json::from_str(&first_line).unwrap();
    let value = &mut record["metrics"]["roundtrip_time"]["value"];
    *value = serde_json::json!(value.as_f64().unwrap() * 2.0);
    sandbox.write("a-again.jsonl", &format!("{record}\n"));
    let again = sandbox.cmd().args(["merge", "all.jsonl", "a-again.jsonl"]).assert().code(1);
    again.stdout(predicate::str::contains("9 records in all.jsonl (0 added)"));
}
