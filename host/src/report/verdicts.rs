//! Verdicts as a reviewer reads them: grouped by what they compare against (another build, another arm of the
//! rig, an earlier run), each group under a heading that names both sides and how they were measured, and in
//! each group what needs a look first (failed, regressed, improved, undecided) before what did not change.

use std::collections::{BTreeMap, BTreeSet};

use crate::report::order;
use benchhost_record::{Decision, Record};

/// What a verdict compares against.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Side {
    /// Another build's plugins (`run --against DIR`): the directory.
    Build(String),
    /// Another arm of the rig (`run --interleave`).
    Arms,
    /// Records of earlier runs (`compare`, `run --baseline`): not paired.
    Unpaired,
}

impl Side {
    /// The side of `verdict`.
    pub fn of(verdict: &Record) -> Side {
        let v = verdict.verdict.as_ref();
        let build = v.and_then(|v| v.against.as_ref()?.get("build")?.as_str().map(str::to_owned));
        match (build, crate::report::comparison::reference_of(verdict)) {
            (Some(dir), _) => Side::Build(dir),
            (None, Some(_)) => Side::Arms,
            (None, None) => Side::Unpaired,
        }
    }
}

/// The verdicts of one side, newest first per comparison, under their heading.
#[derive(Debug)]
pub struct Group<'a> {
    /// The heading's first line: both sides and how they were measured.
    pub heading: String,
    /// Both builds' libraries by SHA-256, one `rig: this / that` each (builds only).
    pub libraries: Vec<String>,
    /// The newest verdict of each comparison and metric: what needs a look first, then by rig and series.
    pub verdicts: Vec<&'a Record>,
}

impl Group<'_> {
    /// How many of its verdicts have `decision`.
    pub fn count(&self, decision: Decision) -> usize {
        self.verdicts.iter().filter(|r| decision_of(r) == Some(decision)).count()
    }
}

/// `verdicts` by side (other builds first, then arms, then earlier runs); of the verdicts of one comparison and
/// metric only the newest (a stream that several runs appended to holds each run's).
pub fn groups<'a>(verdicts: &[&'a Record]) -> Vec<Group<'a>> {
    let mut newest: BTreeMap<(Side, benchhost_record::SeriesKey, String, String), &'a Record> = BTreeMap::new();
    for record in verdicts.iter().copied().filter(|r| r.verdict.is_some()) {
        let v = record.verdict.as_ref().expect("filtered");
        let against = v.against.as_ref().map(|a| serde_json::to_string(a).unwrap_or_default()).unwrap_or_default();
        let key = (Side::of(record), benchhost_record::series(record), v.metric.clone().unwrap_or_default(), against);
        let slot = newest.entry(key).or_insert(record);
        if record.run.ts_ms >= slot.run.ts_ms {
            *slot = record;
        }
    }
    let mut by_side: BTreeMap<Side, Vec<&'a Record>> = BTreeMap::new();
    for ((side, ..), record) in newest {
        by_side.entry(side).or_default().push(record);
    }
    by_side
        .into_iter()
        .map(|(side, mut verdicts)| {
            verdicts.sort_by(|a, b| {
                let metric = |r: &Record| r.verdict.as_ref().and_then(|v| v.metric.clone()).unwrap_or_default();
                (urgency(decision_of(a)).cmp(&urgency(decision_of(b))))
                    .then_with(|| a.bench.cmp(&b.bench))
                    .then_with(|| order::variant(&a.variant, &b.variant))
                    .then_with(|| order::natural(&metric(a), &metric(b)))
            });
            let heading = heading(&side, &verdicts);
            let libraries = match &side {
                Side::Build(dir) => libraries(&verdicts, dir),
                _ => Vec::new(),
            };
            Group { heading, libraries, verdicts }
        })
        .collect()
}

fn decision_of(record: &Record) -> Option<Decision> {
    record.verdict.as_ref().map(|v| v.decision)
}

/// Where a decision is listed: what needs a look first, `no_change` last.
pub fn urgency(decision: Option<Decision>) -> u8 {
    match decision {
        Some(Decision::Failed) => 0,
        Some(Decision::Regressed) => 1,
        Some(Decision::Improved) => 2,
        Some(Decision::Inconclusive) => 3,
        Some(Decision::Undefined) => 4,
        Some(Decision::Added | Decision::Removed) => 5,
        Some(Decision::NoChange) | None => 6,
    }
}

/// `This build against ../main/target/release, paired: both in one process, samples alternating, 20
/// processes per comparison`.
fn heading(side: &Side, verdicts: &[&Record]) -> String {
    match side {
        Side::Build(dir) => format!("This build against {dir}, paired: {}", method_words(verdicts)),
        Side::Arms => format!("Between arms of a rig, paired: {}", method_words(verdicts)),
        Side::Unpaired => {
            let runs: BTreeSet<String> = verdicts
                .iter()
                .filter_map(|r| r.verdict.as_ref()?.baseline.as_ref())
                .map(|b| match (&b.run_id, &b.commit) {
                    (Some(id), Some(commit)) => format!("run {id} (commit {commit})"),
                    (Some(id), None) => format!("run {id}"),
                    (None, Some(commit)) => format!("commit {commit}"),
                    (None, None) => "an earlier run".into(),
                })
                .collect();
            let against = match runs.len() {
                1 => runs.into_iter().next().expect("one"),
                _ => "earlier runs".into(),
            };
            format!("Against {against}, unpaired: each side's newest record, from runs of their own")
        }
    }
}

/// How the verdicts were measured, in words: `both in one process, samples alternating, 20 processes per
/// comparison`, one clause per mode, and instruction counts when some are.
pub fn method_words(verdicts: &[&Record]) -> String {
    let mut processes: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut counted = false;
    for v in verdicts.iter().filter_map(|r| r.verdict.as_ref()) {
        match &v.method {
            Some(method) => processes.entry(method.mode.as_str()).or_default().push(method.processes),
            None => counted |= v.metric.as_deref() == Some(benchhost_record::INSTRUCTIONS),
        }
    }
    let mut clauses: Vec<String> = processes
        .into_iter()
        .map(|(mode, counts)| {
            let (lo, hi) = (counts.iter().min().copied().unwrap_or(0), counts.iter().max().copied().unwrap_or(0));
            let span = if lo == hi { lo.to_string() } else { format!("{lo}-{hi}") };
            let unit = if mode == "concurrent" || mode == "rounds" { "rounds" } else { "processes" };
            format!("{}, {span} {unit} per comparison", mode_words(mode))
        })
        .collect();
    if counted {
        clauses.push("instructions counted under Valgrind, exactly".into());
    }
    if clauses.is_empty() {
        return "how, the verdicts do not say".into();
    }
    clauses.join("; ")
}

/// A pairing mode (`verdict.method.mode`) in words.
fn mode_words(mode: &str) -> String {
    match mode {
        "alternate" => "both in one process, samples alternating".into(),
        "alternate_runs" => "both in one process, whole runs alternating".into(),
        "alternate_windows" => "both in one process, windows of their running workloads alternating".into(),
        "concurrent" => "both at once, a process each on a core of its own".into(),
        "rounds" => "a process each, round by round".into(),
        other => other.to_string(),
    }
}

/// Each rig's two libraries: `wal: 1a2b3c4d5e6f (this build), 7a8b9c0d1e2f (DIR)`; identical bytes say so.
fn libraries(verdicts: &[&Record], dir: &str) -> Vec<String> {
    let mut by_rig: BTreeMap<&str, (&[String], bool)> = BTreeMap::new();
    for record in verdicts {
        if let Some(method) = record.verdict.as_ref().and_then(|v| v.method.as_ref()) {
            let hashed = record.plugin.as_ref().is_some_and(|p| p.sha256.is_some());
            by_rig.entry(&record.bench).or_insert((&method.libraries, hashed));
        }
    }
    let short = |sha: &String| sha.chars().take(12).collect::<String>();
    // Both hashes are kept only when they differ: a hashed library with none kept ran the same bytes twice.
    by_rig
        .into_iter()
        .filter_map(|(rig, libraries)| match libraries {
            ([this, that], _) => Some(format!("{rig}: {} (this build), {} ({dir})", short(this), short(that))),
            (_, true) => Some(format!("{rig}: the same library bytes on both sides")),
            (_, false) => None,
        })
        .collect()
}

/// Each verdict's series as tables show it beside its bench: for a comparison of two arms what it held equal
/// and what it compared (`at rows=1000: compression lz4 vs none`), for any other the variant keys that tell
/// its rig's series apart.
pub(crate) fn verdict_names(verdicts: &[&Record]) -> Vec<String> {
    // Of one series' several verdicts (one per metric), the variant is the same: tell series apart once.
    let series: Vec<&Record> = {
        let mut seen = std::collections::BTreeSet::new();
        verdicts.iter().copied().filter(|r| seen.insert(benchhost_record::series(r))).collect()
    };
    let names: BTreeMap<_, _> = series
        .iter()
        .map(|r| benchhost_record::series(r))
        .zip(crate::report::export::shown_variants(&series))
        .collect();
    let labels = crate::report::comparison::verdict_labels(verdicts);
    (0..verdicts.len())
        .map(|i| match labels.get(&i) {
            Some(label) => label.to_string(),
            None => names.get(&benchhost_record::series(verdicts[i])).cloned().unwrap_or_default(),
        })
        .collect()
}

/// A verdict's ratio as a change with its CI95, in percent: `+1.20% [+0.40%, +2.00%]`, `+1.20% [?]` when two
/// runs were compared without knowing how far their runs differ, or `-` without a ratio.
pub(crate) fn change(v: &benchhost_record::Verdict) -> String {
    match (v.ratio, v.ci95) {
        (Some(r), Some([lo, hi])) => {
            format!("{:+.2}% [{:+.2}%, {:+.2}%]", (r - 1.0) * 100.0, (lo - 1.0) * 100.0, (hi - 1.0) * 100.0)
        }
        (Some(r), None) => format!("{:+.2}% [?]", (r - 1.0) * 100.0),
        _ => "-".into(),
    }
}

/// The line under a table of comparisons across runs when some had no interval (`[?]`): why, and what decides
/// instead.
pub(crate) fn unknown_spread_line(verdicts: &[&Record]) -> Option<String> {
    let between = |r: &&&Record| r.verdict.as_ref().and_then(|v| v.between_runs.clone());
    let series_where = |unknown: &dyn Fn(&benchhost_record::BetweenRuns) -> bool| {
        let found = verdicts.iter().filter(|r| between(r).is_some_and(|b| unknown(&b)));
        found.map(|r| benchhost_record::series(r)).collect::<BTreeSet<_>>().len()
    };
    let unsettled = series_where(&|b| b.unsettled.is_some());
    let short = series_where(&|b| b.sd.is_none() && b.unsettled.is_none());
    let mut why = Vec::new();
    if short > 0 {
        why.push(format!(
            "how far two runs of {short} series differ on this machine is not known (fewer than {} earlier runs \
             here)",
            crate::analysis::between_runs::MIN_RUNS
        ));
    }
    if unsettled > 0 {
        why.push(format!(
            "{unsettled} series ran as its history did not (a run disturbed, or a baseline from a slow or fast \
             phase; the notes say which)"
        ));
    }
    (!why.is_empty()).then(|| {
        format!("[?]: {}, so they are inconclusive; `run --against` pairs two builds and decides", why.join("; "))
    })
}

/// A verdict's decision, with its reason when it has one (`undefined: both values are 0 ...`) and who accepted it
/// when an acknowledgement covers it (`regressed, accepted: a new check (ann, 2026-12-07)`).
pub(crate) fn decision_text(v: &benchhost_record::Verdict) -> String {
    let decision = match (&v.reason, v.decision) {
        (Some(why), benchhost_record::Decision::Undefined) => format!("undefined: {why}"),
        _ => v.decision.name().to_string(),
    };
    match &v.accepted {
        Some(accepted) => format!("{decision}, {}", accepted.said()),
        None => decision,
    }
}

/// `2 regressed, 1 improved, 21 no_change`: the group's decisions counted, in the order they are listed.
pub fn counts(group: &Group<'_>) -> String {
    let mut seen: Vec<Decision> = group.verdicts.iter().filter_map(|r| decision_of(r)).collect();
    seen.dedup();
    seen.iter().map(|&d| format!("{} {}", group.count(d), d.name())).collect::<Vec<_>>().join(", ")
}

/// The threshold of every verdict of `group`, when they share one: `±3%`.
pub(crate) fn threshold(group: &Group<'_>) -> Option<String> {
    let all: BTreeSet<u64> =
        group.verdicts.iter().filter_map(|r| Some(r.verdict.as_ref()?.threshold.to_bits())).collect();
    let [one] = all.into_iter().collect::<Vec<_>>()[..] else { return None };
    Some(format!("±{}%", (f64::from_bits(one) * 1e5).round() / 1e3))
}

/// One group's rows: series (bench and what tells it apart), metric, change, detectable, decision.
fn rows(verdicts: &[&Record]) -> Vec<[String; 5]> {
    let names = verdict_names(verdicts);
    verdicts
        .iter()
        .zip(names)
        .filter_map(|(record, name)| {
            let v = record.verdict.as_ref()?;
            let series = format!("{} {name}", record.bench).trim().to_string();
            let detectable = v.detectable.map_or("-".into(), crate::report::format::detectable);
            let metric = v.metric.clone().unwrap_or_else(|| "-".into());
            Some([series, metric, change(v), detectable, decision_text(v)])
        })
        .collect()
}

/// A group's rows (named among all of them): those that need a look, and the `no_change` ones.
fn split_rows(group: &Group<'_>) -> (Vec<[String; 5]>, Vec<[String; 5]>) {
    let mut look = rows(&group.verdicts);
    let split = group.verdicts.iter().position(|r| decision_of(r) == Some(Decision::NoChange));
    let quiet = look.split_off(split.unwrap_or(look.len()));
    (look, quiet)
}

/// The Markdown report's first section: every group under its heading, what needs a look in a table, the
/// `no_change` rows folded under a count. Empty without verdicts.
pub fn markdown(groups: &[Group<'_>]) -> String {
    if groups.is_empty() {
        return String::new();
    }
    let cell = |text: &str| text.replace('|', "\\|").replace(['\r', '\n'], " ");
    let table = |rows: Vec<[String; 5]>| {
        let mut out =
            String::from("| Series | Metric | Change [CI95] | Detectable | Decision |\n|---|---|---|---|---|\n");
        for row in &rows {
            out += &format!("| {} |\n", row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
        }
        out
    };
    let mut out = String::from("## Verdicts\n\n");
    for group in groups {
        out += &format!("### {}\n\n", cell(&group.heading));
        if !group.libraries.is_empty() {
            out += &format!("Libraries (SHA-256): {}.\n\n", cell(&group.libraries.join("; ")));
        }
        let threshold = threshold(group).map(|t| format!(" (threshold {t})")).unwrap_or_default();
        out += &format!("{}{threshold}.\n\n", counts(group));
        let (look, quiet) = split_rows(group);
        if !look.is_empty() {
            out += &table(look);
            out.push('\n');
        }
        if !quiet.is_empty() {
            out +=
                &format!("<details><summary>{} no_change</summary>\n\n{}\n</details>\n\n", quiet.len(), table(quiet));
        }
        for (series, line) in crate::report::comparison::where_lines(&group.verdicts) {
            out += &format!("- where {}: {}\n", cell(&series), cell(&line));
        }
    }
    out
}

#[cfg(test)]
#[path = "verdicts_tests.rs"]
mod tests;
