//! What a rig says about itself: its parameters, its metrics (declared in `metric.rs`), its style and its
//! invariants.
//!
//! Descriptors cross the plugin boundary as JSON text, so fields can be added later without breaking the
//! layout that abi_stable checks at load time.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Invariant, Metric};

/// How the host drives a rig.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::{Descriptor, Style};
/// assert_eq!(Descriptor::iterations("wal", "round trip").style, Style::Iterations);
/// assert_eq!(Descriptor::run("drain", "drains a topic").style, Style::Run);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Style {
    /// One operation per [`Rig::iterate`](crate::Rig::iterate); the plugin-api times batches of calls.
    Iterations,
    /// One whole workload per [`Rig::run`](crate::Rig::run); the rig measures over its own window.
    Run,
}

/// The type of a parameter's value.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::{Param, ParamType};
/// assert_eq!(Param::int("rows", 1000).ty, ParamType::Int);
/// assert_eq!(Param::choice("codec", "zstd", &["none", "zstd"]).ty, ParamType::String);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamType {
    /// A signed integer.
    Int,
    /// A floating-point number.
    Float,
    /// `true` or `false`.
    Bool,
    /// Text; restrict it with [`Param::allowed`] to make it a choice.
    String,
}

/// One parameter of a rig.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::Param;
/// let rows = Param::int("rows", 1000).range(1, 1_000_000).doc("rows per batch");
/// let codec = Param::choice("compression", "zstd", &["none", "lz4", "zstd"]);
/// assert_eq!(codec.allowed.as_ref().map(Vec::len), Some(3));
/// # let _ = rows;
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Param {
    /// Name, as written in `rigs.toml` and `--set`.
    pub name: String,
    /// Type of the value.
    #[serde(rename = "type")]
    pub ty: ParamType,
    /// Value used when neither `rigs.toml` nor `--set` gives one.
    pub default: Value,
    /// The only values accepted, if the parameter is a choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<Value>>,
    /// Smallest accepted value (numbers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Largest accepted value (numbers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// One line for `benchhost list`.
    #[serde(default)]
    pub doc: String,
    /// Other names accepted in `rigs.toml` and `--set`; records always use `name`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Where a value other than the default means something: only where another parameter has one of some
    /// values. A cell that sets it elsewhere is a config error before anything runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_where: Option<OnlyWhere>,
}

/// Some cells of a rig, by one parameter: those where `param` is one of `values` (or, with `except`, is none of
/// them). A parameter's non-default values mean something only there (`Param::only_where`); a metric is
/// reported only there (`Metric::only_where`), or fixed by the cells' design (`Metric::fixed_where`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnlyWhere {
    /// The other parameter.
    pub param: String,
    /// Its values.
    pub values: Vec<Value>,
    /// The cells where `param` is none of `values` instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub except: bool,
}

impl OnlyWhere {
    /// The cells where `param` is one of `values`.
    pub fn new(param: &str, values: impl IntoIterator<Item = impl Into<Value>>) -> Self {
        OnlyWhere { param: param.into(), values: values.into_iter().map(Into::into).collect(), except: false }
    }
    /// The cells where `param` is none of `values`.
    pub fn except(param: &str, values: impl IntoIterator<Item = impl Into<Value>>) -> Self {
        OnlyWhere { except: true, ..OnlyWhere::new(param, values) }
    }
    /// Whether a cell with these `params` is one of those cells.
    pub fn holds(&self, params: &std::collections::BTreeMap<String, Value>) -> bool {
        params.get(&self.param).is_some_and(|v| self.values.contains(v) != self.except)
    }
}

impl Param {
    fn new(name: &str, ty: ParamType, default: Value) -> Self {
        Param {
            name: name.into(),
            ty,
            default,
            allowed: None,
            min: None,
            max: None,
            doc: String::new(),
            aliases: vec![],
            only_where: None,
        }
    }
    /// Whether `key` names this parameter, by its name or an alias.
    pub fn answers_to(&self, key: &str) -> bool {
        self.name == key || self.aliases.iter().any(|a| a == key)
    }
    /// Accepts `alias` as another name in `rigs.toml` and `--set`.
    pub fn alias(mut self, alias: &str) -> Self {
        self.aliases.push(alias.into());
        self
    }
    /// An integer parameter.
    pub fn int(name: &str, default: i64) -> Self {
        Self::new(name, ParamType::Int, default.into())
    }
    /// A floating-point parameter.
    pub fn float(name: &str, default: f64) -> Self {
        Self::new(name, ParamType::Float, default.into())
    }
    /// A boolean parameter.
    pub fn bool(name: &str, default: bool) -> Self {
        Self::new(name, ParamType::Bool, default.into())
    }
    /// A free-text parameter.
    pub fn string(name: &str, default: &str) -> Self {
        Self::new(name, ParamType::String, default.into())
    }
    /// A text parameter restricted to `values`.
    pub fn choice(name: &str, default: &str, values: &[&str]) -> Self {
        Self::string(name, default).allowed(values.iter().map(|v| Value::from(*v)))
    }
    /// Restricts the parameter to the given values.
    pub fn allowed(mut self, values: impl IntoIterator<Item = impl Into<Value>>) -> Self {
        self.allowed = Some(values.into_iter().map(Into::into).collect());
        self
    }
    /// Restricts a number to `min..=max`.
    pub fn range(mut self, min: impl Bound, max: impl Bound) -> Self {
        self.min = Some(min.to_f64());
        self.max = Some(max.to_f64());
        self
    }
    /// Sets the one-line description.
    pub fn doc(mut self, doc: &str) -> Self {
        self.doc = doc.into();
        self
    }
    /// Gives the parameter's non-default values a meaning only where parameter `param` has one of `values`: a
    /// cell that sets it elsewhere is refused before anything runs, naming both parameters.
    ///
    /// # Examples
    /// ```
    /// use benchhost_plugin_api::Param;
    /// let order = Param::choice("order", "unattested", &["unattested", "attested"])
    ///     .only_where("shape", ["oldest_first_topk", "ordered_full_scan"]);
    /// assert_eq!(order.only_where.unwrap().param, "shape");
    /// ```
    pub fn only_where(mut self, param: &str, values: impl IntoIterator<Item = impl Into<Value>>) -> Self {
        self.only_where = Some(OnlyWhere::new(param, values));
        self
    }
}

/// A number usable as a bound of [`Param::range`]: any primitive integer or float.
pub trait Bound {
    /// The bound as a float (bounds beyond 2^53 are rounded).
    fn to_f64(self) -> f64;
}

macro_rules! bound {
    ($($t:ty),*) => {$(
        impl Bound for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}
bound!(i8, i16, i32, i64, u8, u16, u32, u64, usize, isize, f32, f64);

/// Everything a rig says about itself.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::{Descriptor, Metric, Param, Unit, Invariant};
/// let d = Descriptor::iterations("wal", "Arrow IPC round trip of a trace batch")
///     .param(Param::int("rows", 1000))
///     .metric(Metric::iter_time("roundtrip_time"))
///     .metric(Metric::rate("MB_per_s", Unit::MegabytesPerSec, "input_bytes"))
///     .invariant(Invariant::zero("mismatched_batches"));
/// assert_eq!(d.params.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Descriptor {
    /// Rig name, unique across all plugins (`[rig.NAME]` in `rigs.toml`).
    pub name: String,
    /// One line for `benchhost list`.
    pub doc: String,
    /// How the host drives it.
    pub style: Style,
    /// Parameters, in display order.
    #[serde(default)]
    pub params: Vec<Param>,
    /// Metrics every measurement record of this rig carries.
    #[serde(default)]
    pub metrics: Vec<Metric>,
    /// Conservation laws over the outcome's counters.
    #[serde(default)]
    pub invariants: Vec<Invariant>,
    /// A run-style rig that can measure windows of one continuing workload ([`SetupContext::window_ns`]): a
    /// duel then alternates short windows of both arms instead of whole runs.
    ///
    /// [`SetupContext::window_ns`]: crate::SetupContext::window_ns
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub windows: bool,
    /// Metrics that read as one table (the querier's files reached, pruned and read): the HTML report draws
    /// them as a table of the arms, not as charts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<MetricTable>,
    /// The parameter whose every allowed value is a cell when `rigs.toml` has no table for the rig (a bench
    /// target's `id`: one cell per benchmark, as `cargo bench` runs every one); `None`: one cell of defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell_per: Option<String>,
}

/// Metrics of a rig that read together, as columns of one table, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetricTable {
    /// The table's title, e.g. `mechanism`.
    pub name: String,
    /// Its columns: names of declared metrics.
    pub metrics: Vec<String>,
}

impl Descriptor {
    /// A rig of the iterations style.
    pub fn iterations(name: &str, doc: &str) -> Self {
        Self::new(name, doc, Style::Iterations)
    }
    /// A rig of the run style.
    pub fn run(name: &str, doc: &str) -> Self {
        Self::new(name, doc, Style::Run)
    }
    fn new(name: &str, doc: &str, style: Style) -> Self {
        Descriptor {
            name: name.into(),
            doc: doc.into(),
            style,
            params: vec![],
            metrics: vec![],
            invariants: vec![],
            windows: false,
            tables: vec![],
            cell_per: None,
        }
    }
    /// Adds a parameter.
    pub fn param(mut self, param: Param) -> Self {
        self.params.push(param);
        self
    }
    /// The metrics a cell with these `params` reports: every metric, but those whose
    /// [`Metric::only_where`] the cell does not meet. The first of them is the cell's headline.
    pub fn metrics_for<'a>(
        &'a self,
        params: &'a std::collections::BTreeMap<String, Value>,
    ) -> impl Iterator<Item = &'a Metric> + 'a {
        self.metrics.iter().filter(move |m| m.only_where.as_ref().is_none_or(|only| only.holds(params)))
    }
    /// Adds a metric. Declare the rig's headline first: a paired comparison that cannot decide on it yet takes
    /// more processes; its other metrics are judged on the processes it took.
    pub fn metric(mut self, metric: Metric) -> Self {
        self.metrics.push(metric);
        self
    }
    /// The invariants a cell with these `params` is checked against: every invariant, but those whose
    /// [`Invariant::only_where`] the cell does not meet (an invariant over work the cell never does would
    /// compare 0 with 0 and could not fail).
    pub fn invariants_for(&self, params: &std::collections::BTreeMap<String, Value>) -> Vec<Invariant> {
        self.invariants
            .iter()
            .filter(|i| i.only_where.as_ref().is_none_or(|only| only.holds(params)))
            .cloned()
            .collect()
    }
    /// Adds an invariant.
    pub fn invariant(mut self, invariant: Invariant) -> Self {
        self.invariants.push(invariant);
        self
    }
    /// Declares that `metrics` (declared ones, in column order) read as one table named `name`.
    pub fn table(mut self, name: &str, metrics: &[&str]) -> Self {
        self.tables.push(MetricTable { name: name.into(), metrics: metrics.iter().map(|m| m.to_string()).collect() });
        self
    }
    /// Declares that, without a table in `rigs.toml`, the rig runs one cell per allowed value of `param` (a
    /// choice) instead of one cell of its defaults.
    ///
    /// # Examples
    /// ```
    /// use benchhost_plugin_api::{Descriptor, Param};
    /// let d = Descriptor::iterations("fib", "a bench target")
    ///     .param(Param::choice("id", "fib/10", &["fib/10", "fib/20"]))
    ///     .cell_per("id");
    /// assert_eq!(d.cell_per.as_deref(), Some("id"));
    /// ```
    pub fn cell_per(mut self, param: &str) -> Self {
        self.cell_per = Some(param.into());
        self
    }
    /// Declares that `run` honours [`SetupContext::window_ns`](crate::SetupContext::window_ns) (run style).
    pub fn windows(mut self) -> Self {
        self.windows = true;
        self
    }
}
