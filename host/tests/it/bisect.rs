//! `benchhost bisect` on a scratch repository: a generated rig crate with six commits after GOOD, one of which
//! does not build and one of which adds a slow function to the rig's iteration; exact counts decide.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::Sandbox;
use benchhost_record::{Decision, Kind};
use serde_json::Value;

/// The scratch repository: GOOD, then commits 0..6 (commit 2 does not build, commit 4 is the culprit, 5 is BAD).
struct Scratch {
    sandbox: Sandbox,
    repo: PathBuf,
    good: String,
    commits: Vec<String>,
    target: PathBuf,
}

const CULPRIT: usize = 4;
const BROKEN: usize = 2;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn scratch() -> Scratch {
    let sandbox = Sandbox::new();
    let repo = sandbox.path().join("repo");
    sandbox.cmd().args(["new-rig", "bisect_rig", "--path"]).arg(&repo).assert().success();
    for args in
        [&["init", "-q", "-b", "main"][..], &["config", "user.email", "t@example.com"], &["config", "user.name", "t"]]
    {
        git(&repo, args);
    }
    std::fs::write(repo.join(".gitignore"), "target/\n").unwrap();
    let commit = |message: &str| {
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", message]);
        git(&repo, &["rev-parse", "HEAD"])
    };
    // One target directory with the authoring test's, so abi_stable's release build is paid once; a crate of
    // another name, so that the two tests' libraries (target/release/lib*.so) never replace each other.
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("new-rig-target");
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let built = Command::new(cargo)
        .args(["build", "--release", "--quiet"])
        .current_dir(&repo)
        .env("CARGO_TARGET_DIR", &target)
        .status();
    assert!(built.unwrap().success(), "the user's own build (its Cargo.lock is committed)");
    let good = commit("the generated rig");
    let lib = repo.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).unwrap();
    let slow = "self.iterations += 1;\n        std::hint::black_box(injected_regression_work(&self.values));";
    let slow_fn = "\n#[inline(never)]\nfn injected_regression_work(values: &[u64]) -> u64 {\n    values.iter().map(|v| v ^ 1).sum()\n}\n";
    let mut commits = Vec::new();
    for i in 0..6 {
        let mut text = source.clone();
        if i >= CULPRIT {
            text = text.replace("self.iterations += 1;", slow) + slow_fn;
        }
        if i == BROKEN {
            text += "\nfn broken() -> u64 { \"not a number\" }\n";
        }
        std::fs::write(&lib, text + &format!("\n// revision {i}\n")).unwrap();
        commits.push(commit(&format!("revision {i}")));
    }
    Scratch { sandbox, repo, good, commits, target }
}

impl Scratch {
    /// `benchhost bisect GOOD BAD ...` in the repository, its cache in the sandbox (`cache`).
    fn bisect(&self, good: &str, bad: &str, cache: &str, json: bool) -> Command {
        let mut cmd = Command::new(crate::support::bin());
        cmd.current_dir(&self.repo).env_remove("BENCHHOST_PLUGIN_PATH");
        cmd.env("XDG_CACHE_HOME", self.sandbox.path().join(cache)).env("CARGO_TARGET_DIR", &self.target);
        cmd.args(["bisect", good, bad, "--plugin", "bisect_rig", "--quick", "--instructions", "--out"]);
        cmd.arg(self.sandbox.path().join("r.jsonl")).arg("--plugin-dir").arg(self.target.join("release"));
        if json {
            cmd.arg("--json");
        }
        cmd
    }

    fn worktrees(&self) -> usize {
        git(&self.repo, &["worktree", "list"]).lines().count()
    }
}

#[test]
fn bisect_names_the_culprit_steps_around_a_broken_commit_reuses_builds_and_cleans_up_on_ctrl_c() {
    let s = scratch();
    let head = git(&s.repo, &["rev-parse", "HEAD"]);
    let users_library = std::fs::read(s.target.join("release/libbisect_rig.so")).unwrap();
    let out = s.bisect(&s.good, &s.commits[5], "cache", true).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["first_bad"], s.commits[CULPRIT], "{answer:#}\n{stderr}");
    assert_eq!(answer["subject"], format!("revision {CULPRIT}"));
    assert_eq!(answer["skipped"], serde_json::json!([s.commits[BROKEN]]), "the broken commit is skipped");
    assert_eq!(answer["steps"], 4, "2 (skipped), 1, 3, 4");
    let verdict = &answer["verdict"]["verdict"];
    assert_eq!((verdict["metric"].as_str(), verdict["decision"].as_str()), (Some("instructions"), Some("regressed")));
    assert_eq!(verdict["baseline"]["commit"], s.commits[CULPRIT - 1], "against its parent");
    // Where: the function the culprit added, first among those whose count changed.
    let first = verdict["functions"][0]["name"].as_str().unwrap_or_default();
    assert!(first.ends_with("injected_regression_work"), "{:#}", verdict["functions"]);
    assert_eq!(verdict["functions"][0]["before"], 0.0);
    assert!(verdict["functions_explain"].as_f64().unwrap() > 0.9, "{verdict:#}");
    assert!(stderr.contains("does not build: error"), "{stderr}");

    // Every step's verdicts are in the stream, marked, with both commits.
    let (records, problems) = s.sandbox.records("r.jsonl");
    assert!(problems.is_empty(), "{problems:?}");
    assert!(records.iter().all(|r| r.kind == Kind::Verdict && r.run.trigger.as_deref() == Some("bisect")));
    let counted: Vec<(&str, &str, Decision)> = records
        .iter()
        .filter(|r| r.verdict.as_ref().unwrap().metric.as_deref() == Some("instructions"))
        .map(|r| {
            let v = r.verdict.as_ref().unwrap();
            (r.run.commit.as_deref().unwrap(), v.baseline.as_ref().unwrap().commit.as_deref().unwrap(), v.decision)
        })
        .collect();
    let c = &s.commits;
    let expected = [
        (c[5].as_str(), s.good.as_str(), Decision::Regressed),
        (c[1].as_str(), s.good.as_str(), Decision::NoChange),
        (c[3].as_str(), s.good.as_str(), Decision::NoChange),
        (c[4].as_str(), s.good.as_str(), Decision::Regressed),
        (c[4].as_str(), c[3].as_str(), Decision::Regressed),
    ];
    assert_eq!(counted, expected);
    // The user's checkout is as it was, and the bisection's worktree is gone.
    assert_eq!((git(&s.repo, &["rev-parse", "HEAD"]), git(&s.repo, &["status", "--porcelain"])), (head, String::new()));
    assert_eq!(s.worktrees(), 1);
    let library = std::fs::read(s.target.join("release/libbisect_rig.so")).unwrap();
    assert!(library == users_library, "the user's own build is back in the shared target directory");

    // A regression that is not there: nothing to bisect, and both builds come from the cache.
    let out = s.bisect(&s.good, &s.commits[1], "cache", false).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.starts_with("BAD is not regressed against GOOD; nothing to bisect"), "{stdout}");
    assert!(!stderr.contains("bisect: building"), "finished builds are reused: {stderr}");

    // Ctrl-C after the confirmation (a fresh cache, so the steps build): exit 130, the worktree removed, every
    // verdict already written kept.
    let before = s.sandbox.records("r.jsonl").0.len();
    let mut child =
        s.bisect(&s.good, &s.commits[5], "fresh", false).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let started = Instant::now();
    while s.sandbox.records("r.jsonl").0.len() == before {
        assert!(started.elapsed() < Duration::from_secs(240), "the confirmation ends");
        assert!(child.try_wait().unwrap().is_none(), "bisect ended before its confirmation was written");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kept = s.sandbox.records("r.jsonl").0.len();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(s.sandbox.records("r.jsonl").0.len() >= kept, "no verdict lost");
    assert_eq!(s.worktrees(), 1, "the worktree is removed");
    assert_eq!(git(&s.repo, &["status", "--porcelain"]), "");
}

#[test]
fn bisect_outside_a_git_checkout_says_so_in_one_line() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .cmd()
        .args(["bisect", "HEAD~1", "HEAD", "wal"])
        .env("GIT_CEILING_DIRECTORIES", sandbox.path())
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("bisect runs inside a git checkout of the rigs' sources"), "{stderr}");
}
