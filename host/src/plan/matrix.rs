//! Turns `rigs.toml` plus the command line into cells, validating everything against the rigs' descriptors
//! before a single cell runs.

use std::collections::BTreeMap;
use std::time::Duration;

use benchhost_plugin_api::{Descriptor, Param};
use indexmap::IndexMap;
use serde_json::Value;
use toml::Spanned;

use crate::plan::config::{Config, ConfigError, RigEntry};
use crate::plan::settings::{Overrides, Plan};
pub use crate::plan::unbuilt::{Unbuilt, build_advice};
use crate::plan::values::{check_value, parse_sets, suggest};

/// One point of the matrix: one rig, one full set of parameter values.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Position in the run, from 0.
    pub index: usize,
    /// Rig name.
    pub rig: String,
    /// Every declared parameter with its value, sorted by name (the record's `variant`).
    pub params: BTreeMap<String, Value>,
    /// How much to measure.
    pub plan: Plan,
    /// When to give up on the child.
    pub deadline: Duration,
    /// Runs the other build's plugin (`run --against`): the twin of the cell before it.
    pub against: bool,
}

/// What records and screens show for a secret parameter's value.
pub const REDACTED: &str = "<redacted>";

impl Cell {
    /// The parameters as records and screens show them: values of parameters whose name marks them secret
    /// (containing `password`, `token` or `secret`, or starting with `sasl.`) replaced by [`REDACTED`]. Only the
    /// child sees the real values.
    pub fn shown_params(&self) -> BTreeMap<String, Value> {
        let secret = |name: &str| {
            let name = name.to_ascii_lowercase();
            ["password", "token", "secret"].iter().any(|w| name.contains(w)) || name.starts_with("sasl.")
        };
        let shown = |(k, v): (&String, &Value)| (k.clone(), if secret(k) { Value::from(REDACTED) } else { v.clone() });
        self.params.iter().map(shown).collect()
    }
}

impl Cell {
    /// `rig k=v k=v`, with the values records show: what progress lines, tables and `run FILTER` see.
    pub fn label(&self) -> String {
        let plain = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        let params: Vec<String> = self.shown_params().iter().map(|(k, v)| format!("{k}={}", plain(v))).collect();
        format!("{} {}", self.rig, params.join(" "))
    }
}

/// Each cell followed by its twin on the other build, renumbered, so rounds alternate the builds: A A' B B'.
pub fn with_twins(cells: Vec<Cell>) -> Vec<Cell> {
    cells
        .into_iter()
        .flat_map(|cell| [Cell { against: false, ..cell.clone() }, Cell { against: true, ..cell }])
        .enumerate()
        .map(|(index, cell)| Cell { index, ..cell })
        .collect()
}

/// The comparisons of a run of [`with_twins`] cells: each cell against its twin, the other build being the
/// reference (the verdict is on this build, as `compare NEW OLD` is), as `[reference, arm]` indices.
pub fn twin_pairs(cells: &[Cell]) -> Vec<[usize; 2]> {
    (0..cells.len() / 2).map(|i| [2 * i + 1, 2 * i]).collect()
}

/// The rigs the matrix can use, and the in-tree rigs whose plugin is not built.
pub trait Catalog {
    /// The descriptor of a loaded rig.
    fn descriptor(&self, rig: &str) -> Option<&Descriptor>;
    /// Every loaded or known rig name (for suggestions).
    fn names(&self) -> Vec<String>;
    /// For a rig that exists in the source tree but whose plugin was not found: how to build it.
    fn build_hint(&self, rig: &str) -> Option<String>;
    /// Libraries refused before they were opened (a pin, a writable file), one `file: why` each: any of them
    /// may hold a rig that was not found.
    fn refused(&self) -> Vec<String> {
        vec![]
    }
}

const DEFAULT_MAX_CELLS: u64 = 10_000;

/// The cells of a matrix, and the rigs of the file left out because they are not built.
#[derive(Debug, Default)]
pub struct Matrix {
    pub cells: Vec<Cell>,
    pub unbuilt: Vec<Unbuilt>,
}

/// Expands the selected rigs of `config` into cells, leaving out the file's rigs that no plugin provides when
/// the command line named none (as `cargo bench FILTER` needs only the benches it runs built). A rig the
/// command line names must be built; a name close to a loaded rig's and in no source tree is a typo, an error.
pub fn expand(config: &Config, catalog: &dyn Catalog, overrides: &Overrides) -> Result<Matrix, ConfigError> {
    let sets = parse_sets(&overrides.sets)?;
    let (selected, unbuilt) = select(config, catalog, overrides)?;
    if selected.is_empty() {
        let rigs: Vec<&str> = unbuilt.iter().map(|u| u.rig.as_str()).collect();
        return Err(ConfigError {
            location: config.path.display().to_string(),
            message: format!("no rig of the file is built ({}){}", rigs.join(", "), build_advice(&unbuilt)),
        });
    }
    check_sets_apply(&sets, &selected)?;
    let max_cells = max_cells(config, overrides)?;
    let mut cells = Vec::new();
    for (rig, entry, descriptor) in selected {
        let points = points(config, &rig, entry, descriptor, &sets, overrides.quick)?;
        if (cells.len() + points.len()) as u64 > max_cells.limit {
            return Err(ConfigError {
                location: max_cells.location.clone(),
                message: format!(
                    "the matrix has over {} cells (rig `{rig}` alone has {}); narrow it or raise `max_cells`",
                    max_cells.limit,
                    points.len()
                ),
            });
        }
        let (plan, deadline) = crate::plan::settings::resolve(config, entry, overrides)?;
        for params in points {
            cells.push(Cell { index: cells.len(), rig: rig.clone(), params, plan, deadline, against: false });
        }
    }
    Ok(Matrix { cells, unbuilt })
}

/// Why `rig` has no descriptor: not built (and how to build it), maybe in a refused library, or unknown.
fn not_built(rig: &str, catalog: &dyn Catalog) -> String {
    let refused = catalog.refused();
    match catalog.build_hint(rig) {
        // A refused library's rigs are unknown (it was never opened): the refusal is the likely cause.
        _ if !refused.is_empty() => {
            format!("rig `{rig}` was not found; refused libraries may provide it: {}", refused.join("; "))
        }
        Some(hint) => format!("rig `{rig}` is not built; build it with `{hint}`"),
        None => format!("unknown rig `{rig}`{}", suggest(rig, catalog.names())),
    }
}

/// The largest matrix accepted, and where that limit was set (for errors).
struct MaxCells {
    limit: u64,
    location: String,
}

fn max_cells(config: &Config, overrides: &Overrides) -> Result<MaxCells, ConfigError> {
    let (limit, location) = match (&overrides.max_cells, &config.defaults.max_cells) {
        (Some(cli), _) => (*cli, "--max-cells".to_string()),
        (None, Some(file)) => (*file.get_ref(), config.error_at(file.span().start, "").location),
        (None, None) => (DEFAULT_MAX_CELLS, "the default max_cells".to_string()),
    };
    if limit == 0 {
        return Err(ConfigError { location, message: "max_cells must be at least 1".into() });
    }
    Ok(MaxCells { limit, location })
}

type Selected<'a> = Vec<(String, Option<&'a RigEntry>, &'a Descriptor)>;

fn select<'a>(
    config: &'a Config,
    catalog: &'a dyn Catalog,
    overrides: &Overrides,
) -> Result<(Selected<'a>, Vec<Unbuilt>), ConfigError> {
    let entry = |(k, e): &'a (Spanned<String>, RigEntry)| (k.get_ref().clone(), Some(k.span().start), Some(e));
    let from_file = overrides.rigs.is_empty();
    let wanted: Vec<(String, Option<usize>, Option<&RigEntry>)> = if from_file {
        config.rigs.iter().map(entry).collect()
    } else {
        // Each named rig with all its tables, or with its defaults when the file has none.
        overrides
            .rigs
            .iter()
            .flat_map(|name| {
                let tables: Vec<_> = config.rigs.iter().filter(|(k, _)| k.get_ref() == name).map(entry).collect();
                if tables.is_empty() { vec![(name.clone(), None, None)] } else { tables }
            })
            .collect()
    };
    let mut selected = Vec::new();
    let mut unbuilt: Vec<Unbuilt> = Vec::new();
    for (name, offset, entry) in wanted {
        let Some(descriptor) = catalog.descriptor(&name) else {
            let build = catalog.build_hint(&name);
            let typo = build.is_none() && !suggest(&name, catalog.names()).is_empty();
            // A refused library may hold it: that is a refusal to say, not a rig to leave out.
            if from_file && !typo && catalog.refused().is_empty() {
                if !unbuilt.iter().any(|u| u.rig == name) {
                    unbuilt.push(Unbuilt { rig: name, build });
                }
                continue;
            }
            let message = not_built(&name, catalog);
            return Err(match offset {
                Some(offset) => config.error_at(offset, message),
                None => ConfigError { location: "--plugin".into(), message },
            });
        };
        selected.push((name, entry, descriptor));
    }
    Ok((selected, unbuilt))
}

/// All parameter assignments of one rig: defaults, then fixed params, then axes, then `--set`.
fn points(
    config: &Config,
    rig: &str,
    entry: Option<&RigEntry>,
    descriptor: &Descriptor,
    sets: &[(String, toml::Value)],
    quick: bool,
) -> Result<Vec<BTreeMap<String, Value>>, ConfigError> {
    let mut base: BTreeMap<String, Value> =
        descriptor.params.iter().map(|p| (p.name.clone(), p.default.clone())).collect();
    let mut axes: IndexMap<String, Vec<Value>> = IndexMap::new();
    // Without a table, a rig that declares it runs a cell per value of one parameter (a bench target's ids).
    let every = descriptor.cell_per.as_ref().filter(|_| entry.is_none());
    if let Some(param) = every.and_then(|name| descriptor.params.iter().find(|p| &p.name == name)) {
        axes.insert(param.name.clone(), param.allowed.clone().unwrap_or_else(|| vec![param.default.clone()]));
    }
    let empty = RigEntry::default();
    let entry = entry.unwrap_or(&empty);
    for (key, value) in &entry.params {
        let param = param(config, rig, descriptor, key)?;
        if entry.matrix.keys().any(|k| param.answers_to(k.get_ref())) {
            return Err(config.error_at(
                key.span().start,
                format!("`{}` of rig `{rig}` is both a fixed parameter and a matrix axis", key.get_ref()),
            ));
        }
        base.insert(param.name.clone(), check(config, rig, param, value)?);
    }
    for (key, values) in &entry.matrix {
        let param = param(config, rig, descriptor, key)?;
        let toml::Value::Array(list) = values.get_ref() else {
            return Err(config.error_at(
                values.span().start,
                format!("axis `{}` of rig `{rig}` must be a list of values", param.name),
            ));
        };
        if list.is_empty() {
            return Err(
                config.error_at(values.span().start, format!("axis `{}` of rig `{rig}` has no values", param.name))
            );
        }
        let spanned = |v: &toml::Value| Spanned::new(values.span(), v.clone());
        let checked = list.iter().map(|v| check(config, rig, param, &spanned(v))).collect::<Result<_, _>>()?;
        axes.insert(param.name.clone(), checked);
    }
    let excludes = excludes(config, rig, descriptor, entry, &axes)?;
    for (key, value) in &entry.quick {
        let param = param(config, rig, descriptor, key)?;
        let value = check(config, rig, param, value)?;
        if quick {
            axes.shift_remove(&param.name);
            base.insert(param.name.clone(), value);
        }
    }
    for (key, value) in sets {
        if let Some(param) = descriptor.params.iter().find(|p| p.answers_to(key)) {
            let value = check(config, rig, param, &Spanned::new(0..0, value.clone()))
                .map_err(|e| ConfigError { location: "--set".into(), message: e.message })?;
            axes.shift_remove(&param.name);
            base.insert(param.name.clone(), value);
        }
    }
    let mut points = vec![base];
    for (name, values) in &axes {
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut p = p.clone();
                    p.insert(name.clone(), v.clone());
                    p
                })
            })
            .collect();
    }
    points.retain(|p| !excludes.iter().any(|ex| ex.iter().all(|(k, v)| p.get(k) == Some(v))));
    points.dedup();
    check_only_where(config, rig, descriptor, entry, &points)?;
    Ok(points)
}

/// A parameter's value as a user writes it: `split`, `10`, `0.5`.
pub(crate) fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An error for the first cell that gives a parameter a value where it means nothing (`Param::only_where`),
/// naming both parameters, at the spot in the file that set it (or `--set`).
fn check_only_where(
    config: &Config,
    rig: &str,
    descriptor: &Descriptor,
    entry: &RigEntry,
    points: &[BTreeMap<String, Value>],
) -> Result<(), ConfigError> {
    for param in &descriptor.params {
        let Some(only) = &param.only_where else { continue };
        let meaningless = points.iter().find(|p| p.get(&param.name) != Some(&param.default) && !only.holds(p));
        let Some(point) = meaningless else { continue };
        let plain = |v: Option<&Value>| v.map_or("-".into(), text);
        let values: Vec<String> = only.values.iter().map(text).collect();
        let message = format!(
            "`{} = {}` of rig `{rig}` applies only where `{}` is one of {}, and a cell has {} = {} (exclude that \
             combination or narrow the matrix)",
            param.name,
            plain(point.get(&param.name)),
            only.param,
            values.join(", "),
            only.param,
            plain(point.get(&only.param)),
        );
        let spot = [&entry.params, &entry.matrix, &entry.quick]
            .into_iter()
            .flat_map(|table| table.keys())
            .find(|key| param.answers_to(key.get_ref()));
        return Err(match spot {
            Some(key) => config.error_at(key.span().start, message),
            None => ConfigError { location: "--set".into(), message },
        });
    }
    Ok(())
}

fn excludes(
    config: &Config,
    rig: &str,
    descriptor: &Descriptor,
    entry: &RigEntry,
    axes: &IndexMap<String, Vec<Value>>,
) -> Result<Vec<BTreeMap<String, Value>>, ConfigError> {
    let mut out = Vec::new();
    for table in &entry.exclude {
        let mut assignment = BTreeMap::new();
        for (key, value) in table.get_ref() {
            let param = param(config, rig, descriptor, key)?;
            if !axes.contains_key(&param.name) {
                let axes: Vec<&str> = axes.keys().map(String::as_str).collect();
                return Err(config.error_at(
                    key.span().start,
                    format!(
                        "`exclude` names `{}`, which is not a matrix axis of rig `{rig}` (axes: {})",
                        param.name,
                        axes.join(", ")
                    ),
                ));
            }
            assignment.insert(param.name.clone(), check(config, rig, param, value)?);
        }
        out.push(assignment);
    }
    Ok(out)
}

fn param<'d>(
    config: &Config,
    rig: &str,
    descriptor: &'d Descriptor,
    key: &Spanned<String>,
) -> Result<&'d Param, ConfigError> {
    descriptor.params.iter().find(|p| p.answers_to(key.get_ref())).ok_or_else(|| {
        let names = descriptor.params.iter().map(|p| p.name.clone()).collect();
        config.error_at(
            key.span().start,
            format!("unknown parameter `{}` for rig `{rig}`{}", key.get_ref(), suggest(key.get_ref(), names)),
        )
    })
}

/// Checks one value against its parameter and returns it as JSON.
fn check(config: &Config, rig: &str, param: &Param, value: &Spanned<toml::Value>) -> Result<Value, ConfigError> {
    check_value(rig, param, value.get_ref()).map_err(|message| config.error_at(value.span().start, message))
}

fn check_sets_apply(sets: &[(String, toml::Value)], selected: &Selected<'_>) -> Result<(), ConfigError> {
    for (key, _) in sets {
        if !selected.iter().any(|(_, _, d)| d.params.iter().any(|p| p.answers_to(key))) {
            let names = selected.iter().flat_map(|(_, _, d)| d.params.iter().map(|p| p.name.clone())).collect();
            let rigs: Vec<&str> = selected.iter().map(|(r, _, _)| r.as_str()).collect();
            return Err(ConfigError {
                location: "--set".into(),
                message: format!(
                    "no selected rig ({}) has a parameter `{key}`{}",
                    rigs.join(", "),
                    suggest(key, names)
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "matrix_tests.rs"]
mod tests;
