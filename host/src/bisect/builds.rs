//! The builds a bisection measures: each commit checked out into a git worktree of the bisection's own (never
//! the user's working tree or index), only the plugin crates of the selected rigs built into one shared target
//! directory, and their libraries kept per commit under the cache directory, so a second bisection reuses
//! every finished build.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::bisect::git::{Package, Repo};

/// The layouts made of each build of a bisection: seeds 1 to 32 serve a step's `--layouts auto` (its pools of
/// 16 a side, odd seeds on one side and even on the other), whichever side the build is on.
pub const LAYOUT_SEEDS: u64 = 2 * crate::analysis::layouts::POOL as u64;

/// Builds commits of `repo`, one worktree at a time.
pub struct Builder<'a> {
    repo: &'a Repo,
    /// The rigs to build, each with the library name its plugin has in this build (`librig_wal.so` → `rig_wal`),
    /// for a crate that does not list its rigs in `[package.metadata.benchhost]`.
    rigs: Vec<(String, Option<String>)>,
    /// Cargo's profile (`release`).
    profile: String,
    /// The worktree, once made: removed by [`Builder::remove_worktree`].
    worktree: Option<PathBuf>,
    /// Seconds spent in cargo.
    pub build_s: f64,
    /// Builds found finished in the cache.
    pub reused: u32,
    /// The libraries cargo's build of a commit overwrites in the target directory (`target/release/librig_wal.so`,
    /// which the user's own build put there), each with the copy that puts it back at the end.
    saved: Vec<(PathBuf, PathBuf)>,
}

impl<'a> Builder<'a> {
    /// A builder of `rigs` (with their library names here) in `profile`.
    pub fn new(repo: &'a Repo, rigs: Vec<(String, Option<String>)>, profile: &str) -> Builder<'a> {
        Builder { repo, rigs, profile: profile.into(), worktree: None, build_s: 0.0, reused: 0, saved: Vec::new() }
    }

    /// The directory of `commit`'s plugin libraries, built now or before; `Ok(Err(why))` when the commit does
    /// not build (a commit to skip); `Err` when the bisection cannot go on (git refuses a worktree).
    pub fn build(&mut self, commit: &str) -> Result<Result<PathBuf, String>> {
        let dir = self.repo.cache.join("builds").join(&self.profile).join(commit);
        let done = dir.join(format!("done-{}", self.key()));
        if done.is_file() {
            self.reused += 1;
            return Ok(Ok(dir));
        }
        let tree = self.checkout(commit)?;
        let crates = match self.crates(&tree) {
            Ok(crates) => crates,
            Err(why) => return Ok(Err(why)),
        };
        let target = target_dir(&self.repo.cache);
        self.save_libraries(&target, &crates)?;
        let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        cargo.args(["build", "--profile", &self.profile]).current_dir(&tree).env("CARGO_TARGET_DIR", &target);
        // Under `benchhost build`'s rustc wrapper: each library's link is kept, to make its layouts from.
        let exe = std::env::current_exe().context("locating benchhost (cargo's rustc wrapper)")?;
        cargo.env("RUSTC_WORKSPACE_WRAPPER", exe).env(crate::plugin::relink::WRAPPER_ENV, "1");
        for package in &crates {
            cargo.args(["-p", &package.package]);
        }
        let benches: Vec<&Path> = crates.iter().filter_map(|c| c.bench.as_deref()).collect();
        if !benches.is_empty() {
            // As `benchhost build --benches`: each bench target compiled again as its plugin. Touched first: a
            // target cargo finds fresh is not compiled, and its plugin would be another commit's or build's.
            for source in &benches {
                std::fs::File::options().write(true).open(source)?.set_modified(std::time::SystemTime::now())?;
            }
            let sources: Vec<String> = benches.iter().map(|s| s.display().to_string()).collect();
            cargo.arg("--benches").env(crate::plugin::relink::BENCHES_ENV, sources.join("\n"));
        }
        eprintln!("bisect: building {} ({}) at {}", short(commit), names(&crates), self.repo.subject(commit));
        let started = std::time::Instant::now();
        let status = crate::bisect::child::run(cargo.stdout(Stdio::null()).stderr(Stdio::piped()));
        self.build_s += started.elapsed().as_secs_f64();
        let output = status?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let first_error = stderr.lines().find(|l| l.starts_with("error")).unwrap_or("cargo failed").trim();
            return Ok(Err(format!("does not build: {first_error}")));
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        for package in &crates {
            let built = package.built_in(&target.join(profile_dir(&self.profile)));
            let file = format!("lib{}.so", package.library);
            // Copied under a temporary name and renamed: a build cut short leaves no half library behind.
            let partial = dir.join(format!(".{file}.partial"));
            std::fs::copy(built.join(&file), &partial)
                .with_context(|| format!("copying {file} from {}", built.display()))?;
            std::fs::rename(&partial, dir.join(&file))?;
            // The layouts a step's processes may load, made now: the next commit's build overwrites the objects.
            // As many as a step's comparison draws from: fewer for a large library (`layouts::pool_for`).
            let started = std::time::Instant::now();
            let bytes = std::fs::metadata(dir.join(&file))?.len();
            let seeds = 2 * crate::analysis::layouts::pool_for(LAYOUT_SEEDS as usize / 2, bytes) as u64;
            crate::plugin::variants::copy_layouts(&built.join(&file), &dir.join(&file), seeds)?;
            eprintln!("bisect: {seeds} layouts of {file} in {:.1} s", started.elapsed().as_secs_f64());
        }
        std::fs::write(&done, names(&crates))?;
        Ok(Ok(dir))
    }

    /// The packages that provide the rigs at the checked-out commit.
    fn crates(&self, tree: &Path) -> Result<Vec<Crate>, String> {
        select(&crate::bisect::git::packages(tree)?, &self.rigs)
    }

    /// A key of what is built: the rigs, so a bisection of other rigs builds their crates too.
    fn key(&self) -> String {
        let mut rigs: Vec<&str> = self.rigs.iter().map(|(r, _)| r.as_str()).collect();
        rigs.sort_unstable();
        rigs.join("+")
    }

    /// The bisection's worktree at `commit` (made on first use; the same path every time, so cargo rebuilds
    /// only what the commit changed). The cargo workspace is found at the same place in it as the current
    /// directory is in the repository.
    fn checkout(&mut self, commit: &str) -> Result<PathBuf> {
        let tree = self.repo.cache.join("worktree");
        if self.worktree.is_none() {
            // A worktree left by a bisection killed outright is forgotten first.
            let _ = self.repo.git(&["worktree", "remove", "--force", &tree.to_string_lossy()]);
            let _ = self.repo.git(&["worktree", "prune"]);
            if tree.exists() {
                std::fs::remove_dir_all(&tree).with_context(|| format!("removing {}", tree.display()))?;
            }
            self.repo.git(&["worktree", "add", "--detach", "--force", &tree.to_string_lossy(), commit])?;
            self.worktree = Some(tree.clone());
        } else {
            let status = self.repo.git_in(&tree, &["checkout", "--detach", "--force", "--quiet", commit]);
            status.with_context(|| format!("checking out {commit} in {}", tree.display()))?;
        }
        Ok(tree.join(&self.repo.prefix))
    }

    /// Copies aside the libraries a build into `target` will overwrite, once: a target directory shared with
    /// the user's checkout must hold the user's build again when the bisection ends.
    fn save_libraries(&mut self, target: &Path, crates: &[Crate]) -> Result<()> {
        let saved_dir = self.repo.cache.join("saved");
        for package in crates {
            let library = &package.library;
            let file = package.built_in(&target.join(profile_dir(&self.profile))).join(format!("lib{library}.so"));
            if !file.is_file() || self.saved.iter().any(|(original, _)| *original == file) {
                continue;
            }
            std::fs::create_dir_all(&saved_dir)?;
            let copy = saved_dir.join(format!("lib{library}.so"));
            std::fs::copy(&file, &copy).with_context(|| format!("saving {}", file.display()))?;
            self.saved.push((file, copy));
        }
        Ok(())
    }

    /// Puts back the libraries of the user's build, and removes the worktree this builder made (at the end, and
    /// on Ctrl-C).
    pub fn restore(&mut self) {
        for (original, copy) in self.saved.drain(..) {
            // Replaced, not written through: cargo hard-links the file it uplifts to its own artifact.
            let partial = original.with_extension("so.restoring");
            if std::fs::copy(&copy, &partial).and_then(|_| std::fs::rename(&partial, &original)).is_err() {
                eprintln!("bisect: could not put back {}: rebuild it", original.display());
            }
        }
        self.remove_worktree();
    }

    /// Removes the worktree this builder made.
    fn remove_worktree(&mut self) {
        if let Some(tree) = self.worktree.take()
            && self.repo.git(&["worktree", "remove", "--force", &tree.to_string_lossy()]).is_err()
        {
            let _ = std::fs::remove_dir_all(&tree);
            let _ = self.repo.git(&["worktree", "prune"]);
        }
    }
}

/// `CARGO_TARGET_DIR` if set, else one target directory for every bisection of this repository.
fn target_dir(cache: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| cache.join("target"), PathBuf::from)
}

/// Where cargo puts a profile's artifacts.
fn profile_dir(profile: &str) -> &str {
    match profile {
        "dev" | "test" => "debug",
        "bench" => "release",
        other => other,
    }
}

fn names(crates: &[Crate]) -> String {
    crates.iter().map(|c| c.package.as_str()).collect::<Vec<_>>().join(", ")
}

/// What a bisection builds for a rig: its package, the library its plugin is, and for a bench target's rig
/// (benchhost-criterion's or benchhost-divan's) the target's source.
#[derive(Debug, PartialEq)]
struct Crate {
    package: String,
    library: String,
    bench: Option<PathBuf>,
}

impl Crate {
    /// Where the profile's build in `built` puts the library: a bench target's plugin under `benches/`.
    fn built_in(&self, built: &Path) -> PathBuf {
        if self.bench.is_some() { built.join(crate::plugin::relink::BENCH_DIR) } else { built.to_owned() }
    }
}

/// The packages of `packages` that provide `rigs` (each with the library name its plugin has in the user's
/// build): by `[package.metadata.benchhost] rigs`, by cdylib, else by a bench target of the rig's name.
fn select(packages: &[Package], rigs: &[(String, Option<String>)]) -> Result<Vec<Crate>, String> {
    let mut found: Vec<Crate> = Vec::new();
    for (rig, library) in rigs {
        let by_metadata = packages.iter().find(|p| p.rigs.contains(rig));
        let by_library = || packages.iter().find(|p| library.as_ref().is_some_and(|l| p.cdylib.as_ref() == Some(l)));
        let made = match by_metadata.or_else(by_library) {
            Some(package) => {
                let Some(cdylib) = &package.cdylib else {
                    return Err(format!("package `{}` (rig `{rig}`) has no cdylib target", package.name));
                };
                Crate { package: package.name.clone(), library: cdylib.clone(), bench: None }
            }
            None => {
                let bench =
                    packages.iter().find_map(|p| p.benches.iter().find(|(name, _)| name == rig).map(|b| (p, b)));
                let Some((package, (name, source))) = bench else {
                    return Err(format!(
                        "no package here provides rig `{rig}` (list it in its crate's [package.metadata.benchhost] \
                         rigs, or name a bench target `{rig}`)"
                    ));
                };
                Crate { package: package.name.clone(), library: name.clone(), bench: Some(source.clone()) }
            }
        };
        if !found.iter().any(|c| c.package == made.package && c.library == made.library) {
            found.push(made);
        }
    }
    Ok(found)
}

/// The first 10 hex digits of a commit.
pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// Fails unless `profile` is a name cargo accepts for `--profile`.
pub fn check_profile(profile: &str) -> Result<()> {
    if profile.is_empty() || !profile.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        bail!("--cargo-profile `{profile}`: not a cargo profile name");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(name: &str, rigs: &[&str], cdylib: Option<&str>, benches: &[&str]) -> Package {
        Package {
            name: name.into(),
            rigs: rigs.iter().map(|r| r.to_string()).collect(),
            cdylib: cdylib.map(str::to_owned),
            benches: benches.iter().map(|b| (b.to_string(), PathBuf::from(format!("/w/benches/{b}.rs")))).collect(),
        }
    }

    #[test]
    fn a_rig_is_built_from_its_crate_or_from_the_bench_target_of_its_name() {
        let packages = [package("rig-wal", &["wal"], Some("rig_wal"), &[]), package("suite", &[], None, &["sorting"])];
        let rigs = |names: &[&str]| names.iter().map(|n| (n.to_string(), None)).collect::<Vec<_>>();
        let found = select(&packages, &rigs(&["wal", "sorting"])).unwrap();
        assert_eq!(found[0], Crate { package: "rig-wal".into(), library: "rig_wal".into(), bench: None });
        let bench =
            Crate { package: "suite".into(), library: "sorting".into(), bench: Some("/w/benches/sorting.rs".into()) };
        assert_eq!(found[1], bench);
        assert_eq!(found[1].built_in(Path::new("/t/release")), Path::new("/t/release/benches"));
        let err = select(&packages, &rigs(&["nothing"])).unwrap_err();
        assert!(err.contains("name a bench target `nothing`"), "{err}");
    }
}
