//! The steps of a nightly series that acknowledgements (`benchhost accept`) accepted. An acknowledgement holds
//! from one night: the first whose commit is the one it names, else the first at or after the time of its
//! change. The scan restarts its mean there (a forced boundary, as Conbench's "distribution change" mark), and
//! the step found there, or at a change point within [`NEAR`] nights of it, in the accepted direction, is
//! reported as accepted, never as a change. A step whose whole CI95 lies beyond the accepted interval's far end
//! is larger than what was accepted: it stays a change point (the gate still fails on it). An acknowledgement
//! with no step near its night, or no night at all, is said to be so. Pure.

use benchhost_record::nightly::{NightlyKey, Point};
use benchhost_record::{Acknowledgement, Decision, Record};

use crate::analysis::change_points::{ChangePoint, Night, SETTLED_AFTER, WINDOW, p_two_sided, step_at};

/// How many nights from an acknowledgement's night a change point may be and still be the step it accepted.
pub const NEAR: usize = WINDOW / 2;

/// A step an acknowledgement accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptedStep {
    /// Its first night, 0-based in the series' order.
    pub index: usize,
    /// Median after over median before, around it.
    pub ratio: f64,
    /// CI95 of the ratio.
    pub ci95: [f64; 2],
    /// The acknowledgement record.
    pub acknowledgement: Record,
}

/// An acknowledgement of the series that accepted no step, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Unplaced {
    /// The acknowledgement record.
    pub acknowledgement: Record,
    /// Why no step is accepted: no night from its change on, no step near its night, or a larger one.
    pub why: String,
}

/// The acknowledgements among `acknowledgements` (standing ones) of series `key` (its bench, variant and
/// metric, on any machine), each with the night of `points` it holds from, when one is.
pub fn of_series<'a>(
    key: &NightlyKey,
    points: &[Point],
    acknowledgements: &[&'a Record],
) -> Vec<(&'a Record, Option<usize>)> {
    acknowledgements
        .iter()
        .filter(|r| r.bench == key.bench && serde_json::to_string(&r.variant).is_ok_and(|v| v == key.variant))
        .filter(|r| r.acknowledgement.as_ref().is_some_and(|a| a.metric == key.metric))
        .map(|&r| (r, night_of(r.acknowledgement.as_ref().expect("filtered"), points)))
        .collect()
}

/// The night `a` holds from: the first whose commit is its `from_commit`, else the first at or after its time.
fn night_of(a: &Acknowledgement, points: &[Point]) -> Option<usize> {
    let same = |commit: &str, from: &str| commit.len() >= 7 && (from.starts_with(commit) || commit.starts_with(from));
    let by_commit = a.from_commit.as_deref().and_then(|from| {
        points.iter().position(|p| p.run.commit.as_deref().is_some_and(|c| from.len() >= 7 && same(c, from)))
    });
    by_commit.or_else(|| points.iter().position(|p| p.ts_ms >= a.from_ts_ms))
}

/// Sorts the scan's `points` of `nights` into the change points left, the accepted steps and the
/// acknowledgements without one, for the acknowledgements of the series placed by [`of_series`].
pub fn settle(
    mut points: Vec<ChangePoint>,
    nights: &[Night],
    of_series: &[(&Record, Option<usize>)],
    higher_is_better: bool,
) -> (Vec<ChangePoint>, Vec<AcceptedStep>, Vec<Unplaced>) {
    let (mut accepted, mut unplaced) = (Vec::new(), Vec::new());
    for &(record, at) in of_series {
        let a = record.acknowledgement.as_ref().expect("acknowledgements only");
        let unplace = |why: String| Unplaced { acknowledgement: record.clone(), why };
        let Some(at) = at else {
            unplaced.push(unplace("no night of the series from its change on".into()));
            continue;
        };
        let goes_its_way = |ratio: f64| ((ratio > 1.0) != higher_is_better) == (a.decision == Decision::Regressed);
        let near = points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.index.abs_diff(at) <= NEAR && goes_its_way(p.ratio))
            .min_by_key(|(_, p)| p.index.abs_diff(at))
            .map(|(i, _)| i);
        let step = match near {
            Some(i) => points.remove(i),
            None => {
                let mut bounds: Vec<usize> =
                    points.iter().map(|p| p.index).chain(of_series.iter().filter_map(|s| s.1)).collect();
                bounds.sort_unstable();
                let (ratio, ci95) = step_at(nights, &bounds, at);
                if !(ci95[0] > 1.0 || ci95[1] < 1.0) || !goes_its_way(ratio) {
                    unplaced.push(unplace(format!(
                        "no step near night {} (x{ratio:.3} [{:.3}, {:.3}] across it)",
                        at + 1,
                        ci95[0],
                        ci95[1]
                    )));
                    continue;
                }
                let se = (ci95[1] / ci95[0]).ln() / (2.0 * 1.96);
                let z = ratio.ln() / se.max(1e-12);
                let provisional = at + SETTLED_AFTER > nights.len();
                ChangePoint { index: at, z, p: p_two_sided(z), ratio, ci95, provisional }
            }
        };
        // Larger than what was accepted: its whole interval beyond the accepted far end.
        let far = a.far_end();
        let beyond = if a.ratio >= 1.0 { step.ci95[0] > far } else { step.ci95[1] < far };
        if beyond {
            unplaced.push(unplace(format!(
                "the step at night {} (x{:.3} [{:.3}, {:.3}]) is larger than the accepted x{:.3} [{:.3}, {:.3}]",
                step.index + 1,
                step.ratio,
                step.ci95[0],
                step.ci95[1],
                a.ratio,
                a.ci95[0],
                a.ci95[1]
            )));
            let place = points.partition_point(|p| p.index < step.index);
            points.insert(place, step);
            continue;
        }
        accepted.push(AcceptedStep {
            index: step.index,
            ratio: step.ratio,
            ci95: step.ci95,
            acknowledgement: record.clone(),
        });
    }
    accepted.sort_by_key(|s| s.index);
    (points, accepted, unplaced)
}

/// What becomes of the acknowledgements of a series too short to scan.
pub fn too_short(of_series: &[(&Record, Option<usize>)]) -> Vec<Unplaced> {
    of_series
        .iter()
        .map(|(record, _)| Unplaced { acknowledgement: (*record).clone(), why: "too few nights to tell a step".into() })
        .collect()
}
