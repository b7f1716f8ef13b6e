//! The latency-by-percentile plot of open-loop cells (`plugin_api::open_loop`), HdrHistogram style: the
//! percentile on a log axis of 1 / (1 - q), so 90%, 99% and 99.9% are evenly spaced, the latency on a linear
//! one; per arm of the newest run the corrected latencies (from each operation's intended start) as a solid
//! line and the uncorrected ones (from its actual start, what a closed loop reports) dashed in the same colour.
//! Where a stall was hidden by coordinated omission, the two lines part at the tail.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::report::format::UNCORRECTED;
use crate::report::html_frame::{BOTTOM, H, PALETTE, TOP, axis, figure};
use crate::report::html_scale::Scale;
use crate::report::html_series::{LEFT, W};
use crate::report::html_text::{esc, provenance};
use benchhost_record::Record;

/// One plot per latency of `latest`'s arms that has percentiles with uncorrected twins (`p99_append_us` and
/// `p99_append_us_uncorrected`); nothing for rigs without one. Arm `i` is drawn in the colour of the first
/// series of the block's charts, named by `names[i]` (what tells it from the block's other arms).
pub fn plots(latest: &[&Record], names: &[String]) -> String {
    let whats: BTreeSet<&str> = latest.iter().flat_map(|r| r.metrics.keys()).filter_map(|m| latency_of(m)).collect();
    whats.into_iter().map(|what| plot(latest, names, what)).collect()
}

/// `append` for `p99_append_us` when it is a percentile in microseconds, else `None`.
fn latency_of(metric: &str) -> Option<&str> {
    let rest = metric.strip_prefix('p')?.strip_suffix("_us")?;
    let (digits, what) = rest.split_once('_')?;
    (quantile(digits).is_some() && !what.is_empty()).then_some(what)
}

/// `0.5` for `50`, `0.999` for `999`: the digits after the decimal point.
fn quantile(digits: &str) -> Option<f64> {
    let q: f64 = format!("0.{digits}").parse().ok()?;
    (digits.bytes().all(|b| b.is_ascii_digit()) && q > 0.0 && q < 1.0).then_some(q)
}

/// Every arm's `(q, corrected, uncorrected)` points for `what`, by increasing q, keeping only percentiles whose
/// twin the record has.
fn points(record: &Record, what: &str) -> Vec<(f64, f64, f64)> {
    let mut points: Vec<(f64, f64, f64)> = record
        .metrics
        .iter()
        .filter(|(name, _)| latency_of(name) == Some(what))
        .filter_map(|(name, m)| {
            let digits = name.strip_prefix('p')?.split_once('_')?.0;
            let twin = record.metrics.get(&format!("{name}{UNCORRECTED}"))?;
            Some((quantile(digits)?, m.value, twin.value))
        })
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

fn plot(latest: &[&Record], names: &[String], what: &str) -> String {
    let arms: Vec<Vec<(f64, f64, f64)>> = latest.iter().map(|r| points(r, what)).collect();
    let all = || arms.iter().flatten();
    if all().count() < 2 {
        return String::new();
    }
    let top = all().map(|(_, c, u)| c.max(*u)).fold(0.0, f64::max).max(f64::MIN_POSITIVE) * 1.1;
    let decades = all().map(|(q, _, _)| nines(*q)).fold(1.0, f64::max).ceil();
    let x = |q: f64| LEFT + (W - LEFT - 110.0) * nines(q) / decades;
    let y = |us: f64| TOP + (H - TOP - BOTTOM) * (1.0 - us / top);
    let mut svg = axis(&Scale::Linear { top }, "us");
    // A tick at each percentile drawn (evenly spaced when they are 90%, 99%, 99.9%...).
    let mut ticks: Vec<f64> = all().map(|p| p.0).collect();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    for q in ticks {
        let label = format!("{}%", trim(q * 100.0));
        let _ =
            write!(svg, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>", x(q), H - BOTTOM + 14.0);
    }
    for (i, arm) in arms.iter().enumerate().filter(|(_, a)| !a.is_empty()) {
        let colour = PALETTE[i % PALETTE.len()];
        for (dash, value) in [("", 1usize), (" stroke-dasharray=\"5,4\"", 2)] {
            let path: Vec<String> =
                arm.iter().map(|p| format!("{:.1},{:.1}", x(p.0), y(if value == 1 { p.1 } else { p.2 }))).collect();
            let _ = write!(
                svg,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"{dash}/>",
                path.join(" ")
            );
        }
        let (q, corrected, _) = arm[arm.len() - 1];
        let name = names.get(i).filter(|n| !n.is_empty()).map_or(String::from("newest"), Clone::clone);
        let _ = write!(svg, "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>", x(q) + 4.0, y(corrected) + 4.0, esc(&name));
    }
    let title = format!(
        "{what} latency by percentile, newest run per arm: corrected (from the intended start) solid, uncorrected dashed"
    );
    figure(&title, false, "us", svg, &provenance(latest))
}

/// How many nines `q` has: log10(1 / (1 - q)), 1 for 90%, 3 for 99.9%.
fn nines(q: f64) -> f64 {
    -(1.0 - q).log10()
}

/// `99.9` for 99.900000001, `50` for 50.0.
fn trim(percent: f64) -> String {
    let text = format!("{percent:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_metrics_are_told_from_others_and_read_as_quantiles() {
        assert_eq!(latency_of("p99_append_us"), Some("append"));
        assert_eq!(latency_of("p999_e2e_us"), Some("e2e"));
        assert_eq!(latency_of("p99_gap_us"), Some("gap"), "a percentile, drawn only if it has a twin");
        for other in ["p99_append_us_uncorrected", "appends_per_s", "peak_us", "p_x_us", "p99__us", "pxx_a_us"] {
            assert_eq!(latency_of(other), None, "{other}");
        }
        assert_eq!(quantile("50"), Some(0.5));
        assert_eq!(quantile("999"), Some(0.999));
        assert!((nines(0.999) - 3.0).abs() < 1e-9 && (nines(0.9) - 1.0).abs() < 1e-9);
        assert_eq!((trim(99.9), trim(50.0), trim(99.99)), ("99.9".into(), "50".into(), "99.99".into()));
    }
}
