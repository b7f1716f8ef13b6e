//! The querier's query shapes: the SQL each sends, and the exact answer each must give, known from the corpus
//! before anything runs. Ordered shapes are checked row by row, in order (a reversed-read bug once hid behind
//! count-only checks, seed 004); unordered ones as exact sets.

use std::collections::HashSet;

use arrow::array::RecordBatch;
use serde::Deserialize;

use crate::table::corpus::{self, TARGET};
use crate::table::traces::{HOUR_US, Span};

/// A query shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// All spans of one trace, no time bound.
    LookupById,
    /// The same, within ±1 h of the trace's first write: fast, and incomplete by design.
    LookupByIdWindowed,
    /// The same, on the files a point index names (a bloom-filtered Parquet index of trace id to file).
    LookupViaIndex,
    /// `ORDER BY timestamp DESC LIMIT 20`.
    RecentFirstTopk,
    /// `ORDER BY timestamp ASC LIMIT 20`.
    OldestFirstTopk,
    /// `ORDER BY timestamp ASC`, every row.
    OrderedFullScan,
    /// `SELECT DISTINCT trace_id … LIMIT 20`.
    TraceSearchGroups,
}

/// Which table a shape reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corpus {
    /// 3 days in hour partitions, the target written three times.
    Traces,
    /// 60 sequential files.
    Spans,
}

/// What a checked answer held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub rows: u64,
    /// Spans of the target trace that exist but the shape's window leaves out; `None` for a shape that looks up
    /// no trace (absent from its record, never 0).
    pub trace_rows_missed: Option<u64>,
}

const TOPK: usize = 20;

impl Shape {
    /// Whether the statement asks for an order (an `ORDER BY`): only then can its plan keep or elide a sort.
    pub fn ordered(self) -> bool {
        matches!(self, Shape::RecentFirstTopk | Shape::OldestFirstTopk | Shape::OrderedFullScan)
    }

    /// The table this shape reads.
    pub fn corpus(self) -> Corpus {
        match self {
            Shape::LookupById | Shape::LookupByIdWindowed | Shape::LookupViaIndex | Shape::TraceSearchGroups => {
                Corpus::Traces
            }
            Shape::RecentFirstTopk | Shape::OldestFirstTopk | Shape::OrderedFullScan => Corpus::Spans,
        }
    }

    /// The shape's name, as the `shape` parameter spells it.
    pub fn name(self) -> &'static str {
        match self {
            Shape::LookupById => "lookup_by_id",
            Shape::LookupByIdWindowed => "lookup_by_id_windowed",
            Shape::LookupViaIndex => "lookup_via_index",
            Shape::RecentFirstTopk => "recent_first_topk",
            Shape::OldestFirstTopk => "oldest_first_topk",
            Shape::OrderedFullScan => "ordered_full_scan",
            Shape::TraceSearchGroups => "trace_search_groups",
        }
    }

    /// The statement over table `table`. `tag` makes each iteration's text new (`-- q{tag}`), so no layer can
    /// answer from a memo of an earlier statement.
    pub fn sql(self, table: &str, tag: u64) -> String {
        let (from, to) = window();
        let statement = match self {
            Shape::LookupById | Shape::LookupViaIndex => {
                format!("SELECT * FROM {table} WHERE trace_id = '{TARGET}'")
            }
            Shape::LookupByIdWindowed => format!(
                "SELECT * FROM {table} WHERE trace_id = '{TARGET}' \
                 AND timestamp >= to_timestamp_micros({from}) AND timestamp <= to_timestamp_micros({to})"
            ),
            Shape::RecentFirstTopk => {
                format!("SELECT trace_id, span_id, timestamp FROM {table} ORDER BY timestamp DESC LIMIT {TOPK}")
            }
            Shape::OldestFirstTopk => {
                format!("SELECT trace_id, span_id, timestamp FROM {table} ORDER BY timestamp ASC LIMIT {TOPK}")
            }
            Shape::OrderedFullScan => {
                format!("SELECT trace_id, span_id, timestamp FROM {table} ORDER BY timestamp ASC")
            }
            Shape::TraceSearchGroups => format!("SELECT DISTINCT trace_id FROM {table} LIMIT {TOPK}"),
        };
        format!("{statement} -- q{tag}")
    }

    /// Checks `batches` against the answer the corpus dictates.
    pub fn check(self, batches: &[RecordBatch]) -> Result<Answer, String> {
        let got: Vec<Span> = batches.iter().flat_map(crate::table::traces::from_batch).collect();
        let all_target = || corpus::traces_files().into_iter().flatten().filter(|s| s.trace_id == TARGET);
        match self {
            Shape::LookupById | Shape::LookupByIdWindowed | Shape::LookupViaIndex => {
                let (from, to) = window();
                let in_window = |s: &Span| self != Shape::LookupByIdWindowed || (from..=to).contains(&s.timestamp_us);
                let mut expected: Vec<Span> = all_target().filter(in_window).collect();
                let missed = all_target().count() - expected.len();
                // Files are read concurrently, so the lookup has no row order: compare as sorted lists.
                let mut got = got;
                got.sort_by_key(|s| s.timestamp_us);
                expected.sort_by_key(|s| s.timestamp_us);
                same_rows(&got, &expected, |s| s.clone())?;
                Ok(Answer { rows: got.len() as u64, trace_rows_missed: Some(missed as u64) })
            }
            Shape::RecentFirstTopk | Shape::OldestFirstTopk | Shape::OrderedFullScan => {
                let mut expected: Vec<Span> = corpus::sequential_files().concat();
                match self {
                    Shape::RecentFirstTopk => {
                        expected.reverse();
                        expected.truncate(TOPK);
                    }
                    Shape::OldestFirstTopk => expected.truncate(TOPK),
                    _ => {}
                }
                same_rows(&got, &expected, |s| (s.trace_id.clone(), s.span_id.clone(), s.timestamp_us))?;
                Ok(Answer { rows: got.len() as u64, trace_rows_missed: None })
            }
            Shape::TraceSearchGroups => {
                let known: HashSet<String> = corpus::traces_files().into_iter().flatten().map(|s| s.trace_id).collect();
                let ids: Vec<&str> = got.iter().map(|s| s.trace_id.as_str()).collect();
                let distinct: HashSet<&str> = ids.iter().copied().collect();
                if ids.len() != TOPK || distinct.len() != TOPK {
                    return Err(format!("{} trace ids ({} distinct), not {TOPK} distinct", ids.len(), distinct.len()));
                }
                if let Some(stranger) = ids.iter().find(|id| !known.contains(**id)) {
                    return Err(format!("trace id {stranger} is not in the table"));
                }
                Ok(Answer { rows: TOPK as u64, trace_rows_missed: None })
            }
        }
    }
}

/// ±1 h around the target's first write, in microseconds.
fn window() -> (i64, i64) {
    (corpus::TARGET_AT_US - HOUR_US, corpus::TARGET_AT_US + HOUR_US)
}

/// Row by row, in order; the first difference is named.
fn same_rows<K: PartialEq + std::fmt::Debug>(
    got: &[Span],
    expected: &[Span],
    key: impl Fn(&Span) -> K,
) -> Result<(), String> {
    let at = (0..got.len().max(expected.len())).find(|&i| got.get(i).map(&key) != expected.get(i).map(&key));
    match at {
        None => Ok(()),
        Some(i) => Err(format!(
            "row {i} is {:?}, expected {:?} ({} rows against {})",
            got.get(i).map(&key),
            expected.get(i).map(&key),
            got.len(),
            expected.len()
        )),
    }
}
