//! `benchhost run`: check everything the run will need after its cells, run the cells (each record written
//! as its cell ends), then tell the user what changed: against the previous record of each series in the
//! output stream (Criterion's `change:`), between interleaved arms, against another build or a baseline.
//! Exports and a saved baseline come last.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use benchhost_plugin_api::{Descriptor, Style};

use crate::analysis::{compare, duel, instructions};
use crate::cli::args::{Pairing, RunArgs};
use crate::cli::commands::{current_exe, resolve};
use crate::plan::matrix;
use crate::plugin::loader::{Loader, Trust};
use crate::report::{self, export, html};
use crate::run::duels;
use crate::run::instructions::{Counting, Valgrind};
use crate::run::output::narrate;
use crate::run::provenance;
use crate::run::runner::{self, ChildExecutor, RunContext, WorkDir};
use benchhost_record::baseline;
use benchhost_record::history::History;
use benchhost_record::{Conditions, Kind, Record};

pub(crate) fn run_matrix(args: RunArgs) -> Result<ExitCode> {
    let valgrind = args.instructions.then(Valgrind::find).transpose().map_err(anyhow::Error::msg)?;
    // Everything a run needs after its cells is checked before the first one: a typo must not cost a matrix.
    if let Some(name) = &args.save_baseline {
        baseline::path(&args.out, name)?;
    }
    // Read before the run appends: the baseline and the previous records are what stood before it.
    let old = args.baseline.as_deref().map(|name| baseline::load(name, &args.out)).transpose()?;
    // One read of --out serves the previous records, the calibrations and the counts' sizes.
    let previous = crate::cli::reading::previous(&args.out);
    let (loader, mut cells) = resolve(&args.matrix)?;
    let allow_writable = args.matrix.dirs.allow_writable_plugins;
    let other = args.against.as_deref().map(|dir| against_loader(dir, &cells, &loader, allow_writable)).transpose()?;
    if other.is_some() {
        cells = matrix::with_twins(cells);
    }
    let mut run_info = provenance::current();
    run_info.shard = args.matrix.shard.map(|s| s.to_string());
    let work_dir = WorkDir::new(run_info.id.as_deref().unwrap_or("run"))?;
    if let Some(id) = &args.run_id {
        run_info.id = Some(id.clone());
    }
    let mut sink = benchhost_record::sink::Sink::open(&args.out)?;
    let mut executor =
        ChildExecutor { exe: current_exe()?, loader: &loader, against: other.as_ref(), quick: args.matrix.quick };
    let paired = args.interleave || args.rounds.is_some_and(|r| r > 1) || other.is_some();
    let rounds = args.rounds.unwrap_or(if paired { 5 } else { 1 });
    let duels = match paired {
        true => duels::duels_of(&cells, other.is_some(), &|rig| duel_mode(args.pairing, &loader, rig)),
        false => vec![],
    };
    let cores = crate::proc::cpus::allowed().len();
    if duels.iter().any(|d| d.mode == duels::Mode::Concurrent) && cores < 2 {
        bail!(
            "--pairing concurrent runs the two arms of a comparison at once, one per core, and this machine lets \
             benchhost use {cores} core (its affinity mask): use --pairing alternate or rounds"
        );
    }
    if valgrind.is_some() {
        note_run_style(&cells, &loader);
    }
    let mut ctx = RunContext {
        catalog: &loader,
        executor: &mut executor,
        run_info: &run_info,
        work_dir,
        rounds,
        instructions: valgrind.map(|v| Counting::new(v, &previous.counted)),
    };
    let threshold = args.judging.threshold(&previous.calibrations, &run_info.host);
    let mixed = duels::run_all(&cells, &duels, args.rounds, &threshold, &mut ctx, &mut sink)?;
    let ran = &mixed.ran;
    // This build's records (and the other build's failures); the other build's numbers only feed verdicts.
    let records: Vec<_> = ran
        .records
        .iter()
        .zip(&cells)
        .filter(|(r, c)| !c.against || r.kind == Kind::Failure)
        .map(|(r, _)| r.clone())
        .collect();
    let refs: Vec<_> = records.iter().collect();
    narrate(&format!("{}\n", report::records_table(&refs)))?;
    warn_missed_targets(&records);
    warn_doubtful(&records);
    let failed = records.iter().filter(|r| r.kind == Kind::Failure).count();
    narrate(&format!("{} cells, {failed} failed; records appended to {}\n", records.len(), sink.path().display()))?;
    let mut code = if failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS };
    if !args.no_previous {
        show_change(&previous.newest, &records, &threshold, &run_info, &args.out)?;
    }
    let mut verdicts = paired_verdicts(&mixed.in_rounds, args.against.as_deref(), rounds, &threshold, &run_info);
    verdicts.extend(duel_verdicts(&mixed, &duels, args.against.as_deref(), &threshold, &run_info));
    if paired {
        verdicts.extend(instruction_verdicts(&ran.records, &cells, args.against.as_deref(), &threshold, &run_info));
    }
    if let Some(old) = &old {
        verdicts.extend(compare::compare(old, &records, &threshold, &run_info));
    }
    if !verdicts.is_empty() && args.judging.judge(&verdicts, Some(&args.out))? != ExitCode::SUCCESS {
        code = ExitCode::from(1);
    }
    export_records(&args, &records, args.judging.fixed_threshold())?;
    if let Some(name) = &args.save_baseline {
        let path = baseline::path(&args.out, name)?;
        baseline::save(&path, &records)?;
        narrate(&format!("baseline `{name}` saved to {}\n", path.display()))?;
    }
    Ok(code)
}

/// The verdicts of the run's own pairing: each cell against its twin on the other build (`--against`), or
/// each arm against its rig's first arm over interleaved rounds. Only rounds that all measured take part.
fn paired_verdicts(
    ran: &runner::Ran,
    against: Option<&Path>,
    rounds: u32,
    threshold: compare::Threshold<'_>,
    run_info: &benchhost_record::RunInfo,
) -> Vec<Record> {
    let measured = |r: &&Vec<Record>| r.iter().all(|r| r.kind == Kind::Measurement);
    if let Some(dir) = against {
        let pairs: Vec<_> = ran
            .rounds
            .chunks(2)
            .filter(|p| p.iter().all(|r| measured(&r)))
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect();
        return crate::analysis::rounds::against(&pairs, &dir.display().to_string(), threshold, run_info);
    }
    if rounds > 1 {
        let arms: Vec<_> = ran.rounds.iter().filter(measured).cloned().collect();
        return crate::analysis::rounds::paired(&arms, threshold, run_info);
    }
    Vec::new()
}

/// How the arms of `rig` are paired: `--pairing` when given (a run-style rig cannot alternate: it runs in
/// rounds), else as the proof found best for its style: alternating samples for iterations-style rigs, rounds
/// for run-style ones. `None` is rounds.
fn duel_mode(pairing: Option<Pairing>, loader: &Loader, rig: &str) -> Option<duels::Mode> {
    let style = loader.rig(rig)?.1.style;
    match (pairing, style) {
        (Some(Pairing::Rounds), _) | (Some(Pairing::Alternate) | None, Style::Run) => None,
        (Some(Pairing::Alternate) | None, Style::Iterations) => Some(duels::Mode::Alternate),
        (Some(Pairing::Concurrent), _) => Some(duels::Mode::Concurrent),
    }
}

/// The verdicts of the duels (`--pairing alternate` or `concurrent`): each arm against its reference, or this
/// build against the other. Duels with a failed arm have none (their failures are records of their own).
fn duel_verdicts(
    mixed: &duels::Mixed,
    duels: &[duels::Duel],
    against: Option<&Path>,
    threshold: compare::Threshold<'_>,
    run_info: &benchhost_record::RunInfo,
) -> Vec<Record> {
    let mut verdicts = Vec::new();
    for (duel, estimates) in duels.iter().zip(&mixed.dueled.estimates) {
        let [a, b] = duel.arms;
        let (reference, arm) = (&mixed.ran.records[a], &mixed.ran.records[b]);
        if reference.kind != Kind::Measurement || arm.kind != Kind::Measurement {
            continue;
        }
        let label = against_label(reference, against);
        let paired = duel::Paired { arm, reference, against: label, estimates, mode: duel.mode.name() };
        verdicts.extend(duel::verdicts(&paired, threshold, run_info));
    }
    verdicts
}

/// What a paired verdict is against: the other build (`--against DIR`), or the reference arm's variant.
fn against_label(reference: &Record, against: Option<&Path>) -> BTreeMap<String, serde_json::Value> {
    match against {
        Some(dir) => [("build".to_string(), serde_json::Value::from(dir.display().to_string()))].into(),
        None => reference.variant.clone(),
    }
}

/// The verdicts on instruction counts (`--instructions`) between the arms a paired run compares, whatever their
/// pairing mode: each arm against its rig's first, or this build against the other.
fn instruction_verdicts(
    records: &[Record],
    cells: &[matrix::Cell],
    against: Option<&Path>,
    threshold: compare::Threshold<'_>,
    run_info: &benchhost_record::RunInfo,
) -> Vec<Record> {
    let pairs = duels::duels_of(cells, against.is_some(), &|_| Some(duels::Mode::Alternate));
    let verdict = |[a, b]: [usize; 2]| {
        let (reference, arm) = (&records[a], &records[b]);
        instructions::verdict(arm, reference, against_label(reference, against), threshold, run_info)
    };
    pairs.iter().filter_map(|d| verdict(d.arms)).collect()
}

/// `--instructions` with run-style rigs in the matrix: one line per such rig, and its cells run as usual.
fn note_run_style(cells: &[matrix::Cell], loader: &Loader) {
    let run_style: BTreeSet<&str> = cells
        .iter()
        .map(|c| c.rig.as_str())
        .filter(|rig| loader.rig(rig).is_some_and(|(_, d)| d.style == Style::Run))
        .collect();
    for rig in run_style {
        eprintln!(
            "note: --instructions: `{rig}` is a run-style rig, and instruction counts are not for run-style rigs: \
             its cells get their usual metrics only"
        );
    }
}

/// Each series' change against its newest earlier record in the stream, as Criterion's `change:` line. Shown,
/// not written: the stream already holds both records.
fn show_change(
    previous: &[Record],
    records: &[Record],
    threshold: compare::Threshold<'_>,
    run: &benchhost_record::RunInfo,
    out: &Path,
) -> Result<()> {
    if previous.is_empty() {
        return Ok(());
    }
    let changes: Vec<Record> = compare::compare(previous, records, threshold, run)
        .into_iter()
        .filter(|v| {
            let decision = v.verdict.as_ref().map(|v| v.decision);
            !matches!(decision, Some(benchhost_record::Decision::Added | benchhost_record::Decision::Removed))
        })
        .collect();
    if changes.is_empty() {
        return Ok(());
    }
    let refs: Vec<&Record> = changes.iter().collect();
    narrate(&format!(
        "change against the previous record of each series in {} (--no-previous to skip):\n{}\n",
        out.display(),
        report::verdicts_table(&refs)
    ))
}

/// `--export-json`, `--export-csv`, `--export-markdown`, `--export-html`: this run's records, as hyperfine's
/// exports.
fn export_records(args: &RunArgs, records: &[Record], threshold: f64) -> Result<()> {
    let exports = [
        (&args.export_json, export::json(records)),
        (&args.export_csv, export::csv(records)),
        (&args.export_markdown, export::markdown(records, threshold)),
        (&args.export_html, html::page(&History::of(records, html::NEEDS))),
    ];
    for (path, text) in exports {
        if let Some(path) = path {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            narrate(&format!("exported to {}\n", path.display()))?;
        }
    }
    Ok(())
}

/// The plugins of the other build (`run --against DIR`), which must provide every rig of the run, described as
/// this build describes it.
fn against_loader(dir: &Path, cells: &[matrix::Cell], ours: &Loader, allow_writable: bool) -> Result<Loader> {
    // The other build's libraries differ from this one's by design: `rigs.toml`'s pins are not theirs.
    let trust = Trust { allow_writable, ..Trust::default() };
    let loader = Loader::discover(&[dir.to_owned()], &current_exe()?, &trust);
    for rejected in &loader.rejected {
        eprintln!("note: skipped {}: {}", rejected.path.display(), rejected.reason);
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

/// One line when conditions made numbers doubtful (a debug build, CPU steal past `DOUBTFUL_STEAL_PERCENT`):
/// how many cells, and the worst of each reason.
fn warn_doubtful(records: &[Record]) {
    let all: Vec<&Conditions> = records.iter().filter_map(|r| r.cell.as_ref()?.conditions.as_ref()).collect();
    let doubtful = all.iter().filter(|c| !c.doubts().is_empty()).count();
    if doubtful == 0 {
        return;
    }
    let worst = Conditions {
        steal_percent: all.iter().filter_map(|c| c.steal_percent).reduce(f64::max),
        host_debug: all.iter().any(|c| c.host_debug),
        plugin_debug: Some(all.iter().any(|c| c.plugin_debug == Some(true))),
        ..Conditions::default()
    };
    let (cells, why) = (records.len(), worst.doubts().join("; "));
    eprintln!("warning: {doubtful} of {cells} cells ran in conditions that make their numbers doubtful: {why}");
}

/// One warning per record whose sampling ran out of budget before its CI95 target: the record says
/// `cell.stop = budget`, and the screen must say it too.
fn warn_missed_targets(records: &[Record]) {
    for record in records {
        let Some(cell) = record.cell.as_ref().filter(|c| c.stop == Some(benchhost_record::Stop::Budget)) else {
            continue;
        };
        let reached = record
            .metrics
            .values()
            .filter_map(|m| m.ci95.map(|[lo, hi]| (hi - lo) / 2.0 / m.value.abs()))
            .fold(0.0, f64::max);
        eprintln!(
            "warning: {} {}: CI95 target ±{}% not reached within the budget (±{:.1}% after {} samples)",
            record.bench,
            serde_json::to_string(&record.variant).unwrap_or_default(),
            (cell.target_ci.unwrap_or(0.0) * 1e5).round() / 1e3,
            reached * 100.0,
            cell.samples
        );
    }
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
