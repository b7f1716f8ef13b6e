use serde_json::json;

use super::*;

/// A `wal rows=N` verdict on `time` whose method ran the layouts `new` and `old` with a between-layout spread
/// `sd` (no `layouts` at all when `new` is `None`: one layout a side), or an instruction count's (no method).
fn verdict(rows: i64, new: Option<Vec<u64>>, sd: Option<f64>) -> Record {
    let layouts = new.map(|new| json!({"new": new, "old": [1, 3], "pairs": 2, "between_layouts": sd}));
    let method = json!({"mode": "alternate", "processes": 4, "pairs_per_process": 20, "rule": "r",
                        "log_ratios": [0.0, 0.0, 0.0, 0.0], "layouts": layouts});
    serde_json::from_value(json!({
        "schema": 1, "bench": "wal", "kind": "verdict", "variant": {"rows": rows}, "metrics": {}, "note": "n",
        "run": {"ts_ms": 1, "host": "h", "cpu": "c", "cores": 2, "os": "linux", "profile": "release"},
        "verdict": {"metric": "time", "test": "t", "ratio": 1.0, "threshold": 0.03, "decision": "no_change", "method": method}
    }))
    .unwrap()
}

fn noted(mut record: Record, floors: &Floors) -> String {
    say_one_layout(std::slice::from_mut(&mut record), floors);
    record.note.unwrap()
}

#[test]
fn the_floor_is_pooled_from_comparisons_over_layouts_of_both_sides_of_the_same_series() {
    let mut floors = Floors::default();
    floors.learn(&verdict(10, Some(vec![2, 4]), Some(0.01)));
    floors.learn(&verdict(10, Some(vec![2, 4]), Some(0.02)));
    // Neither a comparison of one layout a side, nor one whose new side ran as built, nor another series.
    floors.learn(&verdict(10, None, None));
    floors.learn(&verdict(10, Some(vec![]), Some(0.5)));
    floors.learn(&verdict(99, Some(vec![2, 4]), Some(0.5)));
    let (floor, n) = floors.of(&verdict(10, None, None), "time").unwrap();
    let rms = ((0.01f64.powi(2) + 0.02f64.powi(2)) / 2.0).sqrt();
    assert_eq!(n, 2);
    assert!((floor - layouts::floor(rms)).abs() < 1e-12, "{floor}");
    assert!(floors.of(&verdict(10, None, None), "throughput").is_none(), "per metric");
    assert!(floors.of(&verdict(7, None, None), "time").is_none(), "per series");
}

#[test]
fn a_verdict_of_one_layout_a_side_says_so_with_the_floor_when_it_is_known() {
    let mut floors = Floors::default();
    let unknown = noted(verdict(10, None, None), &floors);
    assert_eq!(
        unknown,
        "n; one layout a side (each library as built): a change within the cell's layout floor may be the links' \
         (measure the floor with `--layouts auto` against this build itself)"
    );
    floors.learn(&verdict(10, Some(vec![2, 4]), Some(0.01)));
    let known = noted(verdict(10, None, None), &floors);
    assert_eq!(
        known,
        "n; one layout a side (each library as built): this cell's layout floor is 2.0% (over layouts, 1 comparison \
         in this stream), and a change within it may be the links'"
    );
    // A side as built beside layouts of the other: its note said so; the floor is added when known.
    assert_eq!(noted(verdict(10, Some(vec![]), Some(0.01)), &Floors::default()), "n");
    assert!(
        noted(verdict(10, Some(vec![]), Some(0.01)), &floors)
            .ends_with("; this cell's layout floor is 2.0% (over layouts, 1 comparison in this stream)")
    );
    // Over layouts of both sides, and instruction counts (no method), nothing is added.
    assert_eq!(noted(verdict(10, Some(vec![2, 4]), Some(0.01)), &floors), "n");
    let mut count = verdict(10, None, None);
    count.verdict.as_mut().unwrap().method = None;
    assert_eq!(noted(count, &floors), "n");
}
