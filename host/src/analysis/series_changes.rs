//! What the scan of a nightly history found, series by series: the change points
//! ([`change_points`](crate::analysis::change_points)) and the steps acknowledgements accepted
//! ([`accepted_steps`](crate::analysis::accepted_steps)), which `trend` prints and gates on and the reports show.

use std::collections::BTreeMap;

use benchhost_record::Record;
use benchhost_record::nightly::{NightlyKey, Point, Series};

use crate::analysis::accepted_steps::{self, AcceptedStep, Unplaced};
use crate::analysis::change_points::{ChangePoint, Night, TooShort, change_points_with};

/// One series' history and what the scan found in it.
#[derive(Debug)]
pub struct SeriesChanges {
    /// The series.
    pub key: NightlyKey,
    /// Its values in run order.
    pub series: Series,
    /// Its change points, or why it has none; an accepted step is not among them.
    pub points: Result<Vec<ChangePoint>, TooShort>,
    /// The steps acknowledgements accepted, in run order.
    pub accepted: Vec<AcceptedStep>,
    /// Acknowledgements of the series with no step to accept: why.
    pub unplaced: Vec<Unplaced>,
}

impl SeriesChanges {
    /// Whether the change at `point` made the metric worse.
    pub fn regression(&self, point: &ChangePoint) -> bool {
        (point.ratio > 1.0) != self.series.higher_is_better
    }

    /// Whether `point` is a regression whose first night is among the series' last `within`.
    pub fn recent_regression(&self, point: &ChangePoint, within: usize) -> bool {
        self.regression(point) && point.index + within >= self.series.points.len()
    }

    /// The nightly gate: the series' newest change point is a regression starting within the last `within` runs.
    pub fn gates(&self, within: usize) -> bool {
        matches!(&self.points, Ok(points) if points.last().is_some_and(|p| self.recent_regression(p, within)))
    }
}

/// The change points of every series of a history that `keep` keeps, in the history's order, with the steps
/// the standing `acknowledgements` accepted; the series are scanned on `threads` threads (each series by one).
pub fn of_history(
    history: BTreeMap<NightlyKey, Series>,
    keep: impl Fn(&NightlyKey) -> bool,
    acknowledgements: &[&Record],
    threads: usize,
) -> Vec<SeriesChanges> {
    // Calibrations (`benchhost calibrate`) measure the machine's noise, not the code: not scanned.
    let calibration = |key: &NightlyKey| {
        serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&key.variant)
            .is_ok_and(|v| v.contains_key(crate::analysis::calibrate::MARK))
    };
    let kept: Vec<(NightlyKey, Series)> =
        history.into_iter().filter(|(key, _)| keep(key) && !calibration(key)).collect();
    let scan = |(key, series): (NightlyKey, Series)| {
        let nights: Vec<Night> = series.points.iter().map(night).collect();
        let of_series = accepted_steps::of_series(&key, &series.points, acknowledgements);
        let forced: Vec<usize> = of_series.iter().filter_map(|(_, at)| *at).collect();
        let (points, accepted, unplaced) = match change_points_with(&nights, &forced) {
            Ok(points) => {
                let (points, accepted, unplaced) =
                    accepted_steps::settle(points, &nights, &of_series, series.higher_is_better);
                (Ok(points), accepted, unplaced)
            }
            Err(short) => (Err(short), Vec::new(), accepted_steps::too_short(&of_series)),
        };
        SeriesChanges { points, accepted, unplaced, key, series }
    };
    crate::in_order::map_in_order(kept, threads, scan)
}

/// A value as the scan reads it: its log and standard error, and its doubts (a value of 0 or below has no
/// log: doubtful).
fn night(point: &Point) -> Night {
    let log_value = point.value.max(f64::MIN_POSITIVE).ln();
    Night { log_value, log_se: f64::from(point.log_se), doubtful: point.doubtful || point.value <= 0.0 }
}
