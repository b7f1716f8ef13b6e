//! How one value reads: a quantity in a readable unit, a metric with its relative CI95, a JSON scalar without
//! quotes. Every table, report and export of `report` writes values through these.

use serde_json::Value;

use benchhost_record::{MetricValue, Record};

/// `375.5 µs ±1.2%`: the value in a readable unit and the CI95 half-width relative to it.
pub fn metric(m: &MetricValue) -> String {
    let value = quantity(m.value, &m.unit);
    match m.ci95 {
        Some([lo, hi]) if m.value != 0.0 => format!("{value} ±{:.1}%", (hi - lo) / 2.0 / m.value.abs() * 100.0),
        _ => value,
    }
}

/// A value with its unit; times are scaled to ns, µs, ms or s.
pub fn quantity(value: f64, unit: &str) -> String {
    let time = |ns: f64| match ns.abs() {
        x if x < 1e3 => format!("{} ns", sig(ns)),
        x if x < 1e6 => format!("{} µs", sig(ns / 1e3)),
        x if x < 1e9 => format!("{} ms", sig(ns / 1e6)),
        _ => format!("{} s", sig(ns / 1e9)),
    };
    match unit {
        "ns" => time(value),
        "us" => time(value * 1e3),
        "ms" => time(value * 1e6),
        "s" => time(value * 1e9),
        _ => format!("{} {unit}", sig(value)),
    }
}

/// Four significant digits, no exponent, no trailing zeros after an integer part of four digits or more.
fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return x.to_string();
    }
    let digits = x.abs().log10().floor() as i32 + 1;
    let decimals = (4 - digits).max(0) as usize;
    format!("{x:.decimals$}")
}

/// A JSON scalar without quotes.
pub fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The suffix of a latency measured from each operation's actual start, as a closed loop measures it, beside the
/// same latency from its intended start (`plugin_api::open_loop`): reports show it on the corrected metric's
/// line, so no one reads the one for the other.
pub(crate) const UNCORRECTED: &str = "_uncorrected";

/// `record`'s metrics as the reports list them, each with its uncorrected twin when it has one (the twin has
/// no line of its own).
pub(crate) fn metrics_shown(record: &Record) -> Vec<(&str, &MetricValue, Option<&MetricValue>)> {
    let twin = |name: &str| record.metrics.get(&format!("{name}{UNCORRECTED}"));
    let has_corrected = |name: &str| name.strip_suffix(UNCORRECTED).is_some_and(|c| record.metrics.contains_key(c));
    record
        .metrics
        .iter()
        .filter(|(name, _)| !has_corrected(name))
        .map(|(name, m)| (name.as_str(), m, twin(name)))
        .collect()
}

/// A metric's value, and its uncorrected twin's beside it.
pub(crate) fn metric_beside(m: &MetricValue, uncorrected: Option<&MetricValue>) -> String {
    match uncorrected {
        Some(u) => format!("{} (uncorrected {})", metric(m), metric(u)),
        None => metric(m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_pick_a_readable_unit() {
        assert_eq!(quantity(375_500.0, "ns"), "375.5 µs");
        assert_eq!(quantity(12.25, "ns"), "12.25 ns");
        assert_eq!(quantity(2_500_000_000.0, "ns"), "2.500 s");
        assert_eq!(quantity(390_007.3, "records/s"), "390007 records/s");
        assert_eq!(quantity(0.5, "ratio"), "0.5000 ratio");
    }

    #[test]
    fn metric_shows_relative_ci() {
        let m = MetricValue {
            value: 100.0,
            unit: "ns".into(),
            higher_is_better: false,
            ci95: Some([99.0, 101.0]),
            n: Some(5),
        };
        assert_eq!(metric(&m), "100.0 ns ±1.0%");
    }
}
