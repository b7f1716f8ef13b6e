//! Verdict records: the conclusion drawn for one series and metric, across arms, builds or against a
//! baseline. Types only; `benchhost`'s analysis draws them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The outcome for one series and metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Better beyond the threshold, with 95% confidence.
    Improved,
    /// Worse beyond the threshold, with 95% confidence.
    Regressed,
    /// Within the threshold, with 95% confidence.
    NoChange,
    /// The data cannot tell.
    Inconclusive,
    /// Only the new side has the series.
    Added,
    /// Only the old side has the series.
    Removed,
    /// No ratio can be formed (a zero value, a baseline that failed); the verdict's `reason` says why.
    Undefined,
    /// The newest record of the series on the new side is a failure.
    Failed,
}

impl Decision {
    /// The snake_case name, as in records and `--fail-on`.
    pub fn name(self) -> &'static str {
        match self {
            Decision::Improved => "improved",
            Decision::Regressed => "regressed",
            Decision::NoChange => "no_change",
            Decision::Inconclusive => "inconclusive",
            Decision::Added => "added",
            Decision::Removed => "removed",
            Decision::Undefined => "undefined",
            Decision::Failed => "failed",
        }
    }
}

/// The `verdict` section of a verdict record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Verdict {
    /// The metric compared (absent for added/removed series).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// How the decision was reached.
    pub test: String,
    /// The old side's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineRef>,
    /// In a paired comparison within one run: the variant of the arm compared against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<std::collections::BTreeMap<String, serde_json::Value>>,
    /// new / old.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// CI95 of the ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
    /// The metric's direction of goodness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub higher_is_better: Option<bool>,
    /// Noise threshold, as a fraction (0.03 for ±3%).
    pub threshold: f64,
    /// The outcome.
    pub decision: Decision,
    /// Why the decision is `undefined` or `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The smallest change, as a fraction (0.047 for 4.7%), that this comparison would have called `regressed` or
    /// `improved` at its threshold with 95% power, from the spread its own interval shows: how far an
    /// `inconclusive` was from deciding, and what a `no_change` could not have missed. Absent without an interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detectable: Option<f64>,
    /// How a paired comparison was made (absent for a comparison of two separate runs' records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<Method>,
    /// On an `instructions` verdict whose two records carry per-function counts: the functions whose
    /// instructions per iteration changed most, by absolute difference, at most 10.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<crate::FunctionChange>,
    /// The share of the change in instructions per iteration that `functions` explain (1.0 for all of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub functions_explain: Option<f64>,
    /// The acknowledgement that covers this verdict (`benchhost accept`): the change is expected, and the gate
    /// does not fail on it. The decision stays what the numbers say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted: Option<Accepted>,
    /// On a comparison of two runs' records (not paired) of a measured value: how far two runs of the series
    /// differ, which its interval counts beside the records' own, and where that came from. Absent on paired
    /// verdicts, on exact counts and in verdicts before 2026-12-07 (whose intervals held the records' own spread
    /// only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_runs: Option<BetweenRuns>,
}

/// How far two runs of one series differ: the spread an unpaired comparison's interval must count, since each
/// record's own interval holds its run's samples only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BetweenRuns {
    /// The standard deviation of the log ratio of two runs of the same code; absent when `origin` is `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sd: Option<f64>,
    /// `history` (the series' earlier runs on this host and CPU, in good conditions) or `none` (too few of
    /// them: the verdict is `inconclusive`). Verdicts written on 2026-12-07 may say `calibration` (`benchhost
    /// calibrate`'s rounds), a source since dropped: its rounds, back to back, understated how far runs differ.
    pub origin: String,
    /// The runs (`history`) or rounds (`calibration`) it rests on; for `none`, the earlier runs found.
    pub runs: u64,
    /// Why the two runs compared show the machine as its history does not, when one does (the new run's own
    /// interval wider than any before it, or the baseline run further from the history's median than two
    /// successive runs have moved): the verdict is then `inconclusive`, without an interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsettled: Option<String>,
}

#[doc(hidden)]
impl Verdict {
    /// A verdict for tests: `no_change` at ±3%, on no metric, with nothing else.
    #[doc(hidden)]
    pub fn for_tests() -> Verdict {
        Verdict {
            metric: None,
            test: "test".into(),
            baseline: None,
            against: None,
            ratio: None,
            ci95: None,
            higher_is_better: None,
            threshold: 0.03,
            decision: Decision::NoChange,
            reason: None,
            detectable: None,
            method: None,
            functions: Vec::new(),
            functions_explain: None,
            accepted: None,
            between_runs: None,
        }
    }
}

/// How a paired comparison was made: enough to know what its interval counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Method {
    /// `alternate`: both arms in one process, samples alternating; `alternate_runs`: both arms of a run-style
    /// rig in one process, whole runs alternating; `alternate_windows`: the same with short windows of both
    /// arms' continuing workloads; `concurrent`: both arms at once, one process each on a core of its own;
    /// `rounds`: each arm in a child process of its own per round, the order reversed every other round.
    pub mode: String,
    /// Processes (pairs of processes, for concurrent and rounds) whose estimate entered the interval.
    pub processes: u64,
    /// Paired measurements inside one process (1 for concurrent and rounds: one pair per round).
    pub pairs_per_process: u64,
    /// The decision rule, with the threshold in `threshold`.
    pub rule: String,
    /// SHA-256 of the new side's library, then the old side's, where two builds were compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub libraries: Vec<String>,
    /// What was drawn anew in every process so that it lands in the interval rather than in one arm (e.g. each
    /// library loaded from a private copy, the order of the arms); absent in verdicts of older benchhosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub randomised: Option<String>,
    /// Why this comparison was not made in the mode the run asked for, and what made it instead: a rig whose
    /// second instance cannot be set up next to the first in one process is compared in `rounds`, with the
    /// rig's own error here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Each process's (or round's) estimate, ln(arm / reference), in the order measured: what the interval was
    /// taken over, so that its coverage can be checked from the records; absent in verdicts of older benchhosts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log_ratios: Vec<f64>,
    /// The code layouts the processes ran on (`run --against` of builds made with `benchhost build`): absent
    /// when each side ran its library as built in every process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layouts: Option<LayoutSplit>,
}

/// A paired comparison's code layouts, and how its log ratio spread across them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LayoutSplit {
    /// The layout seeds of the new side's library (relinked with `--randomize-section-padding=SEED`), one per
    /// process in the order measured; empty when it ran as built.
    pub new: Vec<u64>,
    /// The same for the old side (the reference arm, or `--against`'s build).
    pub old: Vec<u64>,
    /// Layout pairs the interval was taken over: it is over their means, each pair's processes counted once.
    pub pairs: u64,
    /// The log ratio's standard deviation (ln, ~a fraction) between layout pairs, beyond what their
    /// processes spread: how much one pair of links moves it. Absent when it cannot be told (no pair ran
    /// twice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_layouts: Option<f64>,
    /// Its standard deviation between the processes of one layout pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_processes: Option<f64>,
    /// Its standard deviation within a process: the standard error of a process's estimate from its pairs of
    /// samples or runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<f64>,
}

/// The run a comparison was made against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BaselineRef {
    /// Its run id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Its commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Its start.
    pub ts_ms: u64,
}

/// The `accepted` section of a verdict that an acknowledgement covers: which one, and what it said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Accepted {
    /// The acknowledgement's id.
    pub id: String,
    /// Its reason.
    pub reason: String,
    /// Who accepted the change.
    pub by: String,
    /// When, ms since the Unix epoch.
    pub ts_ms: u64,
}

impl Accepted {
    /// `accepted: REASON (BY, YYYY-MM-DD)`, as notes, tables and reports say it.
    pub fn said(&self) -> String {
        format!("accepted: {} ({}, {})", self.reason, self.by, crate::dates::utc_date(self.ts_ms))
    }
}
