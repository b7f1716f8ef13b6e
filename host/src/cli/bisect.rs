//! `benchhost bisect GOOD BAD [FILTER] [run options]`: confirms that BAD regressed against GOOD on one series,
//! then finds the first commit between them that did, each step a `run --against` of that commit's build
//! against GOOD's. The answer: the first bad commit, its verdict against its parent, the steps and the time.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use benchhost_record::{Decision, Record};
use clap::{Args, Parser};
use serde_json::json;

use crate::bisect::builds::{Builder, check_profile, short};
use crate::bisect::git::Repo;
use crate::bisect::judge::{Call, by_estimate, call};
use crate::bisect::search::{Judged, Search};
use crate::bisect::step::{Build, Stepper, without_option};
use crate::run::output::print;

/// Extra measurements of a step whose interval spans the middle, each with twice the processes.
const EXTRA_MEASUREMENTS: u32 = 2;

#[derive(Debug, Args)]
pub(crate) struct BisectArgs {
    /// A revision without the regression (a commit, tag or branch).
    pub(crate) good: String,
    /// A revision with it, after GOOD in its history.
    pub(crate) bad: String,
    /// The FILTER and `run` options of every step (--instructions, --quick, --rounds, --set ...), and bisect's
    /// own: --metric M (the metric that decides [default: instructions with --instructions, else the rig's
    /// first]), --json, --out FILE [default: results/results.jsonl], --cargo-profile P [default: release].
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "FILTER|OPTION")]
    pub(crate) rest: Vec<String>,
}

/// The words bisect passes to `run`, parsed as `run` parses them (to check them, and to find the rig).
#[derive(Debug, Parser)]
struct RunLine {
    #[command(flatten)]
    run: crate::cli::args::RunArgs,
}

/// Bisect's own options, taken out of the words passed to `run`.
struct Own {
    json: bool,
    metric: Option<String>,
    out: PathBuf,
    profile: String,
    /// The words for `run`, `--plugin-dir` included (it finds the rig here).
    forwarded: Vec<String>,
}

pub(crate) fn bisect(args: BisectArgs) -> Result<ExitCode> {
    let started = Instant::now();
    let own = split(&args.rest)?;
    check_profile(&own.profile)?;
    let words = std::iter::once("run".to_string()).chain(own.forwarded.clone());
    let run_args = match RunLine::try_parse_from(words) {
        Ok(line) => line.run,
        Err(e) => bail!("bisect's run options: {}", e.to_string().lines().next().unwrap_or("")),
    };
    for (given, flag) in [
        (run_args.against.is_some(), "--against"),
        (run_args.interleave.is_some(), "--interleave"),
        (run_args.baseline.is_some(), "--baseline"),
        (run_args.save_baseline.is_some(), "--save-baseline"),
    ] {
        if given {
            bail!("bisect makes every comparison itself: {flag} is not one of its options");
        }
    }
    let repo = Repo::here()?;
    let good = repo.resolve("GOOD", &args.good)?;
    let bad = repo.resolve("BAD", &args.bad)?;
    let commits = repo.between(&good, &bad)?;
    let (loader, cells) = crate::cli::matrix_setup::resolve(&run_args.matrix)?;
    let cell = match cells.as_slice() {
        [one] => one,
        _ => bail!(
            "bisect follows one series; the FILTER selects {} cells: {} (narrow it, e.g. `wal compression=zstd rows=1000`)",
            cells.len(),
            cells.iter().map(|c| c.label()).collect::<Vec<_>>().join("; ")
        ),
    };
    let (plugin, descriptor) = loader.rig(&cell.rig).ok_or_else(|| anyhow!("rig `{}` has no plugin here", cell.rig))?;
    let library = plugin.path.file_stem().and_then(|s| s.to_str()).map(|s| s.trim_start_matches("lib").to_owned());
    let metric = match (&own.metric, run_args.instructions) {
        (Some(metric), _) => metric.clone(),
        (None, true) => "instructions".into(),
        (None, false) => descriptor.metrics.first().map(|m| m.name.to_string()).unwrap_or_default(),
    };
    // A step loads only the two builds it compares.
    let child_args = without_option(&own.forwarded, "--plugin-dir");
    let mut stepper = Stepper {
        forwarded: child_args,
        metric,
        steps_dir: repo.cache.join("steps"),
        out: own.out.clone(),
        measured: 0,
    };
    let mut builder = Builder::new(&repo, vec![(cell.rig.clone(), library)], &own.profile);
    eprintln!(
        "bisect: {} commit{} after GOOD {} up to BAD {}, on `{}` {}",
        commits.len(),
        if commits.len() == 1 { "" } else { "s" },
        short(&good),
        short(&bad),
        cell.label(),
        stepper.metric
    );
    let outcome = walk(&repo, &commits, &good, &mut builder, &mut stepper);
    builder.restore();
    let walked = outcome?;
    let summary = Summary { started, build_s: builder.build_s, reused: builder.reused, measured: stepper.measured };
    answer(&repo, &commits, walked, &summary, own.json)
}

/// What the walk found.
enum Walked {
    /// BAD was not `regressed` against GOOD: its verdict.
    NotRegressed(Record),
    /// The candidates (one when exact), the skipped commits, the steps, and the first bad commit's verdict
    /// against its parent when the answer is exact.
    Found { candidates: Vec<usize>, skipped: Vec<usize>, steps: u32, verdict: Option<Record> },
}

fn walk(repo: &Repo, commits: &[String], good: &str, builder: &mut Builder, stepper: &mut Stepper) -> Result<Walked> {
    let bad = commits.last().expect("GOOD..BAD is not empty");
    let good_dir = builder.build(good)?.map_err(|why| anyhow!("GOOD {}: {why}", short(good)))?;
    let bad_dir = builder.build(bad)?.map_err(|why| anyhow!("BAD {}: {why}", short(bad)))?;
    let (good_build, bad_build) = (Build { commit: good, dir: &good_dir }, Build { commit: bad, dir: &bad_dir });
    let confirmed =
        stepper.measure(bad_build, good_build, None, "confirm")?.map_err(|why| anyhow!("BAD against GOOD: {why}"))?;
    let verdict = confirmed.verdict.as_ref().expect("a verdict record");
    let (Decision::Regressed, Some(bad_ratio)) = (verdict.decision, verdict.ratio) else {
        return Ok(Walked::NotRegressed(confirmed));
    };
    let mut search = Search::new(commits.len());
    let mut steps = 0;
    while let Some(i) = search.next() {
        steps += 1;
        let label = format!("step {steps} ({} of {})", i + 1, commits.len());
        let judged = judge_commit(builder, stepper, &commits[i], good_build, bad_ratio, &label)?;
        eprintln!("bisect: {label}: {} is {}", short(&commits[i]), judged_name(judged));
        search.judge(i, judged);
    }
    let candidates = search.answer().candidates;
    let verdict = match candidates.as_slice() {
        [first] => {
            let parent = if *first == 0 { good.to_owned() } else { commits[first - 1].clone() };
            let (Ok(first_dir), Ok(parent_dir)) = (builder.build(&commits[*first])?, builder.build(&parent)?) else {
                bail!("{}: a build that was measured no longer builds", repo.root.display());
            };
            let (new, old) =
                (Build { commit: &commits[*first], dir: &first_dir }, Build { commit: &parent, dir: &parent_dir });
            stepper.measure(new, old, None, "against its parent")?.ok()
        }
        _ => None,
    };
    Ok(Walked::Found { candidates, skipped: search.skipped(), steps, verdict })
}

/// Builds and measures one commit against GOOD: bad, good, or skipped (it does not build, its rig fails).
fn judge_commit(
    builder: &mut Builder,
    stepper: &mut Stepper,
    commit: &str,
    good: Build,
    bad_ratio: f64,
    label: &str,
) -> Result<Judged> {
    let dir = match builder.build(commit)? {
        Ok(dir) => dir,
        Err(why) => {
            eprintln!("bisect: {label}: {} skipped: {why}", short(commit));
            return Ok(Judged::Skip);
        }
    };
    let mut rounds = None;
    let mut last_ratio = 1.0;
    for _ in 0..=EXTRA_MEASUREMENTS {
        let record = match stepper.measure(Build { commit, dir: &dir }, good, rounds, label)? {
            Ok(record) => record,
            Err(why) => {
                eprintln!("bisect: {label}: {} skipped: {why}", short(commit));
                return Ok(Judged::Skip);
            }
        };
        let verdict = record.verdict.as_ref().expect("a verdict record");
        let Some(ratio) = verdict.ratio else { return Ok(Judged::Skip) };
        last_ratio = ratio;
        if let Call::Sure(judged) = call(verdict.ci95.unwrap_or([ratio, ratio]), bad_ratio) {
            return Ok(judged);
        }
        let processes = verdict.method.as_ref().map_or(10, |m| m.processes as u32);
        rounds = Some(rounds.unwrap_or(processes).max(2) * 2);
        eprintln!(
            "bisect: {label}: unsure (x{ratio:.4} against the middle x{:.4}); again with {} processes",
            bad_ratio.sqrt(),
            rounds.unwrap_or(0)
        );
    }
    eprintln!("bisect: {label}: still unsure; called by its estimate");
    Ok(by_estimate(last_ratio, bad_ratio))
}

fn judged_name(judged: Judged) -> &'static str {
    match judged {
        Judged::Good => "good",
        Judged::Bad => "bad",
        Judged::Skip => "skipped",
    }
}

/// What the whole bisection cost.
struct Summary {
    started: Instant,
    build_s: f64,
    reused: u32,
    measured: u32,
}

fn answer(repo: &Repo, commits: &[String], walked: Walked, cost: &Summary, json: bool) -> Result<ExitCode> {
    let wall_s = cost.started.elapsed().as_secs_f64();
    let (candidates, skipped, steps, verdict) = match walked {
        Walked::NotRegressed(record) => {
            let table = crate::report::verdicts_table(&[&record]);
            match json {
                true => print(
                    &(serde_json::to_string_pretty(
                        &json!({"first_bad": null, "regressed": false, "verdict": record}),
                    )? + "\n"),
                )?,
                false => print(&format!("BAD is not regressed against GOOD; nothing to bisect\n{table}\n"))?,
            }
            return Ok(ExitCode::from(1));
        }
        Walked::Found { candidates, skipped, steps, verdict } => (candidates, skipped, steps, verdict),
    };
    let names = |indices: &[usize]| indices.iter().map(|i| commits[*i].clone()).collect::<Vec<_>>();
    let first_bad = (candidates.len() == 1).then(|| commits[candidates[0]].clone());
    if json {
        let object = json!({
            "first_bad": first_bad,
            "subject": first_bad.as_deref().map(|c| repo.subject(c)),
            "candidates": names(&candidates),
            "steps": steps,
            "measured": cost.measured,
            "verdict": verdict,
            "skipped": names(&skipped),
            "wall_s": (wall_s * 10.0).round() / 10.0,
            "build_s": (cost.build_s * 10.0).round() / 10.0,
        });
        print(&(serde_json::to_string_pretty(&object)? + "\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = match &first_bad {
        Some(commit) => format!("first bad commit: {commit} {}\n", repo.subject(commit)),
        None => {
            let list: Vec<String> = names(&candidates).iter().map(|c| format!("  {c} {}", repo.subject(c))).collect();
            format!("the first bad commit is one of these (the others were skipped):\n{}\n", list.join("\n"))
        }
    };
    if let Some(verdict) = &verdict {
        text += &format!("against its parent:\n{}\n", crate::report::verdicts_table(&[verdict]));
    }
    text += &format!(
        "{steps} steps ({} skipped), {} comparisons measured, {wall_s:.0} s in all ({:.0} s building, {} builds reused)\n",
        skipped.len(),
        cost.measured,
        cost.build_s,
        cost.reused
    );
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Takes bisect's own options out of `rest`; the remaining words go to `run`.
fn split(rest: &[String]) -> Result<Own> {
    let mut own = Own {
        json: false,
        metric: None,
        out: PathBuf::from(crate::cli::args::RESULTS),
        profile: "release".into(),
        forwarded: Vec::new(),
    };
    let mut words = rest.iter();
    while let Some(word) = words.next() {
        let (flag, inline) = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_owned())),
            _ => (word.as_str(), None),
        };
        let mut value =
            || inline.clone().or_else(|| words.next().cloned()).ok_or_else(|| anyhow!("{flag} needs a value"));
        match flag {
            "--json" => own.json = true,
            "--metric" => own.metric = Some(value()?),
            "--out" => own.out = PathBuf::from(value()?),
            "--cargo-profile" => own.profile = value()?,
            _ => own.forwarded.push(word.clone()),
        }
    }
    Ok(own)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn bisect_takes_its_own_options_and_passes_the_rest_to_run() {
        let own =
            split(&words("wal rows=10 --instructions --json --metric=instructions --out r.jsonl --quick")).unwrap();
        assert!(own.json);
        assert_eq!(own.metric.as_deref(), Some("instructions"));
        assert_eq!(own.out, PathBuf::from("r.jsonl"));
        assert_eq!(own.forwarded, words("wal rows=10 --instructions --quick"));
        assert!(split(&words("--metric")).is_err(), "a flag without its value");
    }

    #[test]
    fn steps_load_only_their_own_builds_and_take_the_rounds_they_are_given() {
        let kept = without_option(&words("wal --plugin-dir a --plugin-dir=b --quick"), "--plugin-dir");
        assert_eq!(kept, words("wal --quick"));
        let kept = without_option(&words("wal --rounds 6 --rounds=7 --rounds-x 1"), "--rounds");
        assert_eq!(kept, words("wal --rounds-x 1"), "only the option itself");
    }
}
