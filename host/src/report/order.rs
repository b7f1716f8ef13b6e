//! The order people read rows in: numbers by value, not as text (`rows=1000` before `rows=10000`, `p99`
//! before `p999`), for parameter values, variants and metric names alike.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::Value;

/// Text in natural order: runs of digits compare as numbers, everything else as text.
pub fn natural(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a, b);
    loop {
        match (a.chars().next(), b.chars().next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let (da, ra) = a.split_at(a.find(|c: char| !c.is_ascii_digit()).unwrap_or(a.len()));
                let (db, rb) = b.split_at(b.find(|c: char| !c.is_ascii_digit()).unwrap_or(b.len()));
                let (ta, tb) = (da.trim_start_matches('0'), db.trim_start_matches('0'));
                let by_value = ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                (a, b) = (ra, rb);
            }
            (Some(x), Some(y)) if x != y => return x.cmp(&y),
            (Some(x), Some(_)) => (a, b) = (&a[x.len_utf8()..], &b[x.len_utf8()..]),
        }
    }
}

/// Two parameter values: numbers by value, anything else in natural order of its text.
pub fn value(a: &Value, b: &Value) -> Ordering {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => natural(&crate::report::format::plain(a), &crate::report::format::plain(b)),
    }
}

/// Two variants, key by key in key order, each value as [`value`] orders it; a missing key first.
pub fn variant(a: &BTreeMap<String, Value>, b: &BTreeMap<String, Value>) -> Ordering {
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for key in keys {
        let by_key = match (a.get(key), b.get(key)) {
            (Some(x), Some(y)) => value(x, y),
            (x, y) => x.is_some().cmp(&y.is_some()),
        };
        if by_key != Ordering::Equal {
            return by_key;
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn numbers_in_names_and_values_order_by_value() {
        let mut metrics = ["p999_append_us", "p99_append_us", "p50_append_us", "p90_append_us"];
        metrics.sort_by(|a, b| natural(a, b));
        assert_eq!(metrics, ["p50_append_us", "p90_append_us", "p99_append_us", "p999_append_us"]);
        let v = |rows: i64, codec: &str| -> BTreeMap<String, Value> {
            serde_json::from_value(json!({"rows": rows, "codec": codec})).unwrap()
        };
        let mut variants = [v(10000, "zstd"), v(1000, "zstd"), v(100, "lz4"), v(1000, "lz4")];
        variants.sort_by(variant);
        let shown: Vec<(String, i64)> =
            variants.iter().map(|v| (v["codec"].as_str().unwrap().into(), v["rows"].as_i64().unwrap())).collect();
        let expected = [("lz4", 100), ("lz4", 1000), ("zstd", 1000), ("zstd", 10000)];
        assert_eq!(shown, expected.map(|(c, r)| (c.to_string(), r)));
        assert_eq!(value(&json!(2.5), &json!(10)), Ordering::Less);
        assert_eq!(natural("a2", "a10"), Ordering::Less);
        assert_eq!(natural("a", "ab"), Ordering::Less);
    }
}
