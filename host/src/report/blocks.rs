//! A rig's series split by what they share, as its `[[rig.NAME]]` blocks split them: the keys that change
//! together (kafka_topology's drained backlog has `duration_s=0`, `messages=160000` and `work_us=0` where its
//! live feed has 2, 100,000,000 and 10) tell the blocks apart; within a block the series are named by what
//! still varies (`mode=split/rate=0.0`), not by every key that differs anywhere in the rig.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::report::format::plain;
use crate::report::order;

type Variant = BTreeMap<String, Value>;

/// Series of one block.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// What its series share beyond what the whole rig shares (`duration_s=2.0 messages=100000000`); empty
    /// when the rig is one block.
    pub label: String,
    /// Its members, as indices into the variants given, in the order of their parameter values.
    pub members: Vec<usize>,
    /// Each member's name: the keys that vary within the block, `key=value` joined by `/`.
    pub names: Vec<String>,
}

/// The blocks of a rig's `variants`, in the order of the values that tell them apart.
pub fn blocks(variants: &[&Variant]) -> Vec<Block> {
    let keys: BTreeSet<&String> = variants.iter().flat_map(|v| v.keys()).collect();
    let text = |v: &Variant, k: &str| v.get(k).map_or("-".to_string(), plain);
    let varying: Vec<&String> = keys
        .iter()
        .copied()
        .filter(|k| variants.iter().map(|v| text(v, k)).collect::<BTreeSet<_>>().len() > 1)
        .collect();
    // Two keys change together when each value of one goes with a single value of the other, both ways.
    let follows = |a: &str, b: &str| {
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        variants.iter().all(|v| seen.entry(text(v, a)).or_insert_with(|| text(v, b)) == &text(v, b))
    };
    let together: Vec<&String> =
        varying.iter().copied().filter(|a| varying.iter().any(|b| b != a && follows(a, b) && follows(b, a))).collect();
    let mut by_label: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, variant) in variants.iter().enumerate() {
        let label = together.iter().map(|k| format!("{k}={}", text(variant, k))).collect::<Vec<_>>().join(" ");
        match by_label.iter_mut().find(|(l, _)| *l == label) {
            Some((_, members)) => members.push(i),
            None => by_label.push((label, vec![i])),
        }
    }
    let mut found: Vec<Block> = by_label
        .into_iter()
        .map(|(label, mut members)| {
            members.sort_by(|&a, &b| order::variant(variants[a], variants[b]));
            let of_block: Vec<&Variant> = members.iter().map(|&i| variants[i]).collect();
            let (_, names) = crate::report::export::short_names(&of_block);
            Block { label, members, names }
        })
        .collect();
    found.sort_by(|a, b| order::variant(variants[a.members[0]], variants[b.members[0]]));
    found
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn variant(value: Value) -> Variant {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn keys_that_change_together_split_the_blocks_and_the_rest_names_the_series() {
        let kafka = |duration: f64, messages: i64, work: i64, mode: &str, rate: f64| {
            variant(json!({"duration_s": duration, "messages": messages, "work_us": work, "mode": mode,
                "rate": rate, "partitions": 16}))
        };
        let variants = [
            kafka(2.0, 100_000_000, 10, "split", 10000.0),
            kafka(0.0, 160_000, 0, "perthread", 0.0),
            kafka(2.0, 100_000_000, 10, "perthread", 0.0),
            kafka(0.0, 160_000, 0, "split", 0.0),
            kafka(2.0, 100_000_000, 10, "split", 0.0),
            kafka(2.0, 100_000_000, 10, "perthread", 10000.0),
        ];
        let found = blocks(&variants.iter().collect::<Vec<_>>());
        let labels: Vec<&str> = found.iter().map(|b| b.label.as_str()).collect();
        assert_eq!(
            labels,
            ["duration_s=0.0 messages=160000 work_us=0", "duration_s=2.0 messages=100000000 work_us=10"]
        );
        assert_eq!(found[0].names, ["mode=perthread", "mode=split"]);
        assert_eq!(found[0].members, [1, 3]);
        assert_eq!(
            found[1].names,
            [
                "mode=perthread/rate=0.0",
                "mode=perthread/rate=10000.0",
                "mode=split/rate=0.0",
                "mode=split/rate=10000.0"
            ]
        );
    }

    #[test]
    fn a_cartesian_matrix_is_one_block_in_numeric_order() {
        let wal = |rows: i64, codec: &str| variant(json!({"rows": rows, "compression": codec}));
        let variants = [wal(10000, "lz4"), wal(1000, "lz4"), wal(10000, "zstd"), wal(1000, "zstd")];
        let found = blocks(&variants.iter().collect::<Vec<_>>());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].label, "");
        assert_eq!(
            found[0].names,
            [
                "compression=lz4/rows=1000",
                "compression=lz4/rows=10000",
                "compression=zstd/rows=1000",
                "compression=zstd/rows=10000"
            ]
        );
    }
}
