//! What each ticket becomes: one SQL statement over the service's tables, planned and run by the querier's own
//! DataFusion session. The trace engines are SQL over `traces`; PromQL and LogQL are parsed by their own
//! parsers ([`promql`], [`logql`]) and planned as SQL over `metrics_gauge` and `logs`.

use crate::service::promql::{self, quote};
use crate::service::ticket::Ticket;
use crate::service::{logql, ticket::Window};

/// The tables as the service's session registers them.
pub const TRACES: &str = "traces";
pub const METRICS: &str = "metrics_gauge";
pub const LOGS: &str = "logs";

/// The statement that answers `ticket`, or why none can.
pub fn of(ticket: &Ticket) -> Result<String, String> {
    match ticket {
        Ticket::FindTrace { trace_id, hint } => find_trace(trace_id, *hint),
        Ticket::Search { service, min_duration_us, limit } => Ok(search(service, *min_duration_us, *limit)),
        Ticket::Promql { query, start_us, end_us, step_s } => {
            Ok(promql::parse(query)?.sql(METRICS, *start_us, *end_us, step_s * 1_000_000))
        }
        Ticket::Logql { query, start_us, end_us, limit } => logql::parse(query)?.sql(LOGS, *start_us, *end_us, *limit),
    }
}

/// Every span of the trace; with a hint, those in its window, which planning uses to skip the hours outside it.
/// The bloom filter on `trace_id` prunes the files that do not hold it.
fn find_trace(trace_id: &str, hint: Option<Window>) -> Result<String, String> {
    if !trace_id.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("trace_id `{trace_id}` is not hexadecimal"));
    }
    let window = hint.map_or(String::new(), |w| {
        format!(
            " AND timestamp >= to_timestamp_micros({}) AND timestamp < to_timestamp_micros({})",
            w.start_us, w.end_us
        )
    });
    Ok(format!("SELECT * FROM {TRACES} WHERE trace_id = '{}'{window}", trace_id.to_ascii_lowercase()))
}

/// The newest `limit` traces with a span of `service` whose spans cover at least `min_duration_us`, from the
/// first span's start to the last span's end: `trace_id`, `start` (its first span's), `duration_nanos`, `spans`;
/// newest first, ties by id.
fn search(service: &str, min_duration_us: i64, limit: usize) -> String {
    format!(
        "SELECT trace_id, start, duration_nanos, spans FROM (SELECT trace_id, min(timestamp) AS start, \
         max(CAST(timestamp AS BIGINT) * 1000 + duration_nanos) - CAST(min(timestamp) AS BIGINT) * 1000 \
         AS duration_nanos, count(*) AS spans FROM {TRACES} WHERE service_name = {} GROUP BY trace_id) \
         WHERE duration_nanos >= {} ORDER BY start DESC, trace_id LIMIT {limit}",
        quote(service),
        min_duration_us.saturating_mul(1_000)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_engine_gets_its_statement_and_text_cannot_escape_its_literal() {
        let hinted = Ticket::FindTrace { trace_id: "AB".into(), hint: Some(Window { start_us: 1, end_us: 2 }) };
        let sql = of(&hinted).unwrap();
        assert!(sql.contains("trace_id = 'ab'") && sql.contains("to_timestamp_micros(2)"), "{sql}");
        let sneaky = Ticket::FindTrace { trace_id: "ab' OR 1=1 --".into(), hint: None };
        assert!(of(&sneaky).unwrap_err().contains("not hexadecimal"));
        let search = of(&Ticket::Search { service: "o'neil".into(), min_duration_us: 2, limit: 3 }).unwrap();
        assert!(search.contains("'o''neil'") && search.contains(">= 2000") && search.ends_with("LIMIT 3"), "{search}");
        let logs = Ticket::Logql { query: r#"{colour="red"} |= "x""#.into(), start_us: 0, end_us: 1, limit: 1 };
        assert!(of(&logs).unwrap_err().contains("no label `colour`"));
        let metrics = Ticket::Promql { query: "rate(m[1m])".into(), start_us: 0, end_us: 1, step_s: 1 };
        assert!(of(&metrics).unwrap_err().contains("only an aggregation"));
    }
}
