//! The frame every chart of the HTML report is drawn in: its height and margins, the series' colours, the y
//! axis on its scale and the figure with its caption (the width and left margin are `html_series`'s, shared with the history
//! charts).

use std::fmt::Write;

use crate::report::format::tick;
use crate::report::html_scale::Scale;
use crate::report::html_series::{LEFT, W};
use crate::report::html_text::esc;

/// Height of a chart, px.
pub const H: f64 = 240.0;
/// Space under a chart's plot for its x labels, px.
pub const BOTTOM: f64 = 30.0;
/// Space above a chart's plot, px.
pub const TOP: f64 = 20.0;
/// Arm `i`'s colour, in every chart of a rig.
pub const PALETTE: [&str; 8] = ["#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5"];

/// The y axis, labelled at `scale`'s ticks.
pub fn axis(scale: &Scale, unit: &str) -> String {
    let mut svg = format!("<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{}\" stroke=\"#888\"/>", H - BOTTOM);
    let _ = write!(svg, "<line x1=\"{LEFT}\" y1=\"{0}\" x2=\"{W}\" y2=\"{0}\" stroke=\"#888\"/>", H - BOTTOM);
    for v in scale.ticks() {
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            y(scale, v) + 4.0,
            esc(&tick(v, unit))
        );
    }
    svg
}

/// The height in a chart of `v` on `scale`.
pub fn y(scale: &Scale, v: f64) -> f64 {
    TOP + (H - TOP - BOTTOM) * (1.0 - scale.at(v))
}

/// A chart as a figure: its title, a legend of its series above it (HTML, may be empty), its SVG with extra
/// attributes `attrs` (what a test or a reader's tool looks for: `data-x-scale="log"`), and a caption of the
/// metric's unit, its direction of goodness and the records' provenance.
pub fn chart_figure(
    title: &str,
    legend: &str,
    attrs: &str,
    higher_is_better: bool,
    unit: &str,
    svg: String,
    provenance: &str,
) -> String {
    let better = if higher_is_better { "higher is better ↑" } else { "lower is better ↓" };
    format!(
        "<figure>{legend}<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" role=\"img\"{attrs}><title>{}</title>{svg}</svg>\
<figcaption><b>{}</b> ({}, {better})<br>{}</figcaption></figure>\n",
        esc(title),
        esc(title),
        esc(unit),
        esc(provenance)
    )
}

pub fn figure(title: &str, higher_is_better: bool, unit: &str, svg: String, provenance: &str) -> String {
    chart_figure(title, "", "", higher_is_better, unit, svg, provenance)
}
