//! Acknowledgement records: a person's word that a change of one series and metric is expected, with the
//! reason, written by `benchhost accept`. Never an edit of a measurement: the verdict it accepts keeps its
//! decision, and a later record revokes it. Types only; `benchhost` decides what an acknowledgement covers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Decision;

/// The `acknowledgement` section of an acknowledgement record. The record's `bench` and `variant` name the
/// series, its `run` who wrote it and when (`run.ts_ms`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Acknowledgement {
    /// Names this acknowledgement; every series one `accept` matched shares it, and a revoke names it.
    pub id: String,
    /// The metric whose change is accepted.
    pub metric: String,
    /// `regressed` or `improved`: the direction accepted.
    pub decision: Decision,
    /// The accepted change, new / old, as the accepted verdict (or change point) measured it.
    pub ratio: f64,
    /// Its CI95. A later verdict in the same direction whose ratio is no further from 1 than this interval's far
    /// end is covered by the acknowledgement; one beyond it is not.
    pub ci95: [f64; 2],
    /// The metric's direction of goodness.
    pub higher_is_better: bool,
    /// The commit (full hex) from which the change holds, when the stream was written inside git.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_commit: Option<String>,
    /// When the accepted change was measured, ms since the Unix epoch: the accepted verdict's run, or the first
    /// night of an accepted step.
    pub from_ts_ms: u64,
    /// What the accepted change came from: `verdict` or `change_point`.
    pub source: String,
    /// Why the change is expected; never empty.
    pub reason: String,
    /// Who accepted it (`--by`, else git's `user.name` and `user.email`).
    pub by: String,
    /// Set on a record that undoes the acknowledgement with this id (its other fields copied from it, `reason`
    /// saying why it no longer holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revokes: Option<String>,
}

impl Acknowledgement {
    /// The bound of the accepted interval on the side of the change: its high end for a ratio above 1, its low end
    /// for one below. A verdict beyond it is a larger change than the one accepted.
    pub fn far_end(&self) -> f64 {
        if self.ratio >= 1.0 { self.ci95[1].max(self.ci95[0]) } else { self.ci95[0].min(self.ci95[1]) }
    }
}
