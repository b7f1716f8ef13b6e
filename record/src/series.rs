//! Which series a record belongs to: its rig, its variant, and how it was measured, so that a record measured
//! another way (a duel's window, `--quick`, another count of repetitions) is never compared with a plain one.

use crate::{Kind, Record};

/// The identity of a series: bench, and variant (its canonical JSON, keys sorted) followed by how it was
/// measured when that is not plain (`{"mode":"split"} alternate_windows quick`, see [`method`]).
pub type SeriesKey = (String, String);

/// The series key of a record: a record measured another way (a duel's window, `--quick`, another count of
/// repetitions) is never the previous record of a plain series.
pub fn series(record: &Record) -> SeriesKey {
    let variant = serde_json::to_string(&record.variant).expect("variants serialize");
    (record.bench.clone(), series_variant(variant, &method(record)))
}

/// A series key's second part: the variant's JSON, and the method after a space when there is one.
pub fn series_variant(variant: String, method: &str) -> String {
    match method.is_empty() {
        true => variant,
        false => format!("{variant} {method}"),
    }
}

/// How `record` was measured ([`crate::CellInfo::method`]); empty for a plain iterations-style cell.
pub fn method(record: &Record) -> String {
    let cell = record.cell.as_ref();
    method_of(record.kind, cell.and_then(|c| c.method.as_deref()), cell.and_then(|c| c.rounds))
}

/// The recorded method; for a measurement of an older benchhost, which recorded none, `rounds` when its cell
/// combined processes (a duel's or `--rounds`).
pub(crate) fn method_of(kind: Kind, method: Option<&str>, rounds: Option<u32>) -> String {
    match (method, rounds) {
        (Some(method), _) => method.to_string(),
        (None, Some(_)) if kind == Kind::Measurement => "rounds".into(),
        _ => String::new(),
    }
}
