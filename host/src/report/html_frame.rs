//! The frame every chart of the HTML report is drawn in: its height and margins, the arms' colours, the y axis
//! and the figure with its caption (the width and left margin are `html_series`'s, shared with the history
//! charts).

use std::fmt::Write;

use crate::report::format::quantity;
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

/// The y axis with five ticks from 0 to `top`.
pub fn axis(top: f64, unit: &str) -> String {
    let mut svg = format!("<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{}\" stroke=\"#888\"/>", H - BOTTOM);
    let _ = write!(svg, "<line x1=\"{LEFT}\" y1=\"{0}\" x2=\"{W}\" y2=\"{0}\" stroke=\"#888\"/>", H - BOTTOM);
    for i in 0..=4 {
        let v = top * i as f64 / 4.0;
        let y = TOP + (H - TOP - BOTTOM) * (1.0 - i as f64 / 4.0);
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            y + 4.0,
            esc(&quantity(v, unit))
        );
    }
    svg
}

pub fn figure(title: &str, higher_is_better: bool, unit: &str, svg: String, provenance: &str) -> String {
    let better = if higher_is_better { "higher is better ↑" } else { "lower is better ↓" };
    format!(
        "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" role=\"img\"><title>{}</title>{svg}</svg>\
<figcaption><b>{}</b> ({}, {better})<br>{}</figcaption></figure>\n",
        esc(title),
        esc(title),
        esc(unit),
        esc(provenance)
    )
}
