//! Which acknowledgement (`benchhost accept`) covers a verdict. One covers a verdict of its series and metric
//! that went the way it accepted (`regressed` or `improved`) by no more than the accepted interval's far end:
//! the change is the one a person looked at, or a smaller one. A larger change is not covered, and its note
//! says by how much it exceeds what was accepted. An acknowledgement holds from the time of the change it
//! accepted (`from_ts_ms`): it covers no verdict of a run before it, nor one against a baseline that ran after it
//! (the baseline has the change already, so this one is another). Pure: records in, verdicts annotated.

use benchhost_record::{Accepted, Acknowledgement, Record};

/// What the acknowledgements say of one verdict.
#[derive(Debug, PartialEq)]
pub enum Coverage<'a> {
    /// None accepts a change of this series, metric and direction.
    None,
    /// This one covers it.
    Covered(&'a Record),
    /// Some accept the direction, but the verdict's change is larger than each: the one it exceeds least, and
    /// by how much (a fraction of the accepted far end: 0.02 for 2% beyond it).
    Exceeds(&'a Record, f64),
}

/// What `acknowledgements` (standing ones, see [`standing_acknowledgements`](benchhost_record::standing_acknowledgements)) say of `verdict`, a verdict record.
pub fn coverage<'a>(verdict: &Record, acknowledgements: &[&'a Record]) -> Coverage<'a> {
    let Some(v) = &verdict.verdict else { return Coverage::None };
    let (Some(metric), Some(ratio)) = (&v.metric, v.ratio) else { return Coverage::None };
    let mut least: Option<(&Record, f64)> = None;
    for &record in acknowledgements {
        let Some(a) = &record.acknowledgement else { continue };
        let same = record.bench == verdict.bench && record.variant == verdict.variant && &a.metric == metric;
        if !same || a.decision != v.decision || !holds(a, verdict) {
            continue;
        }
        let beyond = excess(a, ratio);
        if beyond <= 0.0 {
            return Coverage::Covered(record);
        }
        if least.is_none_or(|(_, b)| beyond < b) {
            least = Some((record, beyond));
        }
    }
    least.map_or(Coverage::None, |(record, beyond)| Coverage::Exceeds(record, beyond))
}

/// Whether the time of `verdict`'s comparison is one `a` holds for: its run at or after the accepted change, and
/// its baseline, when it names one, before it.
fn holds(a: &Acknowledgement, verdict: &Record) -> bool {
    let baseline = verdict.verdict.as_ref().and_then(|v| v.baseline.as_ref());
    verdict.run.ts_ms >= a.from_ts_ms && baseline.is_none_or(|b| b.ts_ms < a.from_ts_ms)
}

/// How far `ratio` lies beyond the accepted far end, as a fraction of it; 0 or less when within.
fn excess(a: &Acknowledgement, ratio: f64) -> f64 {
    let far = a.far_end();
    if a.ratio >= 1.0 { ratio / far - 1.0 } else { far / ratio - 1.0 }
}

/// Marks each verdict of `verdicts` that an acknowledgement covers (`verdict.accepted`, and its note says
/// `accepted: REASON (BY, DATE)`), and says in the note of each that exceeds what was accepted by how much.
pub fn annotate(verdicts: &mut [Record], acknowledgements: &[&Record]) {
    for record in verdicts.iter_mut() {
        let said = match coverage(record, acknowledgements) {
            Coverage::None => continue,
            Coverage::Covered(ack) => {
                let accepted = accepted(ack);
                let said = accepted.said();
                if let Some(v) = record.verdict.as_mut() {
                    v.accepted = Some(accepted);
                }
                said
            }
            Coverage::Exceeds(ack, beyond) => {
                let a = ack.acknowledgement.as_ref().expect("coverage names acknowledgements");
                format!(
                    "exceeds the accepted x{:.3} [{:.3}, {:.3}] ({}: {}) by {:.1}%",
                    a.ratio,
                    a.ci95[0],
                    a.ci95[1],
                    a.id,
                    a.reason,
                    100.0 * beyond
                )
            }
        };
        let note = record.note.get_or_insert_with(String::new);
        if !note.is_empty() {
            note.push_str("; ");
        }
        note.push_str(&said);
    }
}

/// The `accepted` section a verdict covered by `ack` carries.
pub fn accepted(ack: &Record) -> Accepted {
    let a = ack.acknowledgement.as_ref().expect("an acknowledgement record");
    Accepted { id: a.id.clone(), reason: a.reason.clone(), by: a.by.clone(), ts_ms: ack.run.ts_ms }
}

#[cfg(test)]
#[path = "acknowledgements_tests.rs"]
mod tests;
