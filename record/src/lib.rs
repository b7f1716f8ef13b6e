//! benchhost's results, for any tool that reads or writes them: the schema-1 record (one JSON object per line
//! of a results stream), verdicts and per-metric statistics as types, and the stream itself: read it (a torn or
//! bad line costs that line only), append to it (one locked write per record, never a record the reader would
//! reject), verify it, merge streams, and keep named baselines. No measuring, no processes: the `benchhost`
//! host depends on this crate, not the other way round.
//!
//! ```
//! let line = r#"{"schema":1,"bench":"wal","kind":"measurement","run":{"ts_ms":1,"host":"h","cpu":"c","cores":2,"os":"linux/x86_64","profile":"release"},"metrics":{"t":{"value":1.5,"unit":"ns","higher_is_better":false}}}"#;
//! let stream = benchhost_record::reader::parse(std::path::Path::new("r.jsonl"), line.as_bytes()).unwrap();
//! assert_eq!(stream.records[0].1.metrics["t"].value, 1.5);
//! ```

#![warn(missing_docs)]

mod acknowledged;
mod acknowledgement;
mod buckets;
mod canon;
mod closed;
mod dates;
mod instructions;
mod lines;
mod record;
mod series;
mod summary;
mod verdict;

pub mod baseline;
pub mod fold;
pub mod history;
pub mod merge;
pub mod nightly;
mod peek;
pub mod reader;
pub mod scan;
pub mod sink;
pub mod verify;

pub use acknowledged::standing_acknowledgements;
pub use acknowledgement::*;
pub use closed::*;
pub use dates::utc_date;
pub use instructions::*;
pub use record::*;
pub use series::*;
pub use summary::*;
pub use verdict::*;

/// The unit registry: every metric's `unit` is one of these, spelled exactly so.
pub const UNITS: &[&str] = &[
    "ns",
    "us",
    "ms",
    "s",
    "records/s",
    "rows/s",
    "ops/s",
    "MB/s",
    "bytes",
    "records",
    "rows",
    "files",
    "manifests",
    "allocs",
    "commits",
    "row_groups",
    "ratio",
    "%",
    "instructions",
];

/// The JSON Schema of a schema-1 record, generated from the types above; committed as
/// `results/schema-1.json`, where a test keeps it equal to this.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Record);
    serde_json::to_string_pretty(&schema).expect("schemas serialize") + "\n"
}

#[cfg(test)]
mod tests {
    use super::json_schema;

    #[test]
    fn the_committed_schema_matches_the_record_types() {
        let committed = include_str!("../../results/schema-1.json");
        assert!(
            committed == json_schema(),
            "results/schema-1.json is out of date: regenerate it with \
             `cargo run -p benchhost -- schema > results/schema-1.json`"
        );
    }

    #[test]
    fn the_schema_requires_the_core_and_names_the_kinds() {
        let schema: serde_json::Value = serde_json::from_str(&json_schema()).unwrap();
        let required: Vec<&str> = schema["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(required, ["schema", "bench", "kind", "run"]);
        let text = json_schema();
        assert!(text.contains("\"measurement\"") && text.contains("\"verdict\"") && text.contains("\"failure\""));
        assert!(text.contains("\"acknowledgement\""), "the kind `benchhost accept` writes");
    }
}
