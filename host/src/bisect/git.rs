//! The repository a bisection walks: its commits between GOOD and BAD, and the packages of a checked-out
//! commit (from `cargo metadata`), read with the `git` and `cargo` the user has.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, bail};
use serde_json::Value;

/// A git checkout and the bisection cache that belongs to it.
pub struct Repo {
    /// The top of the working tree.
    pub root: PathBuf,
    /// Where the current directory is inside it (`""` at the top), so the cargo workspace is found at the same
    /// place in a worktree.
    pub prefix: PathBuf,
    /// The cache of this repository's bisections: its worktree, builds and steps.
    pub cache: PathBuf,
}

impl Repo {
    /// The repository of the current directory.
    pub fn here() -> Result<Repo> {
        let git_here = |args: &[&str]| run_git(Path::new("."), args);
        let root = PathBuf::from(
            git_here(&["rev-parse", "--show-toplevel"])
                .map_err(|why| anyhow::anyhow!("bisect runs inside a git checkout of the rigs' sources: {why}"))?,
        );
        let prefix = PathBuf::from(git_here(&["rev-parse", "--show-prefix"])?);
        let hash = root.to_string_lossy().bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3) // FNV-1a: a stable name per checkout
        });
        let name = root.file_name().map_or("repo".into(), |n| n.to_string_lossy().into_owned());
        let cache = cache_home().join("benchhost").join("bisect").join(format!("{name}-{hash:016x}"));
        Ok(Repo { root, prefix, cache })
    }

    /// `git ARGS` at the top of the checkout; its stdout, trimmed.
    pub fn git(&self, args: &[&str]) -> Result<String> {
        run_git(&self.root, args)
    }

    /// `git ARGS` in `dir` (a worktree).
    pub fn git_in(&self, dir: &Path, args: &[&str]) -> Result<String> {
        run_git(dir, args)
    }

    /// The full hash of revision `rev`, which `what` names in errors (`GOOD`).
    pub fn resolve(&self, what: &str, rev: &str) -> Result<String> {
        self.git(&["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
            .map_err(|_| anyhow::anyhow!("{what} `{rev}` is not a commit of {}", self.root.display()))
    }

    /// A commit's subject line.
    pub fn subject(&self, commit: &str) -> String {
        self.git(&["log", "-1", "--format=%s", commit]).unwrap_or_default()
    }

    /// The commits after `good` up to `bad`, oldest first, along the first parents (as `git bisect
    /// --first-parent`: a merged branch counts as its merge).
    pub fn between(&self, good: &str, bad: &str) -> Result<Vec<String>> {
        if good == bad || self.git(&["merge-base", "--is-ancestor", good, bad]).is_err() {
            bail!("GOOD {good} is not an ancestor of BAD {bad}: bisect needs GOOD before BAD in BAD's history");
        }
        let list =
            self.git(&["rev-list", "--reverse", "--first-parent", "--ancestry-path", &format!("{good}..{bad}")])?;
        Ok(list.lines().map(str::to_owned).collect())
    }
}

/// A package of a checked-out workspace: its rigs (`[package.metadata.benchhost] rigs`), its cdylib and its
/// bench targets.
#[derive(Debug)]
pub struct Package {
    pub name: String,
    pub rigs: Vec<String>,
    /// The cdylib's library name (`rig_wal` for `librig_wal.so`), if it has one.
    pub cdylib: Option<String>,
    /// Each bench target's crate name (its rig's, under benchhost-criterion or benchhost-divan) and source.
    pub benches: Vec<(String, PathBuf)>,
}

/// The packages of the cargo workspace in `dir`.
pub fn packages(dir: &Path) -> Result<Vec<Package>, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!("cargo metadata failed: {}", stderr.lines().next().unwrap_or("").trim()));
    }
    let json: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array).into_iter().flatten().filter_map(|s| s.as_str().map(str::to_owned)).collect()
    };
    let packages = json["packages"].as_array().cloned().unwrap_or_default();
    Ok(packages
        .iter()
        .map(|p| Package {
            name: p["name"].as_str().unwrap_or_default().to_owned(),
            rigs: strings(p.pointer("/metadata/benchhost/rigs")),
            cdylib: p["targets"].as_array().into_iter().flatten().find_map(|t| {
                strings(t.get("kind"))
                    .iter()
                    .any(|k| k == "cdylib")
                    .then(|| t["name"].as_str().unwrap_or("").replace('-', "_"))
            }),
            benches: p["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|t| strings(t.get("kind")).iter().any(|k| k == "bench"))
                .filter_map(|t| {
                    let source = Path::new(t["src_path"].as_str()?);
                    let source = source.canonicalize().unwrap_or_else(|_| source.to_owned());
                    Some((t["name"].as_str()?.replace('-', "_"), source))
                })
                .collect(),
        })
        .collect())
}

fn run_git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git").args(args).current_dir(dir).output()?;
    if !out.status.success() {
        bail!("git {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// `$XDG_CACHE_HOME`, else `~/.cache`.
fn cache_home() -> PathBuf {
    match (std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME")) {
        (Some(cache), _) if !cache.is_empty() => PathBuf::from(cache),
        (_, Some(home)) => PathBuf::from(home).join(".cache"),
        _ => std::env::temp_dir(),
    }
}
