//! `benchhost accept`: a person's word that a change is expected, written as acknowledgement records (one per
//! series and metric accepted), never as an edit of a measurement. It takes the change from the newest
//! `regressed` or `improved` verdict of each series the PATTERN names, or, in a stream of measurements alone (a
//! nightly history), from each series' newest change point; `--list` shows what stands, `--revoke` undoes one. Everything is checked before anything is written: a refusal writes nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use clap::Args;
use regex::Regex;

use crate::analysis::series_changes;
use crate::bisect::git::Repo;
use crate::cli::args::RESULTS;
use crate::run::output::print;
use crate::run::provenance;
use benchhost_record::nightly::NightlyKey;
use benchhost_record::sink::Sink;
use benchhost_record::{Acknowledgement, Decision, Kind, Record, RunInfo, reader, standing_acknowledgements};

/// `benchhost accept`.
#[derive(Debug, Args)]
pub(crate) struct AcceptArgs {
    /// The series to accept a change of: a regular expression on `bench k=v ...` (as `run FILTER`); every series
    /// it matches whose newest verdict is `regressed` or `improved`.
    #[arg(required_unless_present_any = ["list", "revoke"])]
    pattern: Option<String>,
    /// Why the change is expected (required, non-empty): it is shown wherever the change is.
    #[arg(long)]
    reason: Option<String>,
    /// Only this metric (every metric with such a verdict when absent).
    #[arg(long)]
    metric: Option<String>,
    /// The commit from which the change holds (default: the accepted verdict's run).
    #[arg(long, value_name = "REV")]
    from: Option<String>,
    /// Who accepts it (default: git's `user.name <user.email>`).
    #[arg(long, value_name = "NAME")]
    by: Option<String>,
    /// The stream whose verdicts are accepted, and whose acknowledgements `--list` and `--revoke` read.
    #[arg(long, value_name = "FILE", default_value = RESULTS)]
    results: PathBuf,
    /// Append the acknowledgements to FILE (e.g. one committed with the code, which `run --accepted FILE`
    /// reads); default: the `--results` stream.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Show the acknowledgements of `--results` (and `--out`), revoked ones marked.
    #[arg(long, conflicts_with_all = ["pattern", "revoke"])]
    list: bool,
    /// Undo the acknowledgement with this id (`--reason` says why).
    #[arg(long, value_name = "ID", conflicts_with = "pattern")]
    revoke: Option<String>,
}

pub(crate) fn accept(args: &AcceptArgs) -> Result<ExitCode> {
    let out = args.out.clone().unwrap_or_else(|| args.results.clone());
    if args.list {
        print(&list(&acknowledgements(&[&args.results, &out])?))?;
        return Ok(ExitCode::SUCCESS);
    }
    let reason = args.reason.as_deref().map(str::trim).unwrap_or_default();
    if reason.is_empty() {
        bail!("accept needs --reason: say why the change is expected (it is shown wherever the change is)");
    }
    let by = match &args.by {
        Some(by) if !by.trim().is_empty() => by.trim().to_string(),
        _ => git_user().context("say who accepts it with --by NAME")?,
    };
    let run = provenance::current();
    let written = match &args.revoke {
        Some(id) => revokes(id, &acknowledgements(&[&args.results, &out])?, reason, &by, &run)?,
        None => {
            let pattern = args.pattern.as_deref().expect("clap requires PATTERN without --list or --revoke");
            let mut accepted = accepted_changes(args, pattern, &run)?;
            let from = args.from.as_deref().map(commit_and_time).transpose()?;
            let id = run.id.clone().unwrap_or_else(|| format!("{:x}", run.ts_ms));
            for record in &mut accepted {
                let a = record.acknowledgement.as_mut().expect("acknowledgements only");
                if let Some((commit, ts_ms)) = &from {
                    (a.from_commit, a.from_ts_ms) = (Some(commit.clone()), *ts_ms);
                }
                (a.id, a.reason, a.by) = (id.clone(), reason.to_string(), by.clone());
            }
            accepted
        }
    };
    Sink::append_all(&out, &written)?;
    for record in &written {
        eprintln!("{}: {}", series_label(record), crate::report::export::acknowledgement_text(record));
    }
    eprintln!(
        "{} appended to {}",
        crate::report::format::count(written.len(), "acknowledgement record"),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The changes to accept, as acknowledgement records without id, reason or who: of the verdicts of the series
/// PATTERN and `--metric` name, or of their change points when the stream holds no verdict of them; refused in
/// one line when PATTERN names no series of the stream, or none has a change to accept.
fn accepted_changes(args: &AcceptArgs, pattern: &str, run: &RunInfo) -> Result<Vec<Record>> {
    let filter =
        Regex::new(pattern).map_err(|e| anyhow::anyhow!("PATTERN `{pattern}` is not a regular expression: {e}"))?;
    let records: Vec<Record> = reader::read(&args.results)?.records.into_iter().map(|(_, r)| r).collect();
    let named = |r: &&Record| filter.is_match(&series_label(r));
    let series: Vec<&Record> = records.iter().filter(|r| r.kind != Kind::Acknowledgement).filter(named).collect();
    if series.is_empty() {
        bail!("PATTERN `{pattern}` names no series of {}", args.results.display());
    }
    match series.iter().any(|r| r.kind == Kind::Verdict) {
        true => accepted_verdicts(args, pattern, &series, run),
        false => accepted_steps(args, pattern, &filter, &records, run),
    }
}

/// The newest verdict of each (series, metric) among `series`, when it is `regressed` or `improved`.
fn accepted_verdicts(args: &AcceptArgs, pattern: &str, series: &[&Record], run: &RunInfo) -> Result<Vec<Record>> {
    let mut newest: BTreeMap<(String, String, String), &Record> = BTreeMap::new();
    for &record in series {
        let Some(metric) = record.verdict.as_ref().and_then(|v| v.metric.clone()) else { continue };
        if args.metric.as_ref().is_some_and(|m| *m != metric) {
            continue;
        }
        let (bench, variant) = benchhost_record::series(record);
        let slot = newest.entry((bench, variant, metric)).or_insert(record);
        if record.run.ts_ms >= slot.run.ts_ms {
            *slot = record;
        }
    }
    let decided = |r: &&&Record| {
        let v = r.verdict.as_ref().expect("verdicts only");
        matches!(v.decision, Decision::Regressed | Decision::Improved) && v.ratio.is_some() && v.ci95.is_some()
    };
    let accepted: Vec<Record> = newest.values().filter(decided).map(|r| of_verdict(r, run)).collect();
    if accepted.is_empty() {
        let metric = args.metric.as_ref().map_or(String::new(), |m| format!(" on `{m}`"));
        bail!(
            "PATTERN `{pattern}` names {} verdicts{metric} in {}, and the newest of none is regressed or improved: \
             nothing to accept",
            newest.len(),
            args.results.display()
        );
    }
    Ok(accepted)
}

/// The acknowledgement of `verdict`'s change, holding from its run, written by `run`, with id, reason and who
/// still to fill.
fn of_verdict(verdict: &Record, run: &RunInfo) -> Record {
    let v = verdict.verdict.as_ref().expect("a verdict record");
    let acknowledgement = Acknowledgement {
        id: String::new(),
        metric: v.metric.clone().expect("verdicts with a metric only"),
        decision: v.decision,
        ratio: v.ratio.expect("decided verdicts only"),
        ci95: v.ci95.expect("decided verdicts only"),
        higher_is_better: v.higher_is_better.unwrap_or(false),
        from_commit: verdict.run.commit.clone(),
        from_ts_ms: verdict.run.ts_ms,
        source: "verdict".into(),
        reason: String::new(),
        by: String::new(),
        revokes: None,
    };
    Record::acknowledgement_on(verdict, acknowledgement, run.clone())
}

/// The newest change point of each (series, metric) of the nightly history in `records` that `filter` and
/// `--metric` name (on any machine: the newest of them), holding from its first night.
fn accepted_steps(
    args: &AcceptArgs,
    pattern: &str,
    filter: &Regex,
    records: &[Record],
    run: &RunInfo,
) -> Result<Vec<Record>> {
    let (history, _) = crate::cli::read_streams::nightly(std::slice::from_ref(&args.results))?;
    let standing = standing_acknowledgements(records);
    let keep = |key: &NightlyKey| {
        args.metric.as_ref().is_none_or(|m| *m == key.metric) && filter.is_match(&crate::report::trend::label(key))
    };
    let found = series_changes::of_history(history, keep, &standing, benchhost_record::scan::threads());
    let mut newest: BTreeMap<(String, String, String), Record> = BTreeMap::new();
    for f in &found {
        let Some(point) = f.points.as_ref().ok().and_then(|p| p.last()) else { continue };
        let night = &f.series.points[point.index];
        let acknowledgement = Acknowledgement {
            id: String::new(),
            metric: f.key.metric.clone(),
            decision: if f.regression(point) { Decision::Regressed } else { Decision::Improved },
            ratio: point.ratio,
            ci95: point.ci95,
            higher_is_better: f.series.higher_is_better,
            from_commit: night.run.commit.clone(),
            from_ts_ms: night.ts_ms,
            source: "change_point".into(),
            reason: String::new(),
            by: String::new(),
            revokes: None,
        };
        let variant = serde_json::from_str(&f.key.variant).unwrap_or_default();
        let record = Record {
            acknowledgement: Some(acknowledgement),
            ..Record::new(f.key.bench.clone(), Kind::Acknowledgement, run.clone(), variant)
        };
        let key = (f.key.bench.clone(), f.key.variant.clone(), f.key.metric.clone());
        if newest.get(&key).is_none_or(|r| r.acknowledgement.as_ref().is_some_and(|a| a.from_ts_ms <= night.ts_ms)) {
            newest.insert(key, record);
        }
    }
    if newest.is_empty() {
        bail!(
            "PATTERN `{pattern}` names {} series of {} (no verdicts: a nightly history), and none has a change point \
             to accept",
            found.len(),
            args.results.display()
        );
    }
    Ok(newest.into_values().collect())
}

/// The records that revoke every standing record of acknowledgement `id`; refused when none stands.
fn revokes(id: &str, all: &[Record], reason: &str, by: &str, run: &RunInfo) -> Result<Vec<Record>> {
    let standing: Vec<&Record> = standing_acknowledgements(all)
        .into_iter()
        .filter(|r| r.acknowledgement.as_ref().is_some_and(|a| a.id == id))
        .collect();
    if standing.is_empty() {
        let ids: Vec<String> = standing_acknowledgements(all)
            .iter()
            .filter_map(|r| r.acknowledgement.as_ref().map(|a| a.id.clone()))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        bail!(
            "no standing acknowledgement has id `{id}` (standing: {})",
            if ids.is_empty() { "none".into() } else { ids.join(", ") }
        );
    }
    let revoke = |record: &&Record| {
        let mut a = record.acknowledgement.clone().expect("acknowledgements only");
        (a.reason, a.by, a.revokes) = (reason.to_string(), by.to_string(), Some(id.to_string()));
        a.id = run.id.clone().unwrap_or_else(|| format!("{:x}", run.ts_ms));
        Record::acknowledgement_on(record, a, run.clone())
    };
    Ok(standing.iter().map(revoke).collect())
}

/// Every acknowledgement record of the streams that exist among `paths` (each read once).
fn acknowledgements(paths: &[&Path]) -> Result<Vec<Record>> {
    let mut seen: Vec<&Path> = Vec::new();
    let mut all = Vec::new();
    for path in paths.iter().filter(|p| p.is_file()) {
        if seen.contains(path) {
            continue;
        }
        seen.push(path);
        let stream = reader::read(path)?;
        all.extend(stream.records.into_iter().map(|(_, r)| r).filter(|r| r.kind == Kind::Acknowledgement));
    }
    Ok(all)
}

/// `--list`: one line per acknowledgement record, the revoked ones marked.
fn list(all: &[Record]) -> String {
    if all.is_empty() {
        return "no acknowledgements\n".into();
    }
    let standing: Vec<&Record> = standing_acknowledgements(all);
    let mut out = String::new();
    for record in all {
        let revoked = record.acknowledgement.as_ref().is_some_and(|a| a.revokes.is_none())
            && !standing.iter().any(|s| std::ptr::eq(*s, record));
        let state = if revoked { " (revoked)" } else { "" };
        let text = crate::report::export::acknowledgement_text(record);
        out += &format!("{}{state}: {text}\n", series_label(record));
    }
    out
}

/// `bench k=v k=v` of a record's series, as `run FILTER` and `trend` match it.
fn series_label(record: &Record) -> String {
    crate::report::trend::label_of(&record.bench, &record.variant)
}

/// The full hash of `rev` and its commit time (ms), or a one-line refusal when it is not a commit.
fn commit_and_time(rev: &str) -> Result<(String, u64)> {
    let repo = Repo::here().map_err(|_| anyhow::anyhow!("--from `{rev}`: not inside a git checkout"))?;
    let commit = repo.resolve("--from", rev)?;
    let seconds: u64 = repo.git(&["show", "-s", "--format=%ct", &commit])?.trim().parse()?;
    Ok((commit, seconds * 1000))
}

/// `user.name <user.email>` from git's config, or an error saying that neither is set.
fn git_user() -> Result<String> {
    let get = |key: &str| {
        Command::new("git")
            .args(["config", "--get", key])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    match (get("user.name"), get("user.email")) {
        (Some(name), Some(email)) => Ok(format!("{name} <{email}>")),
        (Some(name), None) => Ok(name),
        (None, Some(email)) => Ok(email),
        (None, None) => bail!("git's user.name and user.email are not set"),
    }
}
