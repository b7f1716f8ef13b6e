//! `--interleave`: which arm of a rig is compared with which. A verdict only ever compares two arms that differ
//! in what is asked about: along an axis (`--interleave=mode`), each arm is paired with the arm that has the
//! reference value on that axis and every other parameter equal, so `mode` in seed 003's 2 x 2 matrix gives
//! split against perthread at each work level. A bare `--interleave` pairs every arm with its rig's first arm,
//! and is refused where an arm differs from it in more than one parameter: a ratio across unlike arms (10 µs of
//! work against none) is no verdict, and pairing along every axis instead would add one the user did not ask
//! for (rows=10000 "regressed" against rows=1000) to every gate.

use std::collections::BTreeMap;

use crate::plan::matrix::{Cell, text};
use crate::plan::values::suggest;

/// What `--interleave` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interleave {
    /// `--interleave`: every arm against its rig's first arm.
    Bare,
    /// `--interleave=AXIS[=VALUE]`: every arm against the arm with `VALUE` (else the axis's first value) on
    /// `AXIS` and every other parameter equal.
    Axis { axis: String, reference: Option<String> },
    /// `--rounds N` without `--interleave`: every arm against its rig's first arm where the two differ in one
    /// parameter; an arm that differs in more gets a note instead of a refusal (the rounds were asked for).
    Implied,
}

impl Interleave {
    /// `""` is bare, `mode` an axis, `mode=split` an axis and its reference value.
    pub fn parse(text: &str) -> Interleave {
        match text.split_once('=') {
            _ if text.is_empty() => Interleave::Bare,
            Some((axis, value)) => Interleave::Axis { axis: axis.into(), reference: Some(value.into()) },
            None => Interleave::Axis { axis: text.into(), reference: None },
        }
    }
}

/// The comparisons of a run: `[reference, arm]` as indices into its cells, and a note for every arm that has
/// no partner (it runs, but gets no verdict).
#[derive(Debug, Default, PartialEq)]
pub struct Pairs {
    pub pairs: Vec<[usize; 2]>,
    pub notes: Vec<String>,
}

/// The pairs `how` makes of `cells`, or a config error in one line naming the axes and values there are.
pub fn pairs(cells: &[Cell], how: &Interleave) -> Result<Pairs, String> {
    let mut by_rig: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, cell) in cells.iter().enumerate() {
        by_rig.entry(&cell.rig).or_default().push(i);
    }
    let mut rigs: Vec<(&str, Vec<usize>)> = by_rig.into_iter().collect();
    rigs.sort_by_key(|(_, arms)| arms[0]);
    let mut found = Pairs::default();
    match how {
        Interleave::Bare | Interleave::Implied => {
            for (rig, arms) in &rigs {
                first_arm(cells, rig, arms, how == &Interleave::Bare, &mut found)?;
            }
        }
        Interleave::Axis { axis, reference } => {
            check_axis(cells, &rigs, axis, reference.as_deref())?;
            for (_, arms) in &rigs {
                along(cells, arms, axis, reference.as_deref(), &mut found);
            }
        }
    }
    found.pairs.sort_by_key(|[reference, arm]| (*arm, *reference));
    Ok(found)
}

/// Every arm of `rig` against its first where the two differ in one parameter. Where one differs in more, a
/// `strict` pairing (a bare `--interleave`) is refused in one line naming the axes; otherwise (`--rounds` alone)
/// that arm gets a note and no comparison.
fn first_arm(cells: &[Cell], rig: &str, arms: &[usize], strict: bool, found: &mut Pairs) -> Result<(), String> {
    let Some((&first, rest)) = arms.split_first() else { return Ok(()) };
    let (alike, unlike): (Vec<usize>, Vec<usize>) =
        rest.iter().partition(|&&a| differing(&cells[first], &cells[a]).len() <= 1);
    if !unlike.is_empty() {
        let why = unlike_arms(cells, rig, arms);
        if strict {
            return Err(format!("--interleave: {why}"));
        }
        found.notes.push(format!("{why}; only arms that differ from its first in one get a verdict"));
    }
    found.pairs.extend(alike.into_iter().map(|a| [first, a]));
    Ok(())
}

/// Why the arms of `rig` cannot all be compared with its first: the parameters that vary alone (axes), those
/// that only change together, and an axis to name.
fn unlike_arms(cells: &[Cell], rig: &str, arms: &[usize]) -> String {
    let axes = varying(cells, arms);
    let alone: Vec<&String> = axes.keys().filter(|p| varies_alone(cells, arms, p)).collect();
    let together: Vec<&String> = axes.keys().filter(|p| !alone.contains(p)).collect();
    let list = |names: &[&String]| names.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(", ");
    let mut why = format!("the arms of {rig} differ in {}", list(&alone));
    if alone.is_empty() {
        why = format!("the arms of {rig} differ in {} together", list(&together));
    } else if !together.is_empty() {
        why.push_str(&format!(" (and in {}, which change together)", list(&together)));
    }
    match alone.first() {
        Some(axis) => format!("{why}: say which to compare, e.g. --interleave {axis}"),
        None => format!("{why}: no two of its arms differ in one parameter alone"),
    }
}

/// Along `axis`: each arm whose value is not the reference against the arm that has it and all else equal.
fn along(cells: &[Cell], arms: &[usize], axis: &str, reference: Option<&str>, found: &mut Pairs) {
    let values = varying(cells, arms);
    let Some(values) = values.get(axis) else {
        let rig = &cells[arms[0]].rig;
        found.notes.push(format!("{rig}: its arms do not vary {axis}: they run without a verdict"));
        return;
    };
    let reference = reference.unwrap_or(&values[0]);
    for &arm in arms {
        let value = cells[arm].params.get(axis).map(text);
        if value.as_deref() == Some(reference) {
            continue;
        }
        let partner = arms.iter().copied().find(|&r| {
            cells[r].params.get(axis).map(text).as_deref() == Some(reference)
                && differing(&cells[r], &cells[arm]) == [axis]
        });
        match partner {
            Some(r) => found.pairs.push([r, arm]),
            None => found.notes.push(format!(
                "{} has no arm with {axis}={reference} and every other parameter equal: it runs without a verdict",
                cells[arm].label()
            )),
        }
    }
}

/// `axis` must vary among some rig's arms, and `reference` be one of its values there.
fn check_axis(cells: &[Cell], rigs: &[(&str, Vec<usize>)], axis: &str, reference: Option<&str>) -> Result<(), String> {
    let mut axes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (_, arms) in rigs {
        for (name, values) in varying(cells, arms) {
            let known = axes.entry(name).or_default();
            known.extend(values.into_iter().filter(|v| !known.contains(v)).collect::<Vec<_>>());
        }
    }
    let listed = || {
        let each = axes.iter().map(|(name, values)| format!("{name} ({})", values.join(", ")));
        match axes.is_empty() {
            true => "no arm differs from another".to_string(),
            false => format!("the axes are {}", each.collect::<Vec<_>>().join(", ")),
        }
    };
    let Some(values) = axes.get(axis) else {
        let hint = suggest(axis, axes.keys().cloned().collect());
        return Err(format!("--interleave {axis}: no arm of the matrix varies `{axis}`{hint}; {}", listed()));
    };
    if let Some(value) = reference.filter(|v| !values.iter().any(|x| x == v)) {
        // A number is not a typo of a nearby number: only words get a suggestion.
        let hint = if value.parse::<f64>().is_ok() { String::new() } else { suggest(value, values.clone()) };
        return Err(format!(
            "--interleave {axis}={value}: `{value}` is not a value of {axis} in the matrix{hint}; {}",
            listed()
        ));
    }
    Ok(())
}

/// The parameters whose value differs among `arms`, each with its values in the order the arms come.
fn varying(cells: &[Cell], arms: &[usize]) -> BTreeMap<String, Vec<String>> {
    let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for &arm in arms {
        for (name, value) in &cells[arm].params {
            let seen = values.entry(name.clone()).or_default();
            if !seen.contains(&text(value)) {
                seen.push(text(value));
            }
        }
    }
    values.retain(|_, v| v.len() > 1);
    values
}

/// Whether two of `arms` differ in `param` alone.
fn varies_alone(cells: &[Cell], arms: &[usize], param: &str) -> bool {
    arms.iter().any(|&a| arms.iter().any(|&b| differing(&cells[a], &cells[b]) == [param]))
}

/// The parameters whose values differ between `a` and `b` (two arms of one rig), by name.
pub fn differing<'a>(a: &'a Cell, b: &Cell) -> Vec<&'a str> {
    a.params.iter().filter(|(name, value)| b.params.get(*name) != Some(value)).map(|(n, _)| n.as_str()).collect()
}

#[cfg(test)]
#[path = "interleave_tests.rs"]
mod tests;
