//! One metric of one block of a rig's newest run, charted along what the block varies. A numeric parameter of
//! three or more values is the x axis, on a log scale where its values span more than a decade, each
//! combination of the other parameters a line over it (cache_tier: a line per tier over rows); otherwise the
//! parameter of the most values is the x axis of grouped bars. Either way every series is named by its values
//! (`tier=delta_hit`) in a legend, never by a number to look up; every value carries its CI95 whisker.

use std::collections::BTreeSet;
use std::fmt::Write;

use serde_json::Value;

use crate::report::format::{UNCORRECTED, plain};
use crate::report::html_frame::{BOTTOM, H, PALETTE, axis, chart_figure, y};
use crate::report::html_scale::Scale;
use crate::report::html_series::{LEFT, W};
use crate::report::html_text::{esc, provenance};
use crate::report::order;
use benchhost_record::Record;

type Variant = std::collections::BTreeMap<String, Value>;

/// Along what a block's arms are drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// The parameter along the x axis.
    pub x: String,
    /// Its values, in order.
    pub values: Vec<Value>,
    /// Whether it is a number of three or more values, drawn as lines over a numeric axis.
    pub numeric: bool,
    /// Each series: its name (the other parameters that vary, `tier=delta_hit`; empty when none does) and the
    /// arm at each of the x axis' values.
    pub series: Vec<(String, Vec<Option<usize>>)>,
}

/// The layout of a block's arms (`variants`); `None` when nothing varies between them.
pub fn layout(variants: &[&Variant]) -> Option<Layout> {
    let keys: BTreeSet<&String> = variants.iter().flat_map(|v| v.keys()).collect();
    let values_of = |k: &str| -> Vec<Value> {
        let mut values: Vec<Value> = Vec::new();
        for v in variants {
            let value = v.get(k).cloned().unwrap_or(Value::Null);
            if !values.contains(&value) {
                values.push(value);
            }
        }
        values.sort_by(order::value);
        values
    };
    let varying: Vec<(&String, Vec<Value>)> =
        keys.into_iter().map(|k| (k, values_of(k))).filter(|(_, values)| values.len() > 1).collect();
    let numeric = |values: &[Value]| values.len() >= 3 && values.iter().all(Value::is_number);
    // A numeric axis first, then the most values; ties to the first name.
    let (x, values) = varying
        .iter()
        .max_by(|a, b| (numeric(&a.1), a.1.len()).cmp(&(numeric(&b.1), b.1.len())).then_with(|| b.0.cmp(a.0)))?
        .clone();
    let mut series: Vec<(String, Vec<Option<usize>>)> = Vec::new();
    for (i, variant) in variants.iter().enumerate() {
        let name: Vec<String> = varying
            .iter()
            .filter(|(k, _)| *k != x)
            .map(|(k, _)| format!("{k}={}", variant.get(*k).map_or("-".into(), plain)))
            .collect();
        let name = name.join(" ");
        let at = values.iter().position(|v| Some(v) == variant.get(x)).unwrap_or(0);
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, arms)) => arms[at] = Some(i),
            None => {
                let mut arms = vec![None; values.len()];
                arms[at] = Some(i);
                series.push((name, arms));
            }
        }
    }
    Some(Layout { x: x.clone(), numeric: numeric(&values), values, series })
}

/// The chart of `metric` over `arms` (a block's newest records, in the order `layout` was made of).
pub fn chart(layout: &Layout, arms: &[&Record], metric: &str) -> String {
    let Some(sample) = arms.iter().find_map(|r| r.metrics.get(metric)) else { return String::new() };
    let twin = format!("{metric}{UNCORRECTED}");
    let beside = arms.iter().any(|r| r.metrics.contains_key(&twin));
    let bounds = arms.iter().flat_map(|r| {
        let m = r.metrics.get(metric);
        let ci = m.and_then(|m| m.ci95).unwrap_or([f64::NAN; 2]);
        [m.map_or(f64::NAN, |m| m.value), ci[0], ci[1], r.metrics.get(&twin).map_or(f64::NAN, |m| m.value)]
    });
    let scale = Scale::fit(bounds, layout.numeric);
    let mut svg = axis(&scale, &sample.unit);
    let (x_log, attrs) = match layout.numeric {
        true => lines(layout, arms, metric, &scale, &mut svg),
        false => bars(layout, arms, [metric, &twin], &scale, &mut svg),
    };
    let _ = write!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
        LEFT + (W - LEFT) / 2.0,
        H - 2.0,
        esc(&format!("{}{}", layout.x, if x_log { " (log scale)" } else { "" }))
    );
    let mut title = format!("{metric} by {}", layout.x);
    if beside {
        title += ", the uncorrected latency pale beside it: uncorrected (from each operation's actual start)";
    }
    let attrs = format!(" data-metric=\"{}\"{attrs}", esc(metric));
    chart_figure(&title, &legend(layout), &attrs, sample.higher_is_better, &sample.unit, svg, &provenance(arms))
}

/// Each series' colour swatch and name, when there is more than one or it has a name.
fn legend(layout: &Layout) -> String {
    if layout.series.len() == 1 && layout.series[0].0.is_empty() {
        return String::new();
    }
    let items: String = layout
        .series
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            format!("<span class=\"series\"><i style=\"background:{}\"></i>{}</span>", PALETTE[i % 8], esc(name))
        })
        .collect();
    format!("<div class=\"legend\">{items}</div>")
}

/// A line per series over the numeric x axis, a dot and a CI95 whisker at each arm; whether x is on a log
/// scale, and the chart's attributes.
fn lines(layout: &Layout, arms: &[&Record], metric: &str, scale: &Scale, svg: &mut String) -> (bool, String) {
    let xs: Vec<f64> = layout.values.iter().filter_map(Value::as_f64).collect();
    let along = Scale::fit(xs.iter().copied(), true);
    // Room at either end for half of a tick's label (`10000` was cut at the chart's right edge).
    let x = |v: f64| LEFT + 24.0 + (W - LEFT - 48.0) * along.at(v);
    for (value, &at) in layout.values.iter().zip(&xs) {
        // Each value of the parameter is a tick: the sizes the rig was run at, not round numbers between them.
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            x(at),
            H - BOTTOM + 13.0,
            esc(&plain(value))
        );
    }
    for (i, (name, members)) in layout.series.iter().enumerate() {
        let colour = PALETTE[i % 8];
        let points: Vec<(f64, &benchhost_record::MetricValue)> =
            members.iter().zip(&xs).filter_map(|(arm, &at)| Some((at, arms[(*arm)?].metrics.get(metric)?))).collect();
        let path: Vec<String> =
            points.iter().map(|(at, m)| format!("{:.1},{:.1}", x(*at), y(scale, m.value))).collect();
        let _ = write!(
            svg,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"/>",
            path.join(" ")
        );
        for (at, m) in points {
            if let Some(ci) = m.ci95 {
                svg.push_str(&whisker(x(at), ci.map(|v| y(scale, v)), 3.0, colour));
            }
            let tip = format!("{name} {}={}: {}", layout.x, plain_number(at), crate::report::format::metric(m));
            let _ = write!(
                svg,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{colour}\"><title>{}</title></circle>",
                x(at),
                y(scale, m.value),
                esc(tip.trim())
            );
        }
    }
    let log = along.is_log();
    let attrs = format!(
        " data-x=\"{}\" data-x-scale=\"{}\" data-y-scale=\"{}\"",
        esc(&layout.x),
        scale_name(log),
        scale_name(scale.is_log())
    );
    (log, attrs)
}

fn scale_name(log: bool) -> &'static str {
    if log { "log" } else { "linear" }
}

/// `10000` for 10000.0, `2.5` for 2.5.
fn plain_number(v: f64) -> String {
    plain(&serde_json::json!(v)).trim_end_matches(".0").to_string()
}

/// Grouped bars: a slot per value of x, in it a bar per series (and an open-loop latency's uncorrected twin
/// pale beside its bar), each with its CI95 whisker; never on a log scale, and its attributes.
fn bars(
    layout: &Layout,
    arms: &[&Record],
    [metric, twin]: [&str; 2],
    scale: &Scale,
    svg: &mut String,
) -> (bool, String) {
    let slot = (W - LEFT - 10.0) / layout.values.len() as f64;
    let per_slot =
        layout.series.len() as f64 * if arms.iter().any(|r| r.metrics.contains_key(twin)) { 2.0 } else { 1.0 };
    let width = slot * 0.8 / per_slot;
    for (j, value) in layout.values.iter().enumerate() {
        let centre = LEFT + slot * (j as f64 + 0.5);
        let label = plain(value);
        let fits = (slot / 6.5) as usize;
        let shown = match label.chars().count() > fits {
            true => format!("{}…", label.chars().take(fits.saturating_sub(1)).collect::<String>()),
            false => label.clone(),
        };
        let _ = write!(
            svg,
            "<text x=\"{centre:.1}\" y=\"{:.1}\" text-anchor=\"middle\"><title>{}</title>{}</text>",
            H - BOTTOM + 13.0,
            esc(&label),
            esc(&shown)
        );
        let mut left = LEFT + slot * j as f64 + slot * 0.1;
        for (i, (name, members)) in layout.series.iter().enumerate() {
            let record = members[j].map(|a| arms[a]);
            for (which, style) in [(metric, ""), (twin, " fill-opacity=\"0.35\"")] {
                let Some(m) = record.and_then(|r| r.metrics.get(which)) else { continue };
                let top = y(scale, m.value);
                let tip = format!("{name} {}={label}: {}", layout.x, crate::report::format::metric(m));
                let _ = write!(
                    svg,
                    "<rect x=\"{left:.1}\" y=\"{top:.1}\" width=\"{width:.1}\" height=\"{:.1}\" fill=\"{}\"{style}><title>{}</title></rect>",
                    (H - BOTTOM - top).max(0.0),
                    PALETTE[i % 8],
                    esc(tip.trim())
                );
                if let Some(ci) = m.ci95 {
                    svg.push_str(&whisker(left + width / 2.0, ci.map(|v| y(scale, v)), 4.0, "#222"));
                }
                left += width;
            }
        }
    }
    (false, format!(" data-x=\"{}\" data-x-scale=\"category\"", esc(&layout.x)))
}

/// A CI95 whisker at `x` from height `ys[0]` to `ys[1]`, its caps `half` px either side.
fn whisker(x: f64, [low, high]: [f64; 2], half: f64, colour: &str) -> String {
    format!(
        "<path d=\"M{x:.1},{low:.1}V{high:.1}M{0:.1},{low:.1}h{1}M{0:.1},{high:.1}h{1}\" stroke=\"{colour}\" fill=\"none\"/>",
        x - half,
        2.0 * half
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn variant(value: Value) -> Variant {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_numeric_parameter_of_three_values_is_the_x_axis_and_the_rest_name_the_series() {
        let arm = |rows: i64, tier: &str| variant(json!({"rows": rows, "tier": tier, "upstream": "canned"}));
        let arms = [arm(100, "delta_hit"), arm(1000, "delta_hit"), arm(100, "object_hit"), arm(10000, "delta_hit")];
        let found = layout(&arms.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!((found.x.as_str(), found.numeric), ("rows", true));
        assert_eq!(found.values, [json!(100), json!(1000), json!(10000)]);
        assert_eq!(
            found.series,
            [
                ("tier=delta_hit".into(), vec![Some(0), Some(1), Some(3)]),
                ("tier=object_hit".into(), vec![Some(2), None, None])
            ]
        );
        let two = [arm(100, "delta_hit"), arm(1000, "delta_hit"), arm(100, "object_hit"), arm(1000, "object_hit")];
        let found = layout(&two.iter().collect::<Vec<_>>()).unwrap();
        assert!(!found.numeric, "two sizes are two categories");
        assert_eq!(found.x, "rows", "of equal counts, the first name");
        assert!(layout(&[&arm(100, "delta_hit")]).is_none(), "one arm: nothing to draw along");
    }

    #[test]
    fn the_outermost_x_ticks_fit_inside_the_chart() {
        // regression: the last tick (`10000`) was cut at the chart's right edge. 11 px system-ui: up to ~7 px a digit.
        let arm = |rows: i64| variant(json!({"rows": rows}));
        let arms = [arm(100), arm(1000), arm(10000)];
        let found = layout(&arms.iter().collect::<Vec<_>>()).unwrap();
        let records: Vec<Record> =
            [100, 1000, 10000].iter().map(|&rows| Record::point_for_tests(1, rows, 5.0)).collect();
        let (mut svg, scale) = (String::new(), Scale::fit([1.0, 10.0], false));
        lines(&found, &records.iter().collect::<Vec<_>>(), "t", &scale, &mut svg);
        let tick = regex::Regex::new(r#"<text x="([\d.]+)"[^>]*text-anchor="middle">(\d+)</text>"#).unwrap();
        let ticks: Vec<(f64, usize)> = tick.captures_iter(&svg).map(|c| (c[1].parse().unwrap(), c[2].len())).collect();
        assert_eq!(ticks.len(), 3, "{svg}");
        for (x, chars) in ticks {
            let half = chars as f64 * 7.0 / 2.0;
            assert!(x - half >= LEFT && x + half <= W, "a tick of {chars} digits at x = {x}");
        }
    }
}
