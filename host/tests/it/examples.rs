//! Every example a user is shown runs, not only parses: the `benchhost` command lines of the README's, the
//! guide's and `results/README.md`'s shell blocks and of every command's `--help`, in a sandbox that holds the
//! repository's `rigs.toml`, its committed results, and the builds and files the examples name (`../main/
//! target/release`, `old.jsonl`, a warehouse `wh`). `list`, `plan`, `show`, `report`, `query`, `compare`,
//! `verify`, `merge`, `trend`, `publish` to a directory and the rest run as written; a `run` is planned as
//! written (`plan` with its selection: a matrix the run would refuse is refused there too), and run with
//! `--quick` when it selects only the cheap `wal` rig (paired runs on 2 processes). What needs a server, a
//! build of its own, a rig of the user's or minutes (`bisect`, `calibrate`) is named and skipped.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Sandbox, bin, workspace_plugins};

mod shell;
use shell::commands_of_markdown;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// An example: where it is shown, and its words after the program.
#[derive(Debug, Clone)]
struct Example {
    shown: String,
    args: Vec<String>,
}

/// README.md, results/README.md and every page of the guide.
fn documents() -> Vec<PathBuf> {
    fn pages(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pages(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = vec![repo().join("README.md"), repo().join("results/README.md")];
    pages(&repo().join("docs/src"), &mut out);
    out
}

/// The `Examples:` of every command's `--help`.
fn help_examples() -> Vec<Example> {
    let top = Command::new(bin()).arg("--help").output().unwrap();
    let top = String::from_utf8(top.stdout).unwrap();
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 15, "benchhost --help lists its commands: {commands:?}");
    let mut out = Vec::new();
    for command in commands {
        let help = Command::new(bin()).args([&command, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&help.stdout).into_owned();
        let block: String = help
            .lines()
            .skip_while(|l| !l.starts_with("Examples:"))
            .skip(1)
            .map(|l| format!("{}\n", l.trim()))
            .collect();
        for args in commands_of_markdown(&format!("```sh\n{block}```\n")) {
            out.push(Example { shown: format!("`benchhost {command} --help`"), args });
        }
    }
    out
}

/// Every example, once (the first place it is shown).
fn examples() -> Vec<Example> {
    let mut all = Vec::new();
    for doc in documents() {
        let shown = doc.strip_prefix(repo()).unwrap_or(&doc).display().to_string();
        let text = std::fs::read_to_string(&doc).unwrap();
        all.extend(commands_of_markdown(&text).into_iter().map(|args| Example { shown: shown.clone(), args }));
    }
    all.extend(help_examples());
    let mut seen = BTreeSet::new();
    all.retain(|e| seen.insert(e.args.clone()));
    all
}

/// `run`'s options: each with whether it takes a value, and which of them `plan` does not take; from the two
/// `--help`s.
struct RunOptions {
    all: Vec<(String, bool)>,
    only: BTreeSet<String>,
}

fn run_options() -> RunOptions {
    let options = |command: &str| -> Vec<(String, bool)> {
        let help = Command::new(bin()).args([command, "--help"]).output().unwrap();
        let flag = regex::Regex::new(r"^\s+(?:-\w, )?(--[a-z-]+)( <)?").unwrap();
        String::from_utf8_lossy(&help.stdout)
            .lines()
            .filter_map(|l| flag.captures(l).map(|c| (c[1].to_string(), c.get(2).is_some())))
            .collect()
    };
    let plan: BTreeSet<String> = options("plan").into_iter().map(|(f, _)| f).collect();
    let all = options("run");
    let only = all.iter().map(|(f, _)| f.clone()).filter(|f| !plan.contains(f)).collect();
    RunOptions { all, only }
}

impl RunOptions {
    /// Whether `word` (an option, maybe `--flag=value`) is followed by its value.
    fn takes_value(&self, word: &str) -> bool {
        !word.contains('=') && self.all.iter().any(|(f, value)| f == word && *value)
    }

    /// The rigs a `run` selects: its `--plugin`s, else its FILTER's first word; none for the whole matrix.
    fn selected_rigs(&self, args: &[String]) -> Vec<String> {
        let (mut plugins, mut filter, mut words) = (Vec::new(), None, args.iter().skip(1));
        while let Some(w) = words.next() {
            match w.as_str() {
                "--plugin" => plugins.extend(words.next().cloned()),
                _ if self.takes_value(w) => drop(words.next()),
                _ if w.starts_with('-') => {}
                _ => filter = filter.or(Some(w.clone())),
            }
        }
        if plugins.is_empty() {
            plugins.extend(filter.map(|f| f.split(['.', ' ']).next().unwrap_or("").to_string()));
        }
        plugins
    }
}

/// How an example is tried.
enum Trial {
    /// Run as written (`args`), in the sandbox; `gate`: it may exit 1 (`--fail-on`).
    Run { args: Vec<String>, gate: bool },
    /// Run (`args`, as [`Trial::Run`]) when the plan just before selected cells of the cheap `wal` rig only.
    IfOnlyWal { args: Vec<String>, gate: bool },
    /// Not run here, and why.
    Skip(&'static str),
}

/// The trials of one example.
fn trials(example: &Example, options: &RunOptions) -> Vec<Trial> {
    let args = &example.args;
    let server = args
        .iter()
        .any(|a| ["postgres://", "rest://", "s3://"].iter().any(|s| a.starts_with(s) || a.contains(&format!("'{s}"))));
    let gate = args.iter().any(|a| a == "--fail-on");
    match args.first().map(String::as_str) {
        _ if server => vec![Trial::Skip("needs a server (PostgreSQL, a REST catalog, S3)")],
        Some("bisect") => vec![Trial::Skip("builds commits in worktrees of its own (tests/it/bisect.rs)")],
        Some("build") => vec![Trial::Skip("builds a workspace with cargo (tests/it/layouts.rs)")],
        Some("calibrate") => vec![Trial::Skip("calibrates for minutes (tests of `calibrate`)")],
        Some("check") => vec![Trial::Skip("checks the user's own rig library")],
        Some("new-rig") => vec![Trial::Skip("writes and builds a crate (tests/it/authoring.rs)")],
        Some("import") => vec![Trial::Skip("needs a Criterion output directory")],
        Some("accept") if args.iter().any(|a| a == "--revoke") => {
            vec![Trial::Skip("names an acknowledgement by the id its accept drew (tests/it/accept.rs)")]
        }
        Some("run") if options.selected_rigs(args).iter().any(|r| r == "my_rig") => {
            vec![Trial::Skip("runs the user's own rig (tests/it/authoring.rs)")]
        }
        Some("run") => {
            // As `plan`: the selection and its matrix, without what only a run does.
            let mut planned = vec!["plan".to_string()];
            let mut rest = args[1..].iter();
            while let Some(a) = rest.next() {
                let name = a.split('=').next().unwrap_or(a);
                match (options.only.contains(name), options.takes_value(a)) {
                    (true, true) => drop(rest.next()),
                    (true, false) => {}
                    (false, _) => planned.push(a.clone()),
                }
            }
            let mut quick = args.clone();
            if !quick.iter().any(|a| a == "--quick") {
                quick.push("--quick".into());
            }
            let paired = quick.iter().any(|a| a.starts_with("--interleave") || a == "--against");
            if paired && !quick.iter().any(|a| a == "--rounds") {
                quick.extend(["--rounds".into(), "2".into()]);
            }
            vec![Trial::Run { args: planned, gate: false }, Trial::IfOnlyWal { args: quick, gate }]
        }
        _ => vec![Trial::Run { args: args.clone(), gate }],
    }
}

/// The words of `args` with each `DIR/*.EXT` expanded in `cwd`, as the shell would.
fn expanded(args: &[String], cwd: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for a in args {
        match a.split_once("/*") {
            Some((dir, ext)) if !a.contains(' ') => {
                let mut found: Vec<String> = std::fs::read_dir(cwd.join(dir))
                    .unwrap()
                    .filter_map(|e| e.ok())
                    .map(|e| format!("{dir}/{}", e.file_name().to_string_lossy()))
                    .filter(|name| name.ends_with(ext))
                    .collect();
                found.sort();
                out.extend(found);
            }
            _ => out.push(a.clone()),
        }
    }
    out
}

/// The sandbox: the repository's rigs.toml and committed results, this build's plugins where the examples
/// look for builds, a baseline `main`, a nightly stream, three shards, two streams to compare and a warehouse.
fn sandbox() -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::new();
    let work = sandbox.path().join("work");
    std::fs::create_dir_all(work.join("results")).unwrap();
    std::fs::copy(repo().join("rigs.toml"), work.join("rigs.toml")).unwrap();
    let mut nightly = String::new();
    for entry in std::fs::read_dir(repo().join("results")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "jsonl") && !path.ends_with("results.jsonl") {
            std::fs::copy(&path, work.join("results").join(path.file_name().unwrap())).unwrap();
            nightly += &std::fs::read_to_string(&path).unwrap();
        }
    }
    std::fs::write(work.join("nightly.jsonl"), nightly).unwrap();
    for builds in [work.join("target"), sandbox.path().join("main/target"), sandbox.path().join("base/target")] {
        std::fs::create_dir_all(&builds).unwrap();
        std::os::unix::fs::symlink(workspace_plugins(), builds.join("release")).unwrap();
    }
    let setup = |args: &[&str]| {
        let out = Command::new(bin())
            .args(args)
            .current_dir(&work)
            .env("BENCHHOST_PLUGIN_PATH", workspace_plugins())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "sandbox: benchhost {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    setup(&["run", "--plugin", "wal", "--quick", "-q", "--save-baseline", "main"]);
    for file in ["old.jsonl", "new.jsonl"] {
        setup(&["run", "--plugin", "wal", "--quick", "-q", "--out", file]);
    }
    for i in 1..=3 {
        let (shard, out) = (format!("{i}/3"), format!("shard-{i}.jsonl"));
        setup(&["run", "--plugin", "wal", "--quick", "-q", "--shard", &shard, "--run-id", "nightly-1", "--out", &out]);
    }
    setup(&["publish", "results/results.jsonl", "results/wal.jsonl", "--warehouse", "warehouse"]);
    // A pull request's verdicts as its job left them (`bench-results`): wal's zstd cell 5% slower, to accept.
    std::fs::create_dir_all(work.join("bench-results")).unwrap();
    let verdict = r#"{"schema":1,"bench":"wal","kind":"verdict","run":{"ts_ms":1796000000000,"host":"h","cpu":"c","cores":2,"os":"linux/x86_64","profile":"release"},"variant":{"compression":"zstd","rows":1000},"note":"regressed","verdict":{"metric":"roundtrip_time","test":"paired","ratio":1.05,"ci95":[1.04,1.06],"higher_is_better":false,"threshold":0.03,"decision":"regressed"}}"#;
    std::fs::write(work.join("bench-results/pr.jsonl"), format!("{verdict}\n")).unwrap();
    (sandbox, work)
}

#[test]
fn every_example_in_the_docs_and_the_help_runs() {
    let (sandbox, work) = sandbox();
    let options = run_options();
    assert!(options.only.contains("--against") && options.takes_value("--against"), "run's own options");
    let mut all = examples();
    // Runs first (they make `pr.jsonl`), then publishing (the warehouse `wh`), then what reads them.
    all.sort_by_key(|e| match e.args.first().map(String::as_str) {
        Some("run") => 0,
        Some("publish") => 1,
        _ => 2,
    });
    let (mut ran, mut skipped, mut failures) = (0, Vec::new(), Vec::new());
    for example in &all {
        // The rigs of the cells the last `plan` listed (`   INDEX  RIG key=value ...`, then `N cells`).
        let mut planned_rigs = BTreeSet::new();
        for trial in trials(example, &options) {
            let (args, gate) = match trial {
                Trial::Skip(why) => {
                    skipped.push(format!("{}: benchhost {}: {why}", example.shown, example.args.join(" ")));
                    continue;
                }
                Trial::IfOnlyWal { .. } if planned_rigs.iter().any(|r| r != "wal") || planned_rigs.is_empty() => {
                    continue;
                }
                Trial::Run { args, gate } | Trial::IfOnlyWal { args, gate } => (expanded(&args, &work), gate),
            };
            let out = Command::new(bin())
                .args(&args)
                .current_dir(&work)
                .env("BENCHHOST_PLUGIN_PATH", workspace_plugins())
                // `accept` names who accepts from git's config, as a user's machine has it.
                .envs([("GIT_CONFIG_COUNT", "1"), ("GIT_CONFIG_KEY_0", "user.name"), ("GIT_CONFIG_VALUE_0", "Ann")])
                .output()
                .unwrap();
            ran += 1;
            if args.first().is_some_and(|a| a == "plan") {
                let listed = String::from_utf8_lossy(&out.stdout).into_owned();
                planned_rigs = listed
                    .lines()
                    .filter(|l| l.starts_with(' '))
                    .filter_map(|l| {
                        let mut w = l.split_whitespace();
                        w.next().filter(|i| i.parse::<usize>().is_ok()).and(w.next()).map(str::to_owned)
                    })
                    .collect();
            }
            let fine = out.status.success() || (gate && out.status.code() == Some(1));
            if !fine {
                let stderr = String::from_utf8_lossy(&out.stderr);
                failures.push(format!(
                    "{}: benchhost {}\n  ran as: benchhost {}\n  exit {:?}: {}",
                    example.shown,
                    example.args.join(" "),
                    args.join(" "),
                    out.status.code(),
                    stderr.trim().lines().last().unwrap_or("")
                ));
            }
        }
    }
    drop(sandbox);
    assert!(failures.is_empty(), "examples that do not run:\n{}", failures.join("\n"));
    assert!(ran >= 50, "only {ran} examples ran; skipped:\n{}", skipped.join("\n"));
    eprintln!("{ran} example runs; skipped:\n{}", skipped.join("\n"));
}

#[test]
fn a_run_example_is_planned_as_written_and_then_run_quick_if_it_plans_only_the_cheap_rig() {
    let options = RunOptions {
        all: ["--against", "--fail-on", "--out", "--plugin", "--set"].map(|f| (f.to_string(), true)).into(),
        only: ["--against", "--fail-on", "--out"].map(str::to_owned).into(),
    };
    let example = |line: &str| Example { shown: "t".into(), args: line.split(' ').map(str::to_owned).collect() };
    let shown = |trials: Vec<Trial>| -> Vec<String> {
        trials
            .into_iter()
            .map(|t| match t {
                Trial::Run { args, gate } => format!("{}{}", args.join(" "), if gate { " (gate)" } else { "" }),
                Trial::IfOnlyWal { args, gate } => {
                    format!("if only wal: {}{}", args.join(" "), if gate { " (gate)" } else { "" })
                }
                Trial::Skip(why) => why.to_string(),
            })
            .collect()
    };
    let wal =
        shown(trials(&example("run --plugin wal --against ../main/target/release --fail-on regressed"), &options));
    assert_eq!(
        wal,
        [
            "plan --plugin wal",
            "if only wal: run --plugin wal --against ../main/target/release --fail-on regressed --quick --rounds 2 (gate)"
        ]
    );
    // regression: `run --interleave --fail-on regressed` (the whole matrix) is refused on wal; as a plan it is too.
    assert_eq!(shown(trials(&example("run --interleave --fail-on regressed"), &options))[0], "plan --interleave");
    assert_eq!(
        shown(trials(&example("run --plugin my_rig --quick"), &options)),
        ["runs the user's own rig (tests/it/authoring.rs)"]
    );
}
