//! The querier service's tickets: what one `do_get` asks for. A ticket is a small JSON document whose one key
//! names the engine that answers it (`find_trace`, `search`, `promql`, `logql`) and whose value holds that
//! engine's arguments, as SignalDB's router reads a ticket's format to pick its engine. A ticket that names no
//! engine, misses an argument or holds a nonsensical one is refused as `InvalidArgument`, saying why.

use serde::{Deserialize, Serialize};
use tonic::Status;

/// One request to the service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Ticket {
    /// Every span of one trace, pruned on the trace id's bloom filters; `hint` a time window planning may use.
    FindTrace {
        trace_id: String,
        #[serde(default)]
        hint: Option<Window>,
    },
    /// The newest `limit` traces of `service` whose root lasted at least `min_duration_us`.
    Search { service: String, min_duration_us: i64, limit: usize },
    /// A PromQL range query, evaluated at every `step_s` from `start_us` to `end_us`.
    Promql { query: String, start_us: i64, end_us: i64, step_s: i64 },
    /// A LogQL log query over a window: the newest `limit` matching lines.
    Logql { query: String, start_us: i64, end_us: i64, limit: usize },
}

/// A time window, microseconds since the epoch, `start_us` inclusive, `end_us` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub start_us: i64,
    pub end_us: i64,
}

impl Ticket {
    /// The ticket as Flight carries it.
    pub fn encode(&self) -> arrow_flight::Ticket {
        arrow_flight::Ticket::new(serde_json::to_vec(self).expect("a ticket is plain data"))
    }

    /// The ticket a client sent, or why it routes nowhere.
    pub fn decode(ticket: &arrow_flight::Ticket) -> Result<Ticket, Status> {
        let text = std::str::from_utf8(&ticket.ticket)
            .map_err(|e| Status::invalid_argument(format!("a ticket is JSON text; this one is not UTF-8: {e}")))?;
        let decoded: Ticket = serde_json::from_str(text).map_err(|e| {
            Status::invalid_argument(format!(
                "ticket {} routes to no engine: {e} (a ticket is one of find_trace, search, promql, logql)",
                quoted(text)
            ))
        })?;
        decoded.check().map_err(|why| Status::invalid_argument(format!("ticket {}: {why}", quoted(text))))?;
        Ok(decoded)
    }

    /// The arguments no engine can answer.
    fn check(&self) -> Result<(), String> {
        let window = |start_us: i64, end_us: i64| match start_us < end_us {
            true => Ok(()),
            false => Err(format!("its window is empty (start_us {start_us} is not before end_us {end_us})")),
        };
        match self {
            Ticket::FindTrace { trace_id, hint } => {
                if trace_id.is_empty() {
                    return Err("trace_id is empty".into());
                }
                hint.map_or(Ok(()), |w| window(w.start_us, w.end_us))
            }
            Ticket::Search { limit: 0, .. } | Ticket::Logql { limit: 0, .. } => Err("limit is 0".into()),
            Ticket::Search { .. } => Ok(()),
            Ticket::Promql { step_s, .. } if *step_s <= 0 => Err(format!("step_s is {step_s}, not positive")),
            Ticket::Promql { start_us, end_us, .. } | Ticket::Logql { start_us, end_us, .. } => {
                window(*start_us, *end_us)
            }
        }
    }
}

/// The ticket's text for a message, cut short.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("`{}…`", &text[..cut]),
        None => format!("`{text}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(bytes: &[u8]) -> String {
        let status = Ticket::decode(&arrow_flight::Ticket::new(bytes.to_vec())).unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
        status.message().to_string()
    }

    #[test]
    fn every_ticket_survives_its_encoding() {
        let tickets = [
            Ticket::FindTrace { trace_id: "ab".into(), hint: None },
            Ticket::FindTrace { trace_id: "ab".into(), hint: Some(Window { start_us: 1, end_us: 2 }) },
            Ticket::Search { service: "api".into(), min_duration_us: 5, limit: 20 },
            Ticket::Promql { query: "avg by (service_name) (cpu)".into(), start_us: 0, end_us: 60, step_s: 15 },
            Ticket::Logql { query: r#"{service_name="api"} |= "error""#.into(), start_us: 0, end_us: 9, limit: 5 },
        ];
        for ticket in tickets {
            assert_eq!(Ticket::decode(&ticket.encode()).unwrap(), ticket);
        }
    }

    #[test]
    fn a_ticket_that_routes_nowhere_is_an_invalid_argument_saying_why() {
        assert!(refused(br#"{"sql": {"query": "select 1"}}"#).contains("unknown variant `sql`"));
        assert!(refused(b"find_trace:ab").contains("routes to no engine"));
        assert!(refused(br#"{"search": {"service": "api", "limit": 3}}"#).contains("missing field `min_duration_us`"));
        assert!(refused(br#"{"find_trace": {"trace_id": "ab", "hint": 3}}"#).contains("routes to no engine"));
        assert!(refused(br#"{"find_trace": {"trace_id": "ab", "colour": 3}}"#).contains("unknown field `colour`"));
        assert!(refused(&[0xff, 0xfe]).contains("not UTF-8"));
    }

    #[test]
    fn arguments_no_engine_can_answer_are_refused_by_name() {
        assert!(refused(br#"{"search": {"service": "api", "min_duration_us": 1, "limit": 0}}"#).contains("limit is 0"));
        let promql = br#"{"promql": {"query": "up", "start_us": 0, "end_us": 60, "step_s": 0}}"#;
        assert!(refused(promql).contains("step_s is 0"));
        let empty = br#"{"logql": {"query": "{a=\"b\"}", "start_us": 9, "end_us": 9, "limit": 1}}"#;
        assert!(refused(empty).contains("window is empty"));
    }
}
