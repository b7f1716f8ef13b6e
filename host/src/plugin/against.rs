//! The other build of `run --against DIR`: its plugins, which must provide every rig of the run and describe
//! each as this build does (the same style, parameters and metrics), or their records would not be of the same
//! thing.

use std::path::Path;

use anyhow::{Result, bail};
use benchhost_plugin_api::Descriptor;

use crate::plan::matrix::Cell;
use crate::plugin::loader::{Loader, Trust};

/// The plugins of the other build in `dir`, probed by `exe`: a run starts this while it finds its own plugins,
/// as both are a child per library (~0.1-0.2 s for a 151 MB one).
pub fn discover_against(dir: &Path, exe: &Path, allow_writable: bool) -> Loader {
    // The other build's libraries differ from this one's by design: `rigs.toml`'s pins are not theirs.
    let trust = Trust { allow_writable, ..Trust::default() };
    Loader::discover(&[dir.to_owned()], exe, &trust)
}

/// `loader`, the plugins found in `dir`, as the other build: they must provide every rig of `cells` and describe
/// each as `ours` describes it.
pub fn against_loader(dir: &Path, loader: Loader, cells: &[Cell], ours: &Loader) -> Result<Loader> {
    for rejected in &loader.rejected {
        eprintln!("note: skipped {}: {}", rejected.path.display(), rejected.reason);
    }
    if loader.plugins.is_empty() && !loader.rejected.is_empty() {
        // regression: a directory whose only plugin was refused (writable by anyone) read "no plugin there".
        let first = &loader.rejected[0];
        let more = match loader.rejected.len() {
            1 => String::new(),
            n => format!(" (and {} more, in the notes above)", n - 1),
        };
        bail!(
            "--against {}: no plugin there could be loaded: {}: {}{more}",
            dir.display(),
            first.path.display(),
            first.reason
        );
    }
    if loader.plugins.is_empty() {
        bail!("--against {}: no plugin there (libNAME.so); build the other tree's plugins into it", dir.display());
    }
    if let Some(cell) = cells.iter().find(|c| loader.rig(&c.rig).is_none()) {
        bail!(
            "--against {}: no plugin there provides rig `{}` (build the other tree's plugins into it)",
            dir.display(),
            cell.rig
        );
    }
    for rig in cells.iter().map(|c| c.rig.as_str()) {
        let (Some((_, here)), Some((_, there))) = (ours.rig(rig), loader.rig(rig)) else { continue };
        if let Some(why) = descriptor_difference(here, there) {
            bail!("--against {}: rig `{rig}` is not the same rig in both builds: {why}", dir.display());
        }
    }
    Ok(loader)
}

/// How the other build's descriptor of a rig differs from this one's in what a paired comparison depends on
/// (style, parameter names and types, metric names, units and directions), if it does: their records would not
/// be of the same thing.
fn descriptor_difference(ours: &Descriptor, theirs: &Descriptor) -> Option<String> {
    let params = |d: &Descriptor| d.params.iter().map(|p| format!("{} ({:?})", p.name, p.ty)).collect::<Vec<_>>();
    let metrics = |d: &Descriptor| {
        let direction = |hib: bool| if hib { "higher is better" } else { "lower is better" };
        d.metrics
            .iter()
            .map(|m| format!("{} [{}, {}]", m.name, m.unit.as_str(), direction(m.higher_is_better)))
            .collect::<Vec<_>>()
    };
    let differs = |what: &str, a: Vec<String>, b: Vec<String>| {
        (a != b).then(|| format!("its {what} differ: here {}, there {}", a.join(", "), b.join(", ")))
    };
    if ours.style != theirs.style {
        return Some(format!("its style differs: here {:?}, there {:?}", ours.style, theirs.style));
    }
    differs("parameters", params(ours), params(theirs)).or_else(|| differs("metrics", metrics(ours), metrics(theirs)))
}

#[cfg(test)]
mod tests {
    use benchhost_plugin_api::{Descriptor, Metric, Param, Unit};

    use super::descriptor_difference;

    #[test]
    fn two_builds_of_a_rig_must_describe_the_same_parameters_and_metrics() {
        let ours = Descriptor::iterations("wal", "a").param(Param::int("rows", 10)).metric(Metric::iter_time("t"));
        let docs_only = Descriptor::iterations("wal", "b").param(Param::int("rows", 99)).metric(Metric::iter_time("t"));
        assert_eq!(descriptor_difference(&ours, &docs_only), None, "docs and defaults may differ: cells carry values");
        let renamed =
            Descriptor::iterations("wal", "a").param(Param::int("row_count", 10)).metric(Metric::iter_time("t"));
        assert_eq!(
            descriptor_difference(&ours, &renamed).unwrap(),
            "its parameters differ: here rows (Int), there row_count (Int)"
        );
        let rate = Descriptor::iterations("wal", "a").param(Param::int("rows", 10)).metric(Metric::rate(
            "t",
            Unit::RowsPerSec,
            "rows",
        ));
        assert!(
            descriptor_difference(&ours, &rate)
                .unwrap()
                .starts_with("its metrics differ: here t [ns, lower is better]")
        );
        let run = Descriptor::run("wal", "a").param(Param::int("rows", 10)).metric(Metric::iter_time("t"));
        assert_eq!(descriptor_difference(&ours, &run).unwrap(), "its style differs: here Iterations, there Run");
    }
}
