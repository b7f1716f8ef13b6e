//! Conservation laws over a rig's counters (`consumed == produced`, `in_order == replayed`), checked by the host: a
//! violation turns the record into a `failure`, never a number.

use serde::{Deserialize, Serialize};

use crate::OnlyWhere;

/// A comparison operator of an [`Invariant`].
///
/// # Examples
/// ```
/// use benchhost_plugin_api::{Invariant, Op};
/// let at_least_one = Invariant::compare("consumed", Op::Ge, 1);
/// assert_eq!(at_least_one.to_string(), "consumed >= 1");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// `==`
    Eq,
    /// `<=`
    Le,
    /// `>=`
    Ge,
}

/// The right-hand side of an [`Invariant`]: another counter or a constant.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::{Invariant, Operand};
/// assert_eq!(Invariant::equal("out", "in").right, Operand::Counter("in".into()));
/// assert_eq!(Invariant::zero("leaked").right, Operand::Value(0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operand {
    /// Another counter of the same outcome.
    Counter(String),
    /// A constant.
    Value(u64),
}

/// A conservation law over the counters of an outcome, checked by the host. A violation turns the record
/// into a `failure`. Each record's check carries the two sides it compared: prefer laws between two counts of
/// work done (`rows_out == rows_in`, `in_order == replayed`), which say what was checked, to a count of
/// failures held to zero, and declare a law only on the cells that do its work ([`Invariant::only_where`]): a
/// law over work a cell never does compares 0 with 0 and cannot fail.
///
/// # Examples
/// ```
/// use benchhost_plugin_api::Invariant;
/// let rows = Invariant::equal("rows_out", "rows_in");
/// let leaks = Invariant::zero("leaked");
/// assert_eq!(rows.to_string(), "rows_out == rows_in");
/// assert_eq!(leaks.to_string(), "leaked == 0");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invariant {
    /// Counter on the left.
    pub left: String,
    /// Operator.
    pub op: Op,
    /// Counter or constant on the right.
    pub right: Operand,
    /// The cells it is checked on: those where a parameter has one of some values (every cell when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_where: Option<OnlyWhere>,
}

impl Invariant {
    /// `left == right`, both counters.
    pub fn equal(left: &str, right: &str) -> Self {
        Invariant { left: left.into(), op: Op::Eq, right: Operand::Counter(right.into()), only_where: None }
    }
    /// `counter == 0`.
    pub fn zero(counter: &str) -> Self {
        Invariant { left: counter.into(), op: Op::Eq, right: Operand::Value(0), only_where: None }
    }
    /// `left op value`.
    pub fn compare(left: &str, op: Op, value: u64) -> Self {
        Invariant { left: left.into(), op, right: Operand::Value(value), only_where: None }
    }
    /// Checks the invariant only in the cells where parameter `param` has one of `values`.
    ///
    /// # Examples
    /// ```
    /// use benchhost_plugin_api::{Descriptor, Invariant};
    /// let d = Descriptor::iterations("writer", "appends or creates")
    ///     .invariant(Invariant::equal("rows_read_back", "rows_appended").only_where("op", ["append"]));
    /// let create = [("op".to_string(), serde_json::json!("create"))].into();
    /// assert!(d.invariants_for(&create).is_empty());
    /// ```
    pub fn only_where(mut self, param: &str, values: impl IntoIterator<Item = impl Into<serde_json::Value>>) -> Self {
        self.only_where = Some(OnlyWhere::new(param, values));
        self
    }
    /// The two sides as `counters` give them, `[left, right]`; `None` when a counter is missing.
    pub fn sides(&self, counters: &std::collections::BTreeMap<String, u64>) -> Option<[u64; 2]> {
        let left = *counters.get(&self.left)?;
        let right = match &self.right {
            Operand::Counter(c) => *counters.get(c)?,
            Operand::Value(v) => *v,
        };
        Some([left, right])
    }
}

impl Invariant {
    /// Evaluates the invariant over `counters`. A counter the outcome does not have is a violation too.
    ///
    /// # Examples
    /// ```
    /// use std::collections::BTreeMap;
    /// use benchhost_plugin_api::Invariant;
    /// let counters = BTreeMap::from([("in".to_string(), 5), ("out".to_string(), 4)]);
    /// let err = Invariant::equal("out", "in").check(&counters).unwrap_err();
    /// assert_eq!(err, "out == in violated: out = 4, in = 5");
    /// ```
    pub fn check(&self, counters: &std::collections::BTreeMap<String, u64>) -> Result<(), String> {
        let get = |name: &str| counters.get(name).copied().ok_or_else(|| format!("{self}: no counter `{name}`"));
        let left = get(&self.left)?;
        let (right, right_text) = match &self.right {
            Operand::Counter(c) => {
                let v = get(c)?;
                (v, format!(", {c} = {v}"))
            }
            Operand::Value(v) => (*v, String::new()),
        };
        let holds = match self.op {
            Op::Eq => left == right,
            Op::Le => left <= right,
            Op::Ge => left >= right,
        };
        if holds { Ok(()) } else { Err(format!("{self} violated: {} = {left}{right_text}", self.left)) }
    }
}

/// Checks every invariant against every labelled counter set that has its left-hand counter (the outcome,
/// and each run's observation); an invariant whose counter appears in no set is violated too. Returns the
/// violations, each naming its set when there is more than one.
///
/// # Examples
/// ```
/// use std::collections::BTreeMap;
/// use benchhost_plugin_api::{Invariant, check_invariants};
/// let counters = BTreeMap::from([("in".to_string(), 3), ("out".to_string(), 2)]);
/// let broken = check_invariants(&[Invariant::equal("out", "in")], &[("outcome", &counters)]).unwrap_err();
/// assert_eq!(broken, ["out == in violated: out = 2, in = 3"]);
/// ```
pub fn check_invariants(
    invariants: &[Invariant],
    sets: &[(&str, &std::collections::BTreeMap<String, u64>)],
) -> Result<(), Vec<String>> {
    let mut violations = Vec::new();
    for invariant in invariants {
        let applicable: Vec<_> = sets.iter().filter(|(_, c)| c.contains_key(&invariant.left)).collect();
        if applicable.is_empty() {
            violations.push(format!("{invariant}: no counter `{}` was reported", invariant.left));
        }
        for (label, counters) in applicable {
            if let Err(e) = invariant.check(counters) {
                violations.push(if sets.len() > 1 { format!("{e} ({label})") } else { e });
            }
        }
    }
    if violations.is_empty() { Ok(()) } else { Err(violations) }
}

impl std::fmt::Display for Invariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let op = match self.op {
            Op::Eq => "==",
            Op::Le => "<=",
            Op::Ge => ">=",
        };
        match &self.right {
            Operand::Counter(c) => write!(f, "{} {op} {c}", self.left),
            Operand::Value(v) => write!(f, "{} {op} {v}", self.left),
        }
    }
}
