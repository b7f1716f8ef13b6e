//! The verdicts as the HTML page opens with them: a forest plot per group of verdicts (what they compare
//! against), one row per comparison and metric, what needs a look first (regressions, then improvements, then
//! the undecided, `no_change` last). Each row draws the ratio as a point and its CI95 as a line over the
//! ±threshold band, the smallest change the comparison could have caught as two ticks, coloured by decision,
//! on a log-ratio axis shared by the group (so +10% and -9.1% are equally far from 1); a ratio past the axis'
//! ends is an arrow at the end, its number in the row. Each row links to its rig's section.

use std::fmt::Write;

use crate::report::html_text::esc;
use crate::report::verdicts::{Group, change, counts, decision_text, threshold, urgency, verdict_names};
use benchhost_record::{Decision, Record, Verdict};

/// Width and height of a row's plot, px.
const PLOT: [f64; 2] = [300.0, 18.0];
/// The widest the axis goes: a ratio of 2 (or 1/2) either way; a ratio beyond is an arrow at the end.
const WIDEST: f64 = std::f64::consts::LN_2;

/// The page's first section: every group of verdicts as a forest plot. Empty without verdicts.
pub fn html(groups: &[Group<'_>]) -> String {
    if groups.is_empty() {
        return String::new();
    }
    let mut out = String::from("<section class=\"verdicts\"><h2>Verdicts</h2>\n");
    // The group whose first row needs the most urgent look first (each group lists its own that way).
    let mut groups: Vec<&Group<'_>> = groups.iter().collect();
    groups.sort_by_key(|g| urgency(g.verdicts.first().and_then(|r| r.verdict.as_ref()).map(|v| v.decision)));
    for group in groups {
        let _ = writeln!(out, "<h3>{}</h3>", esc(&group.heading));
        if !group.libraries.is_empty() {
            let _ = writeln!(out, "<p>Libraries (SHA-256): {}.</p>", esc(&group.libraries.join("; ")));
        }
        let threshold = threshold(group).map(|t| format!(" (threshold {t})")).unwrap_or_default();
        let _ = writeln!(out, "<p>{}{}.</p>", esc(&counts(group)), esc(&threshold));
        out.push_str(&forest(&group.verdicts));
        for (series, line) in crate::report::comparison::where_lines(&group.verdicts) {
            let _ = writeln!(out, "<p>Where {}: {}</p>", esc(&series), esc(&line));
        }
    }
    out + "<p class=\"provenance\">Each row: the ratio (this / the other side) as a point, its CI95 as a line, the \
±threshold band shaded, the smallest change the comparison could have caught as two ticks; a log-ratio axis.</p>\
</section>\n"
}

/// The colour of an accepted change, in the forest and on the history charts.
pub(crate) const ACCEPTED: &str = "#1f77b4";

/// One group's table: a row per verdict, under an axis.
fn forest(verdicts: &[&Record]) -> String {
    let reach = reach(verdicts);
    let names = verdict_names(verdicts);
    let mut out = format!(
        "<table class=\"forest\"><tr><th>series</th><th>metric</th><th>{}</th><th>change [CI95]</th><th>detectable</th><th>decision</th></tr>\n",
        axis(reach)
    );
    for (record, name) in verdicts.iter().zip(names) {
        let Some(v) = &record.verdict else { continue };
        let (bench, name) = (esc(&record.bench), esc(name.trim()));
        let detectable = v.detectable.map_or("-".into(), crate::report::format::detectable);
        // An accepted row says so on hover, and names its acknowledgement for tools.
        let accepted = v
            .accepted
            .as_ref()
            .map_or(String::new(), |a| format!(" data-accepted=\"{}\" title=\"{}\"", esc(&a.id), esc(&a.said())));
        let _ = writeln!(
            out,
            "<tr class=\"forest-row\" data-decision=\"{}\"{accepted}><td class=\"series\"><a href=\"#{}\">{bench}</a> {name}</td><td>{}</td>\
<td>{}</td><td class=\"change\">{}</td><td>{}</td><td style=\"color:{}\">{}</td></tr>",
            v.decision.name(),
            crate::report::html_text::anchor(&record.bench),
            esc(v.metric.as_deref().unwrap_or("-")),
            row(v, reach),
            esc(&change(v)).replacen(" [", "<br><small>[", 1).replacen(']', "]</small>", 1),
            esc(&detectable),
            colour(v),
            esc(&decision_text(v))
        );
    }
    out + "</table>\n"
}

/// How far the group's axis reaches either way, in log ratio: its widest interval, threshold or detectable
/// change, at least twice its widest threshold, at most [`WIDEST`].
fn reach(verdicts: &[&Record]) -> f64 {
    let mut reach: f64 = 0.0;
    for v in verdicts.iter().filter_map(|r| r.verdict.as_ref()) {
        let threshold = (1.0 + v.threshold).ln();
        reach = reach.max(2.0 * threshold);
        let mut ratios: Vec<f64> = v.ci95.map_or(vec![], |c| c.to_vec());
        ratios.extend(v.ratio);
        ratios.extend(v.detectable.map(|d| 1.0 + d));
        reach = reach.max(ratios.iter().filter(|r| **r > 0.0).map(|r| r.ln().abs() * 1.1).fold(0.0, f64::max));
    }
    reach.clamp(0.01, WIDEST)
}

/// Where log ratio `l` is drawn in a row's plot.
fn at(l: f64, reach: f64) -> f64 {
    PLOT[0] / 2.0 + (l / reach).clamp(-1.0, 1.0) * (PLOT[0] / 2.0 - 18.0)
}

/// The axis over a group's rows: its ticks as changes in percent, 0 and outward from it either way as room
/// allows.
fn axis(reach: f64) -> String {
    const CHANGES: [f64; 9] = [1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 50.0, 100.0];
    let mut svg = String::new();
    let tick = |svg: &mut String, x: f64, text: &str| {
        let _ = write!(svg, "<text x=\"{x:.1}\" y=\"12\" text-anchor=\"middle\">{text}</text>");
    };
    tick(&mut svg, at(0.0, reach), "0");
    for sign in [1.0, -1.0] {
        let mut last = at(0.0, reach);
        for percent in CHANGES {
            let l = (1.0 + sign * percent / 100.0).ln();
            let x = at(l, reach);
            if l.abs() <= reach && (x - last).abs() >= 40.0 {
                tick(&mut svg, x, &format!("{:+}%", sign * percent));
                last = x;
            }
        }
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"16\" class=\"forest-axis\">{svg}</svg>",
        PLOT[0]
    )
}

/// A verdict's plot: the band, the ticks of its detectable change, its CI95 and its ratio.
fn row(v: &Verdict, reach: f64) -> String {
    let [width, height] = PLOT;
    let mid = height / 2.0;
    let band = [at(-(1.0 + v.threshold).ln(), reach), at((1.0 + v.threshold).ln(), reach)];
    let one = at(0.0, reach);
    let mut svg = format!(
        "<rect class=\"band\" x=\"{:.1}\" y=\"0\" width=\"{:.1}\" height=\"{height}\" fill=\"#e6e6e6\"/>\
<line x1=\"{one:.1}\" x2=\"{one:.1}\" y1=\"0\" y2=\"{height}\" stroke=\"#999\"/>",
        band[0],
        band[1] - band[0],
    );
    if let Some(d) = v.detectable {
        for l in [(1.0 - d).max(1e-9).ln(), (1.0 + d).ln()] {
            let x = at(l, reach);
            let _ = write!(svg, "<path class=\"detectable\" d=\"M{x:.1},2V6M{x:.1},12V16\" stroke=\"#7a4fb0\"/>");
        }
    }
    let colour = colour(v);
    if let Some([lo, hi]) = v.ci95.filter(|c| c[0] > 0.0 && c[1] > 0.0) {
        let _ = write!(
            svg,
            "<line class=\"ci\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{mid}\" y2=\"{mid}\" stroke=\"{colour}\" stroke-width=\"2\"/>",
            at(lo.ln(), reach),
            at(hi.ln(), reach)
        );
    }
    if let Some(ratio) = v.ratio.filter(|r| *r > 0.0) {
        let l = ratio.ln();
        let x = at(l, reach);
        let _ = match l.abs() > reach {
            true => {
                let tip = if l > 0.0 { x + 6.0 } else { x - 6.0 };
                write!(
                    svg,
                    "<path class=\"ratio past\" d=\"M{x:.1},{:.1}L{tip:.1},{mid}L{x:.1},{:.1}Z\" fill=\"{colour}\"/>",
                    mid - 5.0,
                    mid + 5.0
                )
            }
            false => write!(svg, "<circle class=\"ratio\" cx=\"{x:.1}\" cy=\"{mid}\" r=\"4\" fill=\"{colour}\"/>"),
        };
    }
    format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\">{svg}</svg>")
}

/// A verdict's colour: regressions red, improvements green, the undecided amber, `no_change` grey, and a change
/// an acknowledgement covers blue, whichever way it went.
fn colour(v: &Verdict) -> &'static str {
    if v.accepted.is_some() {
        return ACCEPTED;
    }
    match v.decision {
        Decision::Regressed | Decision::Failed => "#c0392b",
        Decision::Improved => "#2e8b57",
        Decision::Inconclusive | Decision::Undefined => "#d68910",
        Decision::NoChange | Decision::Added | Decision::Removed => "#777",
    }
}
