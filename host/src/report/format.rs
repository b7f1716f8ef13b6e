//! How one value reads: a quantity in a readable unit, a metric with its relative CI95, a JSON scalar without
//! quotes. Every table, report and export of `report` writes values through these.

use serde_json::Value;

use benchhost_record::{MetricValue, Record};

/// The fewest values an interval is shown from: Student's t over 2 has one degree of freedom (12.7 standard
/// errors a side), and a quick run's 2 repetitions printed `±683%`.
pub const LEAST_FOR_AN_INTERVAL: u64 = 3;

/// `375.5 µs ±1.2%`: the value in a readable unit and the CI95 half-width relative to it; `(n = 2: no interval)`
/// where the interval rests on fewer than [`LEAST_FOR_AN_INTERVAL`] values.
pub fn metric(m: &MetricValue) -> String {
    let value = quantity(m.value, &m.unit);
    match (m.ci95, m.n) {
        (Some(_), Some(n)) if n < LEAST_FOR_AN_INTERVAL => format!("{value} (n = {n}: no interval)"),
        (Some([lo, hi]), _) if m.value != 0.0 => format!("{value} ±{:.1}%", (hi - lo) / 2.0 / m.value.abs() * 100.0),
        _ => value,
    }
}

/// A verdict's detectable change as tables show it: `±4.7%`, or `>±100%` past a doubling, where the figure
/// only says the interval cannot tell (a 2-process interval read `±54739565.5%`).
pub fn detectable(d: f64) -> String {
    match d {
        d if d > 1.0 => ">±100%".to_string(),
        d => format!("±{:.1}%", d * 100.0),
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
        // A count reads as one: `24 files`, not `24.00 files`; a mean of counts keeps its fraction (`1.1 files`).
        _ if COUNTS.contains(&unit) && value.fract() == 0.0 && value.abs() < 1e15 => {
            format!("{} {unit}", grouped(&format!("{value:.0}")))
        }
        _ if COUNTS.contains(&unit) => format!("{} {unit}", trimmed(sig(value))),
        // A share in [0, 1] (`Metric::share`, the querier's `sort_kept`) reads as a percentage: `100%`, not `1.000 ratio`.
        "ratio" => format!("{}%", trimmed(sig(100.0 * value))),
        _ => format!("{} {unit}", sig(value)),
    }
}

/// Units of things counted, whose whole values print without decimals.
const COUNTS: [&str; 9] =
    ["bytes", "records", "rows", "files", "manifests", "allocs", "commits", "row_groups", "instructions"];

/// Four significant digits, no exponent, no trailing zeros after an integer part of four digits or more, and
/// thousands separated from five digits on (`1,813,459,900`).
fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return x.to_string();
    }
    let digits = x.abs().log10().floor() as i32 + 1;
    let decimals = (4 - digits).max(0) as usize;
    grouped(&format!("{x:.decimals$}"))
}

/// `1813459900` as `1,813,459,900`; four digits or fewer, a fraction or a sign stay as they are.
fn grouped(text: &str) -> String {
    let (sign, rest) = text.split_at(usize::from(text.starts_with('-')));
    let (whole, fraction) = rest.split_at(rest.find('.').unwrap_or(rest.len()));
    if whole.len() <= 4 || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + whole.len() / 3);
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    format!("{sign}{out}{fraction}")
}

/// A chart's tick label: [`quantity`], but a count or rate of ten thousand or more with a metric prefix
/// (`250k rows/s`, `1G rows/s`), so that it fits the chart's margin (`1,000,000,000 rows/s` was cut at its left
/// edge).
pub fn tick(value: f64, unit: &str) -> String {
    let times = ["ns", "us", "ms", "s"];
    let prefixes = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e4, "k")];
    match prefixes.iter().find(|(at, _)| value.abs() >= *at && !times.contains(&unit)) {
        Some(&(at, prefix)) => {
            let scaled = value / if prefix == "k" { 1e3 } else { at };
            format!("{}{prefix} {unit}", trimmed(format!("{scaled:.2}")))
        }
        None => quantity(value, unit),
    }
}

/// A decimal without its trailing zeros: `1.100` as `1.1`.
fn trimmed(text: String) -> String {
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}

/// `1 cell`, `2 cells`: a count and its noun, plural when the count is not one (`noun` takes an `s`).
pub fn count(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// ` [alternate_windows quick]`: how a series was measured, after its label, when not plainly (its records are
/// another series than the plain ones: `benchhost_record::method`); nothing when plainly.
pub fn method_suffix(method: &str) -> String {
    match method.is_empty() {
        true => String::new(),
        false => format!(" [{method}]"),
    }
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
        assert_eq!(quantity(390_007.3, "records/s"), "390,007 records/s");
        // A share reads as a percentage (regression: `sort_kept` read `1.000 ratio`).
        assert_eq!(
            (quantity(0.5, "ratio"), quantity(1.0, "ratio"), quantity(0.0, "ratio")),
            ("50%".into(), "100%".into(), "0%".into())
        );
        assert_eq!(quantity(2.0 / 3.0, "ratio"), "66.67%");
    }

    #[test]
    fn counts_read_as_whole_numbers_and_large_numbers_have_separators() {
        // regression: `1.000 allocs`, `24.00 files` and `1813459900 rows/s`.
        assert_eq!(quantity(1.0, "allocs"), "1 allocs");
        assert_eq!(quantity(24.0, "files"), "24 files");
        assert_eq!(quantity(1.1, "files"), "1.1 files", "a mean of counts keeps its fraction");
        assert_eq!(quantity(1_813_459_900.0, "rows/s"), "1,813,459,900 rows/s");
        assert_eq!(quantity(1_048_576.0, "bytes"), "1,048,576 bytes");
        assert_eq!(quantity(-12_345.0, "records"), "-12,345 records");
        assert_eq!(quantity(1234.4, "MB/s"), "1234 MB/s", "four digits stay together");
        assert_eq!(quantity(12_345_678.0, "ns"), "12.35 ms");
    }

    #[test]
    fn tick_labels_are_short_enough_for_the_charts_margin() {
        assert_eq!(tick(1_000_000_000.0, "rows/s"), "1G rows/s");
        assert_eq!(tick(250_000.0, "records/s"), "250k records/s");
        assert_eq!(tick(1_500_000.0, "bytes"), "1.5M bytes");
        assert_eq!(tick(2_500.0, "rows/s"), "2500 rows/s");
        assert_eq!(tick(12_345_678.0, "ns"), "12.35 ms", "a time keeps its unit");
    }

    #[test]
    fn a_count_of_one_takes_the_singular() {
        assert_eq!([count(0, "cell"), count(1, "cell"), count(2, "cell")], ["0 cells", "1 cell", "2 cells"]);
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
        // regression: a quick run's 2 repetitions printed `±683%`, as if the interval meant something.
        let two = MetricValue { n: Some(2), ci95: Some([1.0, 1000.0]), ..m };
        assert_eq!(metric(&two), "100.0 ns (n = 2: no interval)");
        assert_eq!([detectable(0.047), detectable(547_395.655)], ["±4.7%", ">±100%"]);
    }
}
