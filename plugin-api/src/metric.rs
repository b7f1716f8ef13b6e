//! What a rig measures: each metric's name, unit, direction of goodness and where its value comes from.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{OnlyWhere, Unit};

/// Where a metric's value comes from.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::{Metric, Source, Unit};
/// assert_eq!(Metric::iter_time("t").source, Source::IterTime);
/// let rate = Metric::rate("rows_per_s", Unit::RowsPerSec, "rows");
/// assert_eq!(rate.source, Source::Rate { counter: "rows".into() });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "from")]
pub enum Source {
    /// Time per iteration, measured by the plugin-api's batch loop (iterations style).
    IterTime,
    /// A counter giving the work of one iteration, divided by the time per iteration (iterations style).
    Rate {
        /// Counter from the [`Outcome`](crate::Outcome) holding the amount per iteration.
        counter: String,
    },
    /// A counter from the [`Outcome`](crate::Outcome), reported as is.
    Counter {
        /// Counter name.
        counter: String,
    },
    /// One counter of the [`Outcome`](crate::Outcome) over another: a share in [0, 1], in [`Unit::Ratio`]
    /// (left out of the record when `of` is 0: absent is not zero).
    Share {
        /// The part, e.g. `sorts_kept`.
        counter: String,
        /// The whole, e.g. `queries`.
        of: String,
    },
    /// A value the rig measured itself and returned in each [`Observation`](crate::Observation) (run style).
    Observed,
}

/// A metric a rig declares; records carry exactly the declared metrics.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::{Metric, Unit};
/// let m = Metric::counter("encoded_bytes", Unit::Bytes, "bytes").doc("IPC stream size");
/// assert!(!m.higher_is_better);
/// assert!(Metric::observed("records_per_s", Unit::RecordsPerSec, true).higher_is_better);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Name in records, e.g. `records_per_s`. Never put a computed value in it.
    pub name: String,
    /// Unit from the registry.
    pub unit: Unit,
    /// Direction of goodness.
    pub higher_is_better: bool,
    /// Where the value comes from.
    #[serde(flatten)]
    pub source: Source,
    /// One line for `benchhost list`.
    #[serde(default)]
    pub doc: String,
    /// The cells that report this metric: those where a parameter has one of some values (every cell when
    /// absent), so one rig can time different operations under their own names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_where: Option<OnlyWhere>,
    /// The cells whose design fixes this metric, each set by one parameter (a drain consumes every record it was
    /// given; an open loop runs at the rate it was asked for): there it is a check of the cell, and a comparison
    /// gives it no verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed_where: Vec<OnlyWhere>,
    /// A rate reported only where the rig counts what it is a rate of: a cell whose outcome lacks the counter
    /// has no such metric (a bench that sets no counter), where else a missing counter is the rig's error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub if_counted: bool,
}

impl Metric {
    /// Time per iteration in nanoseconds, lower is better.
    pub fn iter_time(name: &str) -> Self {
        Metric {
            name: name.into(),
            unit: Unit::Nanos,
            higher_is_better: false,
            source: Source::IterTime,
            doc: String::new(),
            only_where: None,
            fixed_where: Vec::new(),
            if_counted: false,
        }
    }
    /// A throughput: `counter` (work per iteration) over the time per iteration, higher is better.
    /// With [`Unit::MegabytesPerSec`] the counter is in bytes.
    pub fn rate(name: &str, unit: Unit, counter: &str) -> Self {
        Metric {
            name: name.into(),
            unit,
            higher_is_better: true,
            source: Source::Rate { counter: counter.into() },
            doc: String::new(),
            only_where: None,
            fixed_where: Vec::new(),
            if_counted: false,
        }
    }
    /// A counter of the outcome reported as a metric (for example encoded bytes), lower is better.
    pub fn counter(name: &str, unit: Unit, counter: &str) -> Self {
        let source = Source::Counter { counter: counter.into() };
        Metric {
            name: name.into(),
            unit,
            higher_is_better: false,
            source,
            doc: String::new(),
            only_where: None,
            fixed_where: Vec::new(),
            if_counted: false,
        }
    }
    /// The share `counter` / `of` of two counters of the outcome (the queries whose plan kept a sort, of all
    /// queries), in [`Unit::Ratio`], lower is better. A counter is a whole number, so a ratio is never one:
    /// declare a share.
    ///
    /// # Examples
    /// ```
    /// use benchhost_plugin_api::{Metric, Source, Unit};
    /// let kept = Metric::share("sort_kept", "sorts_kept", "queries");
    /// assert_eq!(kept.unit, Unit::Ratio);
    /// assert_eq!(kept.source, Source::Share { counter: "sorts_kept".into(), of: "queries".into() });
    /// ```
    pub fn share(name: &str, counter: &str, of: &str) -> Self {
        let source = Source::Share { counter: counter.into(), of: of.into() };
        Metric {
            name: name.into(),
            unit: Unit::Ratio,
            higher_is_better: false,
            source,
            doc: String::new(),
            only_where: None,
            fixed_where: Vec::new(),
            if_counted: false,
        }
    }
    /// A value the rig measures itself in each run (run style).
    pub fn observed(name: &str, unit: Unit, higher_is_better: bool) -> Self {
        Metric {
            name: name.into(),
            unit,
            higher_is_better,
            source: Source::Observed,
            doc: String::new(),
            only_where: None,
            fixed_where: Vec::new(),
            if_counted: false,
        }
    }
    /// Sets the direction of goodness.
    pub fn higher_is_better(mut self, higher: bool) -> Self {
        self.higher_is_better = higher;
        self
    }
    /// Sets the one-line description.
    pub fn doc(mut self, doc: &str) -> Self {
        self.doc = doc.into();
        self
    }
    /// A rate (`Metric::rate`) reported only where the outcome has its counter: for a rig whose cells count
    /// their work or not as their code decides (a Divan bench that calls `counter` or does not).
    pub fn if_counted(mut self) -> Self {
        self.if_counted = true;
        self
    }
    /// Reports the metric only in the cells where parameter `param` has one of `values`.
    ///
    /// # Examples
    /// ```
    /// use benchhost_plugin_api::Metric;
    /// let sort = Metric::iter_time("sort_time").only_where("op", ["sort"]);
    /// assert_eq!(sort.only_where.unwrap().values, ["sort"]);
    /// ```
    pub fn only_where(mut self, param: &str, values: impl IntoIterator<Item = impl Into<Value>>) -> Self {
        self.only_where = Some(OnlyWhere::new(param, values));
        self
    }
    /// Marks `cells` as cells whose design fixes this metric (with those marked before): comparisons there give
    /// it no verdict.
    ///
    /// # Examples
    /// ```
    /// use benchhost_plugin_api::{Metric, OnlyWhere, Unit};
    /// let rate = Metric::observed("records_per_s", Unit::RecordsPerSec, true).fixed_where(OnlyWhere::except("rate", [0.0]));
    /// assert!(rate.is_fixed(&[("rate".to_string(), 10_000.0.into())].into()));
    /// assert!(!rate.is_fixed(&[("rate".to_string(), 0.0.into())].into()));
    /// ```
    pub fn fixed_where(mut self, cells: OnlyWhere) -> Self {
        self.fixed_where.push(cells);
        self
    }
    /// Whether the design of a cell with these `params` fixes this metric.
    pub fn is_fixed(&self, params: &std::collections::BTreeMap<String, Value>) -> bool {
        self.fixed_where.iter().any(|cells| cells.holds(params))
    }
}
