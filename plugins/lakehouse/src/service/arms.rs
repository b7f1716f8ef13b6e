//! The five requests seed 000's `querier_service` group times, as tickets, and the answer each must give,
//! computed another way: straight from the generators of the tables ([`corpus`], [`series`], [`logs`]), with
//! no SQL. An answer is compared whole: every row, in the order the ticket asks for where it asks for one.

use std::collections::BTreeMap;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{Float64Type, Int64Type, TimestampMicrosecondType};
use serde::Deserialize;

use crate::service::logql;
use crate::service::promql::{self, LOOKBACK_US};
use crate::service::ticket::{Ticket, Window};
use crate::table::corpus::{self, DAY0_US, TARGET, TARGET_AT_US};
use crate::table::traces::{HOUR_US, Span};
use crate::table::{logs, series};

/// A request of the seed's group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    /// The target trace, pruned on its bloom filters: its three writes, in three days.
    FindTrace,
    /// The same with a hint of ±1 h around its first write: one span, the other two outside the hint.
    FindTraceHinted,
    /// The newest 2 traces of `bench-service` covering at least a minute (3 do: the target and the sentinels).
    SearchRecent,
    /// `avg by (service_name) (benchmark_metric_2)` over the second hour, a step a minute: 61 steps x 4 services.
    PromqlRange,
    /// `{service_name="service-1"} |= "request 17 "` over both hours: the newest 100 of its 200 lines.
    LogqlLineFilter,
}

pub const ARMS: [&str; 5] = ["find_trace", "find_trace_hinted", "search_recent", "promql_range", "logql_line_filter"];

const SEARCHED: &str = "bench-service";
const MIN_DURATION_US: i64 = 60_000_000;
const SEARCH_LIMIT: usize = 2;
const PROMQL: &str = "avg by (service_name) (benchmark_metric_2)";
const STEP_S: i64 = 60;
const LOGQL: &str = r#"{service_name="service-1"} |= "request 17 ""#;
const LOG_LIMIT: usize = 100;

/// What a checked answer held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub rows: u64,
    /// Spans of the trace that exist but lie outside the ticket's hint (the hinted lookup's known incompleteness);
    /// `None` for a ticket that looks up no trace (absent from its record, never 0).
    pub trace_rows_missed: Option<u64>,
}

impl Arm {
    /// Whether its statement asks for an order (every ticket but the trace lookups).
    pub fn ordered(self) -> bool {
        !matches!(self, Arm::FindTrace | Arm::FindTraceHinted)
    }

    /// The arm's ticket.
    pub fn ticket(self) -> Ticket {
        match self {
            Arm::FindTrace => Ticket::FindTrace { trace_id: TARGET.into(), hint: None },
            Arm::FindTraceHinted => Ticket::FindTrace { trace_id: TARGET.into(), hint: Some(hint()) },
            Arm::SearchRecent => {
                Ticket::Search { service: SEARCHED.into(), min_duration_us: MIN_DURATION_US, limit: SEARCH_LIMIT }
            }
            Arm::PromqlRange => Ticket::Promql {
                query: PROMQL.into(),
                start_us: DAY0_US + HOUR_US,
                end_us: DAY0_US + 2 * HOUR_US,
                step_s: STEP_S,
            },
            Arm::LogqlLineFilter => Ticket::Logql {
                query: LOGQL.into(),
                start_us: DAY0_US,
                end_us: DAY0_US + 2 * HOUR_US,
                limit: LOG_LIMIT,
            },
        }
    }

    /// Checks `batches` (the decoded answer) against the answer computed from the generators.
    pub fn check(self, batches: &[RecordBatch]) -> Result<Answer, String> {
        let answer = |rows: usize| Answer { rows: rows as u64, trace_rows_missed: None };
        match self.ticket() {
            Ticket::FindTrace { hint, .. } => {
                let all: Vec<Span> =
                    corpus::traces_files().into_iter().flatten().filter(|s| s.trace_id == TARGET).collect();
                let inside = |s: &Span| hint.is_none_or(|w| (w.start_us..w.end_us).contains(&s.timestamp_us));
                let expected: Vec<Span> = all.iter().filter(|s| inside(s)).cloned().collect();
                let mut got: Vec<Span> = batches.iter().flat_map(crate::table::traces::from_batch).collect();
                // Files are read concurrently: a lookup has no row order.
                got.sort_by_key(|s| s.timestamp_us);
                same(&got, &expected)?;
                Ok(Answer { rows: got.len() as u64, trace_rows_missed: Some((all.len() - expected.len()) as u64) })
            }
            Ticket::Search { .. } => {
                let got = rows(batches, |b, i| {
                    let start = b.column_by_name("start")?.as_primitive_opt::<TimestampMicrosecondType>()?;
                    Some((
                        b.column_by_name("trace_id")?.as_string_opt::<i32>()?.value(i).to_string(),
                        start.value(i),
                        int(b, "duration_nanos", i)?,
                        int(b, "spans", i)?,
                    ))
                })?;
                same(&got, &searched()).map(|()| answer(got.len()))
            }
            Ticket::Promql { query, start_us, end_us, step_s } => {
                let got = rows(batches, |b, i| {
                    let value = b.column_by_name("value")?.as_primitive_opt::<Float64Type>()?.value(i);
                    let service = b.column_by_name("service_name")?.as_string_opt::<i32>()?.value(i).to_string();
                    Some((int(b, "step_us", i)?, service, value.to_bits()))
                })?;
                let expected = stepped(&query, start_us, end_us, step_s * 1_000_000)?;
                same(&got, &expected).map(|()| answer(got.len()))
            }
            Ticket::Logql { query, start_us, end_us, limit } => {
                let got = rows(batches, |b, i| {
                    let ts = b.column_by_name("timestamp")?.as_primitive_opt::<TimestampMicrosecondType>()?;
                    let text = |name| Some(b.column_by_name(name)?.as_string_opt::<i32>()?.value(i).to_string());
                    Some((ts.value(i), text("service_name")?, text("body")?))
                })?;
                let parsed = logql::parse(&query)?;
                let label = |line: &logs::LogLine, name: &str| match name {
                    "service_name" => Some(line.service_name.clone()),
                    "level" => Some("INFO".to_string()),
                    _ => None,
                };
                let mut expected: Vec<(i64, String, String)> = logs::lines()
                    .into_iter()
                    .filter(|l| (start_us..end_us).contains(&l.timestamp_us))
                    .filter(|l| parsed.keeps(|name| label(l, name), &l.body))
                    .map(|l| (l.timestamp_us, l.service_name, l.body))
                    .collect();
                expected.sort_by_key(|l| std::cmp::Reverse(l.0));
                expected.truncate(limit);
                same(&got, &expected).map(|()| answer(got.len()))
            }
        }
    }
}

/// ±1 h around the target's first write.
fn hint() -> Window {
    Window { start_us: TARGET_AT_US - HOUR_US, end_us: TARGET_AT_US + HOUR_US }
}

/// The search's answer from the spans: per trace of the service, its first start, the time its spans cover
/// (first start to last end, ns) and its spans; those covering the bound; newest first, ties by id; limited.
fn searched() -> Vec<(String, i64, i64, i64)> {
    let mut traces: BTreeMap<String, (i64, i64, i64)> = BTreeMap::new();
    for s in corpus::traces_files().into_iter().flatten().filter(|s| s.service_name == SEARCHED) {
        let end_ns = s.timestamp_us * 1_000 + s.duration_nanos;
        let t = traces.entry(s.trace_id).or_insert((i64::MAX, i64::MIN, 0));
        *t = (t.0.min(s.timestamp_us), t.1.max(end_ns), t.2 + 1);
    }
    let mut found: Vec<(String, i64, i64, i64)> = traces
        .into_iter()
        .map(|(id, (start, end_ns, spans))| (id, start, end_ns - start * 1_000, spans))
        .filter(|t| t.2 >= MIN_DURATION_US * 1_000)
        .collect();
    found.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    found.truncate(SEARCH_LIMIT);
    found
}

/// The range query's answer from the points: at each step, each series' latest point in the lookback window,
/// aggregated per service; rows `(step, service, value bits)` by step, then service.
fn stepped(query: &str, start_us: i64, end_us: i64, step_us: i64) -> Result<Vec<(i64, String, u64)>, String> {
    let q = promql::parse(query)?;
    if q.by != ["service_name"] || !q.matchers.is_empty() {
        return Err(format!("the direct reading answers `by (service_name)` of a bare metric, not `{query}`"));
    }
    let points: Vec<series::Point> = series::points().into_iter().filter(|p| p.metric == q.metric).collect();
    let mut rows = Vec::new();
    for t in (start_us..=end_us).step_by(step_us as usize) {
        let mut latest: BTreeMap<(&str, &str), &series::Point> = BTreeMap::new();
        for p in points.iter().filter(|p| p.timestamp_us > t - LOOKBACK_US && p.timestamp_us <= t) {
            let kept = latest.entry((&p.service, &p.host)).or_insert(p);
            if p.timestamp_us > kept.timestamp_us {
                *kept = p;
            }
        }
        let mut by_service: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for ((service, _), p) in latest {
            by_service.entry(service).or_default().push(p.value);
        }
        rows.extend(by_service.into_iter().map(|(s, values)| (t, s.to_string(), q.aggregate(&values).to_bits())));
    }
    Ok(rows)
}

/// An Int64 cell by column name.
fn int(batch: &RecordBatch, name: &str, row: usize) -> Option<i64> {
    let column = batch.column_by_name(name)?;
    column.is_valid(row).then(|| column.as_primitive_opt::<Int64Type>().map(|c| c.value(row)))?
}

/// Every row of the batches, read by `read`; a row it cannot read is an error naming it.
fn rows<T>(batches: &[RecordBatch], read: impl Fn(&RecordBatch, usize) -> Option<T>) -> Result<Vec<T>, String> {
    let mut out = Vec::new();
    for (b, batch) in batches.iter().enumerate() {
        for i in 0..batch.num_rows() {
            let schema = batch.schema();
            out.push(
                read(batch, i).ok_or_else(|| format!("row {i} of batch {b} does not read as expected ({schema})"))?,
            );
        }
    }
    Ok(out)
}

/// Row by row, in order; the first difference is named.
fn same<T: PartialEq + std::fmt::Debug>(got: &[T], expected: &[T]) -> Result<(), String> {
    match (0..got.len().max(expected.len())).find(|&i| got.get(i) != expected.get(i)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "row {i} is {:?}, expected {:?} ({} rows against {})",
            got.get(i),
            expected.get(i),
            got.len(),
            expected.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directly_computed_answers_have_the_sizes_the_arms_promise() {
        assert_eq!(searched().len(), 2);
        assert_eq!(searched()[0].0, TARGET);
        let Ticket::Promql { query, start_us, end_us, step_s } = Arm::PromqlRange.ticket() else { panic!() };
        let steps = stepped(&query, start_us, end_us, step_s * 1_000_000).unwrap();
        assert_eq!(steps.len(), 61 * 4);
        // Each service averages its three hosts' latest points.
        assert!(steps.iter().all(|(_, _, bits)| f64::from_bits(*bits).is_finite()));
    }

    /// The PromQL answer as the service's plan returns it, from the directly computed rows.
    fn promql_batch(rows: &[(i64, String, u64)]) -> RecordBatch {
        use arrow::array::{Float64Array, Int64Array, StringArray};
        let columns: Vec<arrow::array::ArrayRef> = vec![
            std::sync::Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
            std::sync::Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1.as_str()))),
            std::sync::Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| f64::from_bits(r.2)))),
        ];
        RecordBatch::try_from_iter(["step_us", "service_name", "value"].into_iter().zip(columns)).unwrap()
    }

    #[test]
    fn a_wrong_average_or_a_dropped_row_is_named() {
        let Ticket::Promql { query, start_us, end_us, step_s } = Arm::PromqlRange.ticket() else { panic!() };
        let mut rows = stepped(&query, start_us, end_us, step_s * 1_000_000).unwrap();
        assert_eq!(Arm::PromqlRange.check(&[promql_batch(&rows)]).unwrap().rows, 244);
        rows[7].2 = (f64::from_bits(rows[7].2) + 0.5).to_bits();
        let wrong = Arm::PromqlRange.check(&[promql_batch(&rows)]).unwrap_err();
        assert!(wrong.starts_with("row 7 is Some("), "{wrong}");
        rows.remove(7);
        let dropped = Arm::PromqlRange.check(&[promql_batch(&rows)]).unwrap_err();
        assert!(dropped.starts_with("row 7 is Some(") && dropped.ends_with("(243 rows against 244)"), "{dropped}");
    }

    #[test]
    fn an_empty_answer_is_a_failure_naming_the_first_missing_row() {
        for arm in [Arm::FindTrace, Arm::SearchRecent, Arm::PromqlRange, Arm::LogqlLineFilter] {
            let why = arm.check(&[]).unwrap_err();
            assert!(why.starts_with("row 0 is None, expected Some("), "{arm:?}: {why}");
        }
    }
}
