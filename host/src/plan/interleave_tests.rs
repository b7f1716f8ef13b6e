use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::plan::settings::Plan;

fn arm(index: usize, rig: &str, params: serde_json::Value) -> Cell {
    let params: BTreeMap<String, Value> = serde_json::from_value(params).unwrap();
    let plan = Plan::flat(0, 3, 1, 3);
    Cell { index, rig: rig.into(), params, plan, deadline: Duration::from_secs(1), against: false }
}

/// Seed 003's matrix as rigs.toml has it: two blocks (no work drains a backlog, 10 µs runs a 2 s window), each
/// with both modes.
fn kafka() -> Vec<Cell> {
    let block = |mode: &str, work: i64, duration: f64| json!({"mode": mode, "work_us": work, "duration_s": duration});
    vec![
        arm(0, "kafka_topology", block("perthread", 0, 0.0)),
        arm(1, "kafka_topology", block("split", 0, 0.0)),
        arm(2, "kafka_topology", block("perthread", 10, 2.0)),
        arm(3, "kafka_topology", block("split", 10, 2.0)),
    ]
}

/// The wal rig's matrix: compression x rows in one block.
fn wal(first: usize) -> Vec<Cell> {
    let mut cells = Vec::new();
    for compression in ["none", "zstd"] {
        for rows in [1000, 10000] {
            cells.push(arm(first + cells.len(), "wal", json!({"compression": compression, "rows": rows})));
        }
    }
    cells
}

fn axis(text: &str) -> Interleave {
    Interleave::parse(text)
}

#[test]
fn along_an_axis_each_arm_meets_the_reference_with_everything_else_equal_across_blocks() {
    let found = pairs(&kafka(), &axis("mode")).unwrap();
    assert_eq!(found.pairs, [[0, 1], [2, 3]], "split against perthread at work_us 0, and at 10");
    assert!(found.notes.is_empty());
    let found = pairs(&kafka(), &axis("mode=split")).unwrap();
    assert_eq!(found.pairs, [[1, 0], [3, 2]], "the named value is the reference");
    let found = pairs(&wal(0), &axis("compression")).unwrap();
    assert_eq!(found.pairs, [[0, 2], [1, 3]], "zstd against none at rows=1000 and rows=10000, never across rows");
    let found = pairs(&wal(0), &axis("rows")).unwrap();
    assert_eq!(found.pairs, [[0, 1], [2, 3]]);
}

#[test]
fn an_arm_without_a_partner_gets_a_note_and_no_pair() {
    // work_us changes together with duration_s: no two arms differ in work_us alone.
    let found = pairs(&kafka(), &axis("work_us")).unwrap();
    assert!(found.pairs.is_empty());
    assert_eq!(found.notes.len(), 2, "{:?}", found.notes);
    assert!(found.notes[0].contains("has no arm with work_us=0 and every other parameter equal"), "{:?}", found.notes);
    // Two rigs: the one that does not vary the axis is named once.
    let mut cells = kafka();
    cells.extend(wal(4));
    let found = pairs(&cells, &axis("mode")).unwrap();
    assert_eq!(found.pairs, [[0, 1], [2, 3]]);
    assert_eq!(found.notes, ["wal: its arms do not vary mode: they run without a verdict"]);
}

#[test]
fn a_bare_interleave_keeps_one_parameter_arms_and_refuses_unlike_ones() {
    // The harness proof's arms: each differs from the reference in one parameter (a replica, a spin).
    let harness = [
        arm(0, "harness", json!({"replica": 0, "spin": 0})),
        arm(1, "harness", json!({"replica": 1, "spin": 0})),
        arm(2, "harness", json!({"replica": 0, "spin": 5})),
    ];
    assert_eq!(pairs(&harness, &Interleave::Bare).unwrap().pairs, [[0, 1], [0, 2]]);
    assert_eq!(
        pairs(&kafka(), &Interleave::Bare).unwrap_err(),
        "--interleave: the arms of kafka_topology differ in mode (and in duration_s, work_us, which change \
         together): say which to compare, e.g. --interleave mode"
    );
    assert_eq!(
        pairs(&wal(0), &Interleave::Bare).unwrap_err(),
        "--interleave: the arms of wal differ in compression, rows: say which to compare, e.g. --interleave compression"
    );
}

#[test]
fn an_axis_or_value_not_in_the_matrix_is_an_error_naming_what_there_is() {
    let err = pairs(&kafka(), &axis("mdoe")).unwrap_err();
    assert_eq!(
        err,
        "--interleave mdoe: no arm of the matrix varies `mdoe` (did you mean `mode`?); the axes are duration_s (0.0, \
         2.0), mode (perthread, split), work_us (0, 10)"
    );
    let err = pairs(&kafka(), &axis("mode=splt")).unwrap_err();
    assert!(
        err.starts_with("--interleave mode=splt: `splt` is not a value of mode in the matrix (did you mean `split`?)")
    );
    assert!(pairs(&kafka(), &axis("partitions")).unwrap_err().contains("no arm of the matrix varies `partitions`"));
}

#[test]
fn rounds_alone_compare_only_the_arms_that_differ_from_the_first_in_one_parameter() {
    let found = pairs(&kafka(), &Interleave::Implied).unwrap();
    assert_eq!(found.pairs, [[0, 1]], "split against perthread at work_us 0; the 10 µs arms differ in more");
    assert_eq!(
        found.notes,
        ["the arms of kafka_topology differ in mode (and in duration_s, work_us, which change together): say which \
          to compare, e.g. --interleave mode; only arms that differ from its first in one get a verdict"]
    );
}
