//! The one registry of units every record uses. Nothing else may be written as a unit.

use serde::{Deserialize, Serialize};

/// A unit from the one registry every record uses. Nothing else may be written as a unit.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::Unit;
/// assert_eq!(serde_json::to_string(&Unit::RowsPerSec).unwrap(), "\"rows/s\"");
/// assert!(serde_json::from_str::<Unit>("\"furlongs\"").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// Nanoseconds.
    #[serde(rename = "ns")]
    Nanos,
    /// Microseconds.
    #[serde(rename = "us")]
    Micros,
    /// Milliseconds.
    #[serde(rename = "ms")]
    Millis,
    /// Seconds.
    #[serde(rename = "s")]
    Seconds,
    /// Records per second.
    #[serde(rename = "records/s")]
    RecordsPerSec,
    /// Rows per second.
    #[serde(rename = "rows/s")]
    RowsPerSec,
    /// Operations per second.
    #[serde(rename = "ops/s")]
    OpsPerSec,
    /// Megabytes (10^6 bytes) per second.
    #[serde(rename = "MB/s")]
    MegabytesPerSec,
    /// Bytes.
    #[serde(rename = "bytes")]
    Bytes,
    /// A count of records.
    #[serde(rename = "records")]
    Records,
    /// A count of rows.
    #[serde(rename = "rows")]
    Rows,
    /// A count of files.
    #[serde(rename = "files")]
    Files,
    /// A count of a table's manifest files (Iceberg's), which planning reads before any data file.
    #[serde(rename = "manifests")]
    Manifests,
    /// A count of allocations.
    #[serde(rename = "allocs")]
    Allocs,
    /// A count of commits (snapshots) to a table.
    #[serde(rename = "commits")]
    Commits,
    /// A count of Parquet row groups.
    #[serde(rename = "row_groups")]
    RowGroups,
    /// A dimensionless ratio, in [0, 1] (a share: [`Metric::share`](crate::Metric::share)).
    #[serde(rename = "ratio")]
    Ratio,
    /// A percentage.
    #[serde(rename = "%")]
    Percent,
    /// Instructions executed (counted under Valgrind, `run --instructions`).
    #[serde(rename = "instructions")]
    Instructions,
}

impl Unit {
    /// Every unit, in registry order.
    pub const ALL: [Unit; 19] = [
        Unit::Nanos,
        Unit::Micros,
        Unit::Millis,
        Unit::Seconds,
        Unit::RecordsPerSec,
        Unit::RowsPerSec,
        Unit::OpsPerSec,
        Unit::MegabytesPerSec,
        Unit::Bytes,
        Unit::Records,
        Unit::Rows,
        Unit::Files,
        Unit::Manifests,
        Unit::Allocs,
        Unit::Commits,
        Unit::RowGroups,
        Unit::Ratio,
        Unit::Percent,
        Unit::Instructions,
    ];

    /// The spelling used in records, e.g. `"MB/s"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Nanos => "ns",
            Unit::Micros => "us",
            Unit::Millis => "ms",
            Unit::Seconds => "s",
            Unit::RecordsPerSec => "records/s",
            Unit::RowsPerSec => "rows/s",
            Unit::OpsPerSec => "ops/s",
            Unit::MegabytesPerSec => "MB/s",
            Unit::Bytes => "bytes",
            Unit::Records => "records",
            Unit::Rows => "rows",
            Unit::Files => "files",
            Unit::Manifests => "manifests",
            Unit::Allocs => "allocs",
            Unit::Commits => "commits",
            Unit::RowGroups => "row_groups",
            Unit::Ratio => "ratio",
            Unit::Percent => "%",
            Unit::Instructions => "instructions",
        }
    }

    /// Parses a registry spelling.
    pub fn parse(s: &str) -> Option<Unit> {
        Unit::ALL.into_iter().find(|u| u.as_str() == s)
    }
}
