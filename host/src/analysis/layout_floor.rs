//! What a comparison of one layout a side says of the links (issue 63). Its interval is true of the two
//! binaries it ran, and one of them may sit at either end of its layouts' spread: a change within the cell's
//! layout floor may be the links'. The floor is known where the stream holds comparisons of the same series
//! that ran over layouts of both sides (`--layouts auto`, e.g. a build against itself): each one's
//! between-layout spread is an estimate, and they are pooled (the root mean square, each ~10 pairs, so that
//! one comparison's noisy estimate does not stand alone). Pure.

use std::collections::BTreeMap;

use benchhost_record::{Record, SeriesKey, series};

use crate::analysis::layouts;

/// The between-layout spreads the stream has measured, per series and metric.
#[derive(Debug, Default)]
pub struct Floors {
    /// (series, metric) → the sum of the squared spreads and how many comparisons gave one.
    spreads: BTreeMap<(SeriesKey, String), (f64, u64)>,
}

impl Floors {
    /// Learns from `record` when it is a verdict of a comparison over layouts of both sides.
    pub fn learn(&mut self, record: &Record) {
        let Some(verdict) = &record.verdict else { return };
        let split = verdict.method.as_ref().and_then(|m| m.layouts.as_ref());
        let Some(split) = split.filter(|s| !s.new.is_empty() && !s.old.is_empty()) else { return };
        let (Some(metric), Some(sd)) = (&verdict.metric, split.between_layouts) else { return };
        let entry = self.spreads.entry((series(record), metric.clone())).or_default();
        *entry = (entry.0 + sd * sd, entry.1 + 1);
    }

    /// The layout floor of `metric` of `record`'s series (a fraction) and the comparisons it is pooled from.
    pub fn of(&self, record: &Record, metric: &str) -> Option<(f64, u64)> {
        let (squares, n) = self.spreads.get(&(series(record), metric.to_string()))?;
        Some((layouts::floor((squares / *n as f64).sqrt()), *n))
    }
}

/// Adds to the note of each timed verdict of a comparison with another build that ran one layout of a side
/// what that means, with the cell's layout floor when `floors` knows it. Instruction counts are left alone:
/// padding is never executed, and their counts are the same on every layout.
pub fn say_one_layout(verdicts: &mut [Record], floors: &Floors) {
    for record in verdicts.iter_mut() {
        let Some(verdict) = &record.verdict else { continue };
        let Some(method) = &verdict.method else { continue };
        let sides = method.layouts.as_ref().map(|s| (s.new.is_empty(), s.old.is_empty()));
        let floor = verdict.metric.as_deref().and_then(|m| floors.of(record, m));
        let known = |(floor, n): (f64, u64)| {
            let comparisons = if n == 1 { "1 comparison" } else { &format!("{n} comparisons") };
            format!("this cell's layout floor is {:.1}% (over layouts, {comparisons} in this stream)", 100.0 * floor)
        };
        let said = match (sides, floor) {
            // Both sides over layouts: the interval holds them.
            (Some((false, false)), _) => continue,
            // One side as built: its note says so already.
            (Some(_), None) => continue,
            (Some(_), Some(floor)) => format!("; {}", known(floor)),
            (None, Some(floor)) => {
                format!(
                    "; one layout a side (each library as built): {}, and a change within it may be the links'",
                    known(floor)
                )
            }
            (None, None) => {
                "; one layout a side (each library as built): a change within the cell's layout floor may be the \
                 links' (measure the floor with `--layouts auto` against this build itself)"
                    .to_string()
            }
        };
        let note = record.note.get_or_insert_with(String::new);
        note.push_str(&said);
    }
}

#[cfg(test)]
#[path = "layout_floor_tests.rs"]
mod tests;
