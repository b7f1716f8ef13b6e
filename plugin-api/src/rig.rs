//! The author-facing trait and the values a rig hands back.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::Descriptor;

/// One benchmark workload. State lives in `Self`, never in statics.
///
/// The host calls `setup` once per cell (untimed), then either `iterate` in timed batches (style
/// [`Iterations`](crate::Style::Iterations)) or `run` once per repetition (style [`Run`](crate::Style::Run)),
/// then `teardown` (untimed), whose counters the host checks against the declared invariants.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::{Descriptor, Metric, Outcome, Param, Rig, RigError, SetupContext};
///
/// #[derive(serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct Params { len: i64 }
///
/// struct Sum { data: Vec<u64>, last: u64 }
///
/// impl Rig for Sum {
///     type Params = Params;
///     fn describe() -> Descriptor {
///         Descriptor::iterations("sum", "adds up a vector")
///             .param(Param::int("len", 1000).range(1, 1_000_000))
///             .metric(Metric::iter_time("sum_time"))
///     }
///     fn setup(p: Params, _ctx: &SetupContext) -> Result<Self, RigError> {
///         Ok(Sum { data: (0..p.len as u64).collect(), last: 0 })
///     }
///     fn iterate(&mut self) -> Result<(), RigError> {
///         self.last = std::hint::black_box(&self.data).iter().sum();
///         Ok(())
///     }
///     fn teardown(self) -> Result<Outcome, RigError> {
///         Ok(Outcome::new().counter("sum", self.last))
///     }
/// }
/// ```
pub trait Rig: Sized + Send + 'static {
    /// Parameters, deserialized from the JSON the host sends (every declared parameter is present).
    /// Use `#[serde(deny_unknown_fields)]`.
    type Params: DeserializeOwned;

    /// Name, parameters, metrics, style and invariants.
    fn describe() -> crate::Descriptor;

    /// Builds the rig's state. Untimed.
    fn setup(params: Self::Params, ctx: &SetupContext) -> Result<Self, RigError>;

    /// Untimed work before a timed batch of `batch` calls to `iterate`, for per-iteration state that must
    /// stay out of the timed region (a fresh table per iteration, a cleared cache), as Criterion's
    /// `iter_batched` does. The default does nothing.
    fn prepare(&mut self, batch: u64) -> Result<(), RigError> {
        let _ = batch;
        Ok(())
    }

    /// One operation (iterations style). Keep its result in `self` or pass it through
    /// [`std::hint::black_box`] so the compiler cannot remove the work.
    fn iterate(&mut self) -> Result<(), RigError> {
        Err(RigError::unsupported("this rig does not implement `iterate`"))
    }

    /// One whole workload, measured over the rig's own window (run style). With
    /// [`SetupContext::window_ns`] set, one window of a workload that continues from the previous call instead
    /// (see there).
    fn run(&mut self) -> Result<Observation, RigError> {
        Err(RigError::unsupported("this rig does not implement `run`"))
    }

    /// Verifies and releases the state. Untimed. Its counters feed the invariants.
    fn teardown(self) -> Result<Outcome, RigError>;
}

/// What the host tells a rig at setup.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::SetupContext;
/// // What a rig's unit test passes; the host fills in a per-cell directory it removes afterwards.
/// let ctx = SetupContext { scratch_dir: std::env::temp_dir(), quick: true, ..SetupContext::default() };
/// let seconds = if ctx.quick { 1 } else { 30 };
/// assert_eq!(seconds, 1);
/// ```
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SetupContext {
    /// A directory of this cell's own, removed by the host after the cell.
    pub scratch_dir: PathBuf,
    /// True for a `--quick` smoke run: a rig may shrink its own windows.
    #[serde(default)]
    pub quick: bool,
    /// Where [`SetupContext::seed`] keeps what it builds: one directory per library and run, shared by every
    /// instance of the rigs of that library (each process of a paired comparison, both arms of an A/A). `None`
    /// outside the host: then a seed is built for each instance.
    #[serde(default)]
    pub seed_dir: Option<PathBuf>,
    /// True when the host sets this instance up to count its instructions (`run --instructions`): it forks the
    /// set-up rig, and a fork keeps only the thread that forks. A rig that runs worker threads (a multi-thread
    /// tokio runtime) runs its iterations on the calling thread instead (a current-thread runtime), so that its
    /// count is the work of an iteration and not nothing. A count's `seed_dir` is `None`, and its randomness and
    /// clocks are fixed (docs/src/writing-a-rig.md, "count-stable").
    #[serde(default)]
    pub counting: bool,
    /// Set by the host only for a rig whose descriptor declares [`Descriptor::windows`], in a duel of two arms
    /// in one process: each `run` then measures this many nanoseconds of one workload that continues from the
    /// previous `run` (started, untimed, by the first) and leaves it paused, its threads idle, until the next:
    /// the host alternates short windows of both arms, so a slow phase of the machine falls on both. A rig that
    /// cannot pause for its parameters (a drain, an open loop) runs whole runs and says so
    /// ([`Observation::window`] false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ns: Option<u64>,
}

/// Counters a rig reports at teardown: rows, records, bytes, checksums. The host checks the declared
/// invariants over them, and rate metrics divide them by the time per iteration.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::Outcome;
/// let outcome = Outcome::new().counter("rows_in", 1000).counter("rows_out", 1000);
/// assert_eq!(outcome.counters["rows_out"], 1000);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Counter name to value.
    pub counters: BTreeMap<String, u64>,
    /// What the rig saw that numbers alone do not say (a query plan's shape, a known incompleteness), copied
    /// into the record's `note`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Outcome {
    /// An outcome with no counters.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds a counter.
    pub fn counter(mut self, name: &str, value: u64) -> Self {
        self.counters.insert(name.into(), value);
        self
    }
    /// Sets the note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

/// What one run-style repetition measured: metric values (in the declared units) and counters.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::Observation;
/// let obs = Observation::new().metric("records_per_s", 390_007.3).counter("consumed", 1_000_000);
/// assert_eq!(obs.metrics["records_per_s"], 390_007.3);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// Declared metric name to value. A metric that could not be measured is left out, never set to 0.
    pub metrics: BTreeMap<String, f64>,
    /// Counters of this repetition, checked against the invariants.
    pub counters: BTreeMap<String, u64>,
    /// How the numbers were obtained, when the parameters alone do not say (copied into the record's `note`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// True when this is one window of a continuing workload ([`SetupContext::window_ns`]), not a whole run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub window: bool,
}

impl Observation {
    /// An empty observation.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds a metric value.
    pub fn metric(mut self, name: &str, value: f64) -> Self {
        self.metrics.insert(name.into(), value);
        self
    }
    /// Adds a counter.
    pub fn counter(mut self, name: &str, value: u64) -> Self {
        self.counters.insert(name.into(), value);
        self
    }
    /// Sets the note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

/// Why a rig call failed.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::{ErrorKind, RigError};
/// assert_eq!(RigError::invalid_params("rows must be even").kind, ErrorKind::InvalidParams);
/// assert_eq!(RigError::new("broker unreachable").kind, ErrorKind::Failed);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The rig could not do its work (I/O, a library error, ...).
    Failed,
    /// The parameters were rejected.
    InvalidParams,
    /// The rig's own correctness check failed: the result is wrong, so no number may be reported.
    Verification,
    /// The rig panicked; the message is the panic's.
    Panic,
    /// The host called a method the rig's style does not have.
    Unsupported,
}

/// An error a rig returns; a panic inside the plugin becomes one of kind [`ErrorKind::Panic`].
///
/// Any `std::error::Error` converts into it, so `?` works on library calls.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::{ErrorKind, RigError};
/// let err = RigError::verification("batch differs after the round trip");
/// assert_eq!(err.kind, ErrorKind::Verification);
/// let io: RigError = std::io::Error::other("disk full").into();
/// assert_eq!(io.kind, ErrorKind::Failed);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RigError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// A message for people.
    pub message: String,
}

impl RigError {
    /// A failure of kind [`ErrorKind::Failed`].
    pub fn new(message: impl Into<String>) -> Self {
        RigError { kind: ErrorKind::Failed, message: message.into() }
    }
    /// A failed correctness check.
    pub fn verification(message: impl Into<String>) -> Self {
        RigError { kind: ErrorKind::Verification, message: message.into() }
    }
    /// Parameters the rig cannot work with.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        RigError { kind: ErrorKind::InvalidParams, message: message.into() }
    }
    /// A method this rig's style does not have.
    pub fn unsupported(message: impl Into<String>) -> Self {
        RigError { kind: ErrorKind::Unsupported, message: message.into() }
    }
}

impl fmt::Display for RigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: std::error::Error> From<E> for RigError {
    fn from(err: E) -> Self {
        // `{:#}`-style chain, so the cause of a library error is not lost.
        let mut message = err.to_string();
        let mut source = err.source();
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        RigError::new(message)
    }
}

/// Check used by `export_rigs!`: descriptors of one library must have distinct names.
#[doc(hidden)]
pub fn check_unique_names(descriptors: &[Descriptor]) -> Result<(), String> {
    let mut names: Vec<&str> = descriptors.iter().map(|d| d.name.as_str()).collect();
    names.sort_unstable();
    match names.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(format!("two rigs named `{}` in one plugin", w[0])),
        None => Ok(()),
    }
}
