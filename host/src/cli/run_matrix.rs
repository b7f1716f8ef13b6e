//! `benchhost run`: check everything the run will need after its cells, run the cells (each record written
//! as its cell ends), then tell the user what changed: against the previous record of each series in the
//! output stream (Criterion's `change:`), between interleaved arms, against another build or a baseline.
//! Exports and a saved baseline come last.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use benchhost_plugin_api::Style;

use crate::analysis::between_runs::Spreads;
use crate::analysis::{compare, decision, layout_floor};
use crate::cli::args::{Pairing, RunArgs};
use crate::cli::matrix_setup::{current_exe, resolve_interleaved};
use crate::plan::interleave::{self, Interleave};
use crate::plan::matrix;
use crate::plugin::against::{against_loader, discover_against};
use crate::plugin::loader::Loader;
use crate::report::{self, export, html};
use crate::run::child_executor::ChildExecutor;
use crate::run::context::{RunContext, WorkDir};
use crate::run::duel_plan::{self, Mode};
use crate::run::output::narrate;
use crate::run::provenance;
use crate::run::schedule::run_all;
use crate::run::valgrind::{Counting, Valgrind};
use crate::run::verdicts::{Comparisons, paired_verdicts};
use benchhost_record::baseline;
use benchhost_record::history::History;
use benchhost_record::{Conditions, Kind, Record};

pub(crate) fn run_matrix(args: RunArgs) -> Result<ExitCode> {
    let valgrind = args.instructions.then(Valgrind::find).transpose().map_err(anyhow::Error::msg)?;
    // Everything a run needs after its cells is checked before the first one: a typo must not cost a matrix.
    if let Some(name) = &args.save_baseline {
        baseline::path(&args.out, name)?;
    }
    if let Some(dir) = args.against.as_deref().filter(|d| !d.is_dir()) {
        bail!(
            "--against {}: no such directory (give the other build's plugin directory, e.g. ../main/target/release)",
            dir.display()
        );
    }
    if args.rounds == Some(1) && (args.interleave.is_some() || args.against.is_some()) {
        bail!("--rounds 1: a paired comparison takes its interval over processes, and needs at least 2");
    }
    for (flag, path) in export_paths(&args) {
        writable(path).with_context(|| format!("{flag} {}", path.display()))?;
    }
    // Read before the run appends: the baseline and the previous records are what stood before it.
    let old = args.baseline.as_deref().map(|name| baseline::load(name, &args.out)).transpose()?;
    // One read of --out serves the previous records, the calibrations and the counts' sizes.
    let previous = crate::cli::read_streams::previous(&args.out);
    let allow_writable = args.matrix.dirs.allow_writable_plugins;
    let exe = current_exe()?;
    // The other build's plugins are probed while this build's are.
    let (resolved, theirs) = std::thread::scope(|s| {
        let exe = &exe;
        let theirs =
            args.against.as_deref().map(|dir| s.spawn(move || (dir, discover_against(dir, exe, allow_writable))));
        let resolved = resolve_interleaved(&args.matrix, args.interleave.as_deref());
        (resolved, theirs.map(|t| t.join().expect("discovering plugins does not panic")))
    });
    let (loader, mut cells, interleave) = resolved?;
    let other = theirs.map(|(dir, theirs)| against_loader(dir, theirs, &cells, &loader)).transpose()?;
    let pairs = match other.is_some() {
        true => {
            cells = matrix::with_twins(cells);
            matrix::twin_pairs(&cells)
        }
        false => arm_pairs(&cells, interleave, args.rounds)?,
    };
    let mut run_info = provenance::current();
    if let Some(old) = &old {
        args.judging
            .baseline_on(old, &run_info.cpu)
            .with_context(|| format!("--baseline {}", args.baseline.as_deref().unwrap_or("")))?;
    }
    run_info.shard = args.matrix.shard.map(|s| s.to_string());
    let work_dir = WorkDir::new(run_info.id.as_deref().unwrap_or("run"))?;
    if let Some(id) = &args.run_id {
        run_info.id = Some(id.clone());
    }
    let mut sink = benchhost_record::sink::Sink::open(&args.out)?;
    let seeds = Some(work_dir.path().join("seeds"));
    let mut executor = ChildExecutor { exe, loader: &loader, against: other.as_ref(), quick: args.matrix.quick, seeds };
    let paired = args.interleave.is_some() || args.rounds.is_some_and(|r| r > 1) || other.is_some();
    // A quick paired run is a smoke run: a few processes, in both orders, and no more added (issue 81: with the
    // duels' 10-18 processes `--quick` took 87 s on kafka_topology).
    let asked = args.rounds.or((paired && args.matrix.quick).then_some(duel_plan::QUICK_PROCESSES));
    let rounds = asked.unwrap_or(if paired { 5 } else { 1 });
    let duels = duel_plan::duels_of(&cells, &pairs, &|rig| duel_mode(args.pairing, &loader, rig));
    let cores = crate::proc::cpus::allowed().len();
    if duels.iter().any(|d| d.mode == Mode::Concurrent) && cores < 2 {
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
        written: 0,
        layouts: args.layouts.pairs(args.against.is_some()),
    };
    let threshold = args.judging.threshold(&previous.calibrations, &run_info.host);
    // How far two runs of each series differ on this machine: what a comparison across runs must count.
    let spreads = Spreads::new(&previous.history);
    let outcome = run_all(&cells, &duels, asked, &threshold, &mut ctx, &mut sink)?;
    // This build's records (and the other build's failures); the other build's numbers only feed verdicts.
    let records: Vec<_> = outcome
        .all
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
    let cells = report::format::count(records.len(), "cell");
    narrate(&format!("{cells}, {failed} failed; records appended to {}\n", sink.path().display()))?;
    let mut code = if failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS };
    if !args.no_previous {
        match paired {
            // A paired run's verdicts follow; an unpaired ratio against another run would only stand in their way.
            true if !previous.newest.is_empty() => narrate(&format!(
                "(each series' change against its previous record in {} is left out: unpaired, across runs; the \
                 paired verdicts follow)\n",
                args.out.display()
            ))?,
            true => {}
            false => show_change(&previous.newest, &records, (&threshold, &spreads), &run_info, &args.out)?,
        }
    }
    let comparisons = Comparisons { pairs: &pairs, duels: &duels, against: args.against.as_deref(), rounds };
    let mut verdicts = paired_verdicts(&outcome, &comparisons, &threshold, &run_info);
    // A metric the cell's design fixes (a drain's records consumed, an open loop's rate) is a check, not a verdict.
    verdicts.retain(|v| !fixed_by_design(v, &loader));
    if args.against.is_some() {
        layout_floor::say_one_layout(&mut verdicts, &previous.floors);
    }
    if let Some(old) = &old {
        verdicts.extend(compare::compare(old, &records, &threshold, &spreads, &run_info));
    }
    args.judging.mark_accepted(&mut verdicts, &previous.acknowledgements)?;
    if !verdicts.is_empty() && args.judging.judge(&verdicts, Some(&args.out))? != ExitCode::SUCCESS {
        code = ExitCode::from(1);
    }
    // The Markdown export's "vs previous run" is the change the screen showed (none for a paired run), judged
    // with the series' earlier runs.
    let shown_previous = match paired || args.no_previous {
        true => &[][..],
        false => &previous.history[..],
    };
    export_records(&args, &records, &verdicts, shown_previous, args.judging.fixed_threshold())?;
    if let Some(name) = &args.save_baseline {
        let path = baseline::path(&args.out, name)?;
        baseline::save(&path, &records)?;
        narrate(&format!("baseline `{name}` saved to {}\n", path.display()))?;
    }
    Ok(code)
}

/// The comparisons of the arms of `cells`, as `--interleave` asks (or `--rounds N` alone implies), each note
/// on an arm without a partner said on stderr; a config error before anything runs.
fn arm_pairs(cells: &[matrix::Cell], interleave: Option<Interleave>, rounds: Option<u32>) -> Result<Vec<[usize; 2]>> {
    let implied = rounds.is_some_and(|r| r > 1).then_some(Interleave::Implied);
    let Some(how) = interleave.or(implied) else { return Ok(Vec::new()) };
    let found = interleave::pairs(cells, &how).map_err(anyhow::Error::msg)?;
    for note in &found.notes {
        eprintln!("note: {note}");
    }
    Ok(found.pairs)
}

/// How the arms of `rig` are paired: `--pairing` when given, else in one process: alternating samples for
/// iterations-style rigs, alternating whole runs for run-style ones (on this VM wal_log `fsync=none` A/A read
/// a CI95 of +-1.7-3.8% in 18-19 s so, against +-12% in 18 s in rounds), and alternating short windows of
/// both arms' continuing workloads for run-style rigs that declare `windows`. `None` is rounds.
fn duel_mode(pairing: Option<Pairing>, loader: &Loader, rig: &str) -> Option<Mode> {
    let descriptor = loader.rig(rig)?.1;
    match (pairing, descriptor.style) {
        (Some(Pairing::Rounds), _) => None,
        (Some(Pairing::Alternate) | None, Style::Run) if descriptor.windows => Some(Mode::Windows),
        (Some(Pairing::Alternate | Pairing::WholeRuns) | None, Style::Run) => Some(Mode::Runs),
        (Some(Pairing::Alternate | Pairing::WholeRuns) | None, Style::Iterations) => Some(Mode::Alternate),
        (Some(Pairing::Concurrent), _) => Some(Mode::Concurrent),
    }
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

/// Whether `verdict` judges a metric that its cell's design fixes (`Metric::fixed_where`).
fn fixed_by_design(verdict: &Record, catalog: &dyn matrix::Catalog) -> bool {
    let Some(metric) = verdict.verdict.as_ref().and_then(|v| v.metric.as_deref()) else { return false };
    let Some(descriptor) = catalog.descriptor(&verdict.bench) else { return false };
    descriptor.metrics.iter().any(|m| m.name == metric && m.is_fixed(&verdict.variant))
}

/// Each series' change against its newest earlier record in the stream, as Criterion's `change:` line. Shown,
/// not written: the stream already holds both records.
fn show_change(
    previous: &[Record],
    records: &[Record],
    (threshold, spreads): (decision::Threshold<'_>, &Spreads),
    run: &benchhost_record::RunInfo,
    out: &Path,
) -> Result<()> {
    // A previous record of another machine is no base for a change: a change of machine is not the code's.
    let ran: BTreeSet<_> = records.iter().map(benchhost_record::series).collect();
    let (previous, elsewhere): (Vec<Record>, Vec<Record>) = previous
        .iter()
        .filter(|r| ran.contains(&benchhost_record::series(r)))
        .cloned()
        .partition(|r| r.run.cpu == run.cpu);
    let other_cpus: BTreeSet<&str> = elsewhere.iter().map(|r| r.run.cpu.as_str()).collect();
    if !other_cpus.is_empty() {
        let cpus = other_cpus.into_iter().collect::<Vec<_>>().join(", ");
        narrate(&format!(
            "({} series' previous records in {} ran on another machine ({cpus}; this one: {}): not compared)\n",
            elsewhere.len(),
            out.display(),
            run.cpu
        ))?;
    }
    if previous.is_empty() {
        return Ok(());
    }
    let changes: Vec<Record> = compare::compare(&previous, records, threshold, spreads, run)
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
    let unknown = report::verdicts::unknown_spread_line(&refs).map(|line| format!("{line}\n")).unwrap_or_default();
    narrate(&format!(
        "change against the previous record of each series in {} (--no-previous to skip):\n{}\n{unknown}",
        out.display(),
        report::verdicts_table(&refs)
    ))
}

/// `--export-json`, `--export-csv`, `--export-markdown`, `--export-html`: this run's records, as hyperfine's
/// exports; the Markdown report also holds `previous` (each series' records before this run, for its "vs
/// previous run").
fn export_records(
    args: &RunArgs,
    records: &[Record],
    verdicts: &[Record],
    previous: &[Record],
    threshold: f64,
) -> Result<()> {
    // The reports also list the run's verdicts; the data exports hold its records only.
    let with_verdicts: Vec<Record> = match args.export_markdown.is_some() || args.export_html.is_some() {
        true => records.iter().chain(verdicts).cloned().collect(),
        false => Vec::new(),
    };
    let markdown = match args.export_markdown.is_some() {
        true => {
            let ran: BTreeSet<_> = records.iter().map(benchhost_record::series).collect();
            let before = previous.iter().filter(|r| ran.contains(&benchhost_record::series(r)));
            let all: Vec<Record> = before.chain(&with_verdicts).cloned().collect();
            crate::report::markdown::markdown(&all, threshold)
        }
        false => String::new(),
    };
    let exports = [
        (&args.export_json, export::json(records)),
        (&args.export_csv, export::csv(records)),
        (&args.export_markdown, markdown),
        (&args.export_html, html::page(&History::of(&with_verdicts, html::NEEDS), &[])),
    ];
    for (path, text) in exports {
        if let Some(path) = path {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            narrate(&format!("exported to {}\n", path.display()))?;
        }
    }
    Ok(())
}

/// Each `--export-*` flag given, with its path.
fn export_paths(args: &RunArgs) -> Vec<(&'static str, &Path)> {
    [
        ("--export-json", &args.export_json),
        ("--export-csv", &args.export_csv),
        ("--export-markdown", &args.export_markdown),
        ("--export-html", &args.export_html),
    ]
    .into_iter()
    .filter_map(|(flag, path)| Some((flag, path.as_deref()?)))
    .collect()
}

/// Whether a file can be written at `path`, found before the run by opening it for writing (without
/// truncating it; a file made here is removed again).
fn writable(path: &Path) -> Result<()> {
    if path.is_dir() {
        bail!("is a directory: give a file name");
    }
    let existed = path.exists();
    std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => anyhow::anyhow!("its directory does not exist"),
        _ => anyhow::Error::new(e).context("cannot be written"),
    })?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// One line when conditions made numbers doubtful (a debug build, CPU steal past `DOUBTFUL_STEAL_PERCENT`, an
/// idle arm's threads running):
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
        idle_arm_cpu_percent: all.iter().filter_map(|c| c.idle_arm_cpu_percent).reduce(f64::max),
        ..Conditions::default()
    };
    let (cells, why) = (records.len(), worst.doubts().join("; "));
    eprintln!("warning: {doubtful} of {cells} cells ran in conditions that make their numbers doubtful: {why}");
}

/// One warning per record whose sampling ran out of budget before its CI95 target: the record says
/// `cell.stop = budget`, and the screen must say it too.
fn warn_missed_targets(records: &[Record]) {
    records.iter().filter_map(missed_target).for_each(|line| eprintln!("{line}"));
}

/// The warning of a record whose sampling ran out of budget before its CI95 target (`None` for any other):
/// the interval it reached, or that it has none (a single sample has no interval).
fn missed_target(record: &Record) -> Option<String> {
    let cell = record.cell.as_ref().filter(|c| c.stop == Some(benchhost_record::Stop::Budget))?;
    let widths: Vec<f64> =
        record.metrics.values().filter_map(|m| m.ci95.map(|[lo, hi]| (hi - lo) / 2.0 / m.value.abs())).collect();
    let samples = match cell.samples {
        1 => "1 sample".to_string(),
        n => format!("{n} samples"),
    };
    let reached = match widths.iter().copied().reduce(f64::max) {
        Some(widest) if cell.samples > 1 => format!("±{:.1}% after {samples}", widest * 100.0),
        _ => format!("no interval after {samples}"),
    };
    let variant: Vec<String> =
        record.variant.iter().map(|(k, v)| format!("{k}={}", crate::report::format::plain(v))).collect();
    Some(format!(
        "warning: {} {}: CI95 target ±{}% not reached within the budget ({reached})",
        record.bench,
        variant.join(" "),
        (cell.target_ci.unwrap_or(0.0) * 1e5).round() / 1e3,
    ))
}

#[cfg(test)]
#[path = "run_matrix_tests.rs"]
mod tests;
