//! `benchhost build`: `cargo build --release` that keeps, for every plugin library it links, what it takes to
//! link the library again with another code layout (the link line and its objects), so that a paired
//! comparison can spread its processes over layouts of both builds (issue 63); and the rustc wrapper it sets
//! for that, as cargo's `RUSTC_WORKSPACE_WRAPPER` (the workspace's own crates only: no dependency is compiled
//! again).
//!
//! Under the wrapper, a `cdylib` crate is compiled with `-C save-temps` (the objects stay after the link) and
//! `--print link-args=FILE` (`target/release/layouts/libNAME.so.link`), and the SHA-256 of the library that
//! link made is written beside it, which is how a run knows the link line is of the library it finds. The
//! bitcode `save-temps` also leaves is deleted: only the objects are linked again.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

use crate::analysis::layouts::{POOL, pool_for};
use crate::cli::build_benches::{self, BenchPlugin, shown};
use crate::plugin::relink::{Recipe, WRAPPER_ENV};
use crate::plugin::variants::{self, Variants};

/// `benchhost build [--layouts N] [--benches] [CARGO_ARGS]...`: `cargo build --release CARGO_ARGS` under the
/// wrapper (with `--benches`, each bench target also as a plugin: [`build_benches`]), then `N` layouts of each
/// library it can link again, for each side a comparison may put it on.
pub fn build(layouts: u32, benches: bool, cargo_args: &[String]) -> Result<ExitCode> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = target_dir(&cargo, cargo_args)?.join("release");
    let wrapper = wrapper_in(&built)?;
    let targets = if benches { build_benches::bench_targets(&cargo, cargo_args)? } else { Vec::new() };
    if benches && targets.is_empty() {
        bail!("--benches: the workspace has no bench target (`[[bench]]`, or a file under benches/)");
    }
    let started = std::time::Instant::now();
    let (mut status, mut executables) = cargo_build(&cargo, &wrapper, &targets, cargo_args)?;
    let plugins = built.join(build_benches::DIR);
    let stale = |executables: &std::collections::BTreeMap<String, String>| -> Vec<&build_benches::BenchTarget> {
        let current = |t: &&build_benches::BenchTarget| {
            executables.get(&t.crate_name).is_none_or(|exe| build_benches::is_current(&plugins, &t.crate_name, exe))
        };
        targets.iter().filter(|t| !current(t)).collect()
    };
    if status.success() && !stale(&executables).is_empty() {
        // cargo does not compile a bench it finds fresh, and its plugin is made only when it is compiled: a
        // plugin missing, or made by another build of the target (other features), is compiled again.
        for target in stale(&executables) {
            let file = std::fs::File::options().write(true).open(&target.source)?;
            file.set_modified(std::time::SystemTime::now())?;
        }
        (status, executables) = cargo_build(&cargo, &wrapper, &targets, cargo_args)?;
        if let Some(target) = stale(&executables).first().filter(|_| status.success()) {
            bail!(
                "bench target `{}`: compiled again, its plugin is still not of cargo's build of it",
                target.crate_name
            );
        }
    }
    if !status.success() {
        return Ok(ExitCode::from(status.code().map_or(1, |c| c.clamp(1, 255) as u8)));
    }
    eprintln!("built in {:.1} s", started.elapsed().as_secs_f64());
    let mut libraries = linkable(&built)?;
    libraries.extend(linkable(&built.join(build_benches::DIR))?);
    if libraries.is_empty() {
        bail!(
            "{}: no plugin library with its link line: was each built under this wrapper (not a plain `cargo \
             build` since)?",
            built.display()
        );
    }
    for library in &libraries {
        let sha256 = crate::plugin::library::sha256_of(std::fs::File::open(library)?)?;
        let Some(variants) = Variants::of(library, &sha256) else { continue };
        let bytes = std::fs::metadata(library)?.len();
        let started = std::time::Instant::now();
        let mut made = 0;
        // Seeds 1..=2N: the odd ones serve this build as the old side of a comparison, the even as the new.
        for seed in 1..=2 * pool_for(layouts as usize, bytes) as u64 {
            made += u32::from(variants.ensure(seed)?.1);
        }
        let per = if made > 0 {
            format!(", {:.2} s each", started.elapsed().as_secs_f64() / made as f64)
        } else {
            String::new()
        };
        let bench = library.parent().is_some_and(|d| d.ends_with(build_benches::DIR));
        if bench && made == 0 {
            continue; // a bench plugin's line is `report`'s, its layouts linked as comparisons need them
        }
        eprintln!("{}: its link kept; {made} layouts linked now{per}", shown(library));
        eprintln!("  {}", kept(bytes, library.parent().unwrap_or(&built)));
    }
    if benches {
        return build_benches::report(&built.join(build_benches::DIR));
    }
    Ok(ExitCode::SUCCESS)
}

/// `cargo build --release CARGO_ARGS` under the wrapper; with bench `targets`, `--benches` too, the wrapper told
/// their sources, and the executable cargo made or found fresh of each ([`build_benches::executables`]).
fn cargo_build(
    cargo: &OsString,
    wrapper: &Path,
    targets: &[build_benches::BenchTarget],
    cargo_args: &[String],
) -> Result<(std::process::ExitStatus, std::collections::BTreeMap<String, String>)> {
    let mut command = Command::new(cargo);
    command.args(["build", "--release"]).args(cargo_args).env("RUSTC_WORKSPACE_WRAPPER", wrapper).env(WRAPPER_ENV, "1");
    if !targets.is_empty() {
        let sources: Vec<String> = targets.iter().map(|t| t.source.display().to_string()).collect();
        // Its messages on stdout, read here; its diagnostics and progress on stderr, as without `--benches`.
        command.args(["--benches", "--message-format=json-render-diagnostics"]).stdout(std::process::Stdio::piped());
        command.env(build_benches::BENCHES_ENV, sources.join("\n"));
    }
    let out = command.spawn().context("running cargo")?.wait_with_output().context("running cargo")?;
    Ok((out.status, build_benches::executables(&out.stdout)))
}

/// What a library of `bytes` in the build `built` keeps on disk: a layout is as large as the library, and runs
/// link those they draw as they need them, up to both sides' pools.
fn kept(bytes: u64, built: &Path) -> String {
    let pool = pool_for(POOL, bytes);
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    format!(
        "its layouts take {:.0} MiB each, up to {} ({:.0} MiB) as comparisons link them, in {}; \
         `benchhost build --free-layouts` deletes them",
        mib(bytes),
        2 * pool,
        mib(2 * pool as u64 * bytes),
        shown(&built.join(variants::DIR))
    )
}

/// `benchhost build --free-layouts [CARGO_ARGS]`: deletes the layouts made of every library of the build's
/// target directory (not their links, so a later comparison links those it needs again); builds nothing.
pub fn free_layouts(cargo_args: &[String]) -> Result<ExitCode> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let dir = target_dir(&cargo, cargo_args)?.join("release").join(variants::DIR);
    let (mut files, mut bytes) = (0u64, 0u64);
    for library in std::fs::read_dir(&dir).into_iter().flatten().flatten().filter(|e| e.path().is_dir()) {
        for entry in std::fs::read_dir(library.path())?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("seed-") && name.ends_with(".so") {
                bytes += entry.metadata().map_or(0, |m| m.len());
                std::fs::remove_file(entry.path()).with_context(|| format!("deleting {}", entry.path().display()))?;
                files += 1;
            }
        }
    }
    eprintln!("{}: deleted {files} layouts, {:.0} MiB", dir.display(), bytes as f64 / f64::from(1 << 20));
    Ok(ExitCode::SUCCESS)
}

/// A copy of this executable at a path of its own in the build, `layouts/benchhost-rustc`, for cargo to run as
/// its rustc wrapper: a build of the benchhost package replaces `target/release/benchhost` while other crates
/// are still compiling, and the path cargo is given stays the same from build to build.
fn wrapper_in(built: &Path) -> Result<PathBuf> {
    let exe = std::env::current_exe().context("locating the benchhost executable (cargo's rustc wrapper)")?;
    let dir = built.join(variants::DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let wrapper = dir.join("benchhost-rustc");
    let same = |a: &Path, b: &Path| -> Option<bool> { Some(std::fs::read(a).ok()? == std::fs::read(b).ok()?) };
    if same(&exe, &wrapper) != Some(true) {
        let partial = dir.join(".benchhost-rustc.partial");
        std::fs::copy(&exe, &partial).with_context(|| format!("copying {} to {}", exe.display(), partial.display()))?;
        std::fs::rename(&partial, &wrapper)?;
    }
    Ok(wrapper)
}

/// cargo's target directory for the workspace `cargo_args` name: their `--target-dir`, else cargo's for their
/// `--manifest-path` (or the current directory's).
fn target_dir(cargo: &OsString, cargo_args: &[String]) -> Result<PathBuf> {
    let value = |flag: &str| cargo_args.iter().position(|a| a == flag).and_then(|i| cargo_args.get(i + 1));
    if let Some(dir) = value("--target-dir") {
        return Ok(std::path::absolute(dir)?);
    }
    let mut metadata = Command::new(cargo);
    metadata.args(["metadata", "--format-version", "1", "--no-deps"]);
    if let Some(manifest) = value("--manifest-path") {
        metadata.args(["--manifest-path", manifest]);
    }
    let out = metadata.output().context("running cargo metadata")?;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).context("reading cargo metadata")?;
    json["target_directory"].as_str().map(PathBuf::from).context("cargo metadata gives no target directory")
}

/// The libraries of `dir` that have a link line beside them.
fn linkable(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir.join(variants::DIR)) else { return Ok(out) };
    for entry in entries {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if let Some(library) = name.strip_suffix(".link") {
            out.extend(Some(dir.join(library)).filter(|p| p.is_file()));
        }
    }
    out.sort();
    Ok(out)
}

/// Whether this process is cargo's rustc wrapper (`benchhost RUSTC ARGS...` under [`WRAPPER_ENV`]).
pub fn is_wrapper(args: &[OsString]) -> bool {
    std::env::var_os(WRAPPER_ENV).is_some()
        && args.get(1).is_some_and(|rustc| Path::new(rustc).is_absolute() || rustc.to_string_lossy().ends_with("rustc"))
}

/// Runs rustc (`args[1]`) with `args[2..]`, keeping a `cdylib`'s link and objects; exits as rustc did.
pub fn wrap_rustc(args: &[OsString]) -> ExitCode {
    let (rustc, rest) = (&args[1], &args[2..]);
    let words: Vec<String> = rest.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let kept = kept_link(&words);
    let mut command = Command::new(rustc);
    command.args(rest);
    if let Some(link) = &kept {
        if let Err(e) = std::fs::create_dir_all(link.dir()) {
            eprintln!("benchhost build: creating {}: {e}", link.dir().display());
            return ExitCode::from(1);
        }
        command.args(["-C", "save-temps", &format!("--print=link-args={}", link.file.display())]);
    }
    let status = match command.status() {
        Ok(status) => status,
        Err(e) => {
            eprintln!("benchhost build: running {}: {e}", rustc.to_string_lossy());
            return ExitCode::from(1);
        }
    };
    if let (true, Some(link)) = (status.success(), &kept)
        && let Err(e) = link.finish()
    {
        eprintln!("benchhost build: {e:#}");
        return ExitCode::from(1);
    }
    if let (true, Some(plugin)) = (status.success(), BenchPlugin::of(&words))
        && let Err(e) = compile_plugin(rustc, &plugin)
    {
        eprintln!("benchhost build: {e:#}");
        return ExitCode::from(1);
    }
    ExitCode::from(status.code().map_or(1, |c| c.clamp(0, 255) as u8))
}

/// Compiles a bench target again as its plugin library, its link kept, into `release/benches/lib<crate>.so`.
fn compile_plugin(rustc: &OsString, plugin: &BenchPlugin) -> Result<()> {
    let link = kept_link(&plugin.args).context("a bench plugin's compile keeps its link")?;
    std::fs::create_dir_all(link.dir())?;
    std::fs::create_dir_all(plugin.dir.join("deps"))?;
    let out = Command::new(rustc)
        .args(&plugin.args)
        .args(["-C", "save-temps", &format!("--print=link-args={}", link.file.display())])
        .output()
        .with_context(|| format!("running {}", rustc.to_string_lossy()))?;
    if !out.status.success() {
        bail!(
            "bench target `{}` compiled, but not as a plugin library (a cdylib):\n{}",
            plugin.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    link.finish()?;
    let printed = std::fs::read_to_string(&link.file)?;
    let made = Recipe::parse(&printed)?.output();
    let library = plugin.library();
    // The stamp goes first and comes back last: a build cut short in between leaves a library without one,
    // which the next build compiles again, never another build's library under this build's stamp.
    let stamp = build_benches::stamp(&library);
    let _ = std::fs::remove_file(&stamp);
    let _ = std::fs::remove_file(&library);
    std::fs::hard_link(&made, &library)
        .or_else(|_| std::fs::copy(&made, &library).map(drop))
        .with_context(|| format!("placing {} at {}", made.display(), library.display()))?;
    std::fs::write(&stamp, &plugin.executable).with_context(|| format!("writing {}", stamp.display()))
}

/// The link a wrapped rustc keeps: of crate `name`, built into `out_dir`, its line printed into `file`.
struct KeptLink {
    name: String,
    out_dir: PathBuf,
    file: PathBuf,
}

impl KeptLink {
    fn dir(&self) -> &Path {
        self.file.parent().expect("the link file is in layouts/")
    }

    /// After the link: the SHA-256 of the library it made, beside the line; the bitcode `save-temps` kept
    /// deleted (hundreds of MB for a DataFusion plugin, and never linked).
    fn finish(&self) -> Result<()> {
        let printed =
            std::fs::read_to_string(&self.file).with_context(|| format!("reading {}", self.file.display()))?;
        let library = Recipe::parse(&printed).with_context(|| format!("reading {}", self.file.display()))?.output();
        let sha256 = crate::plugin::library::sha256_of(std::fs::File::open(&library)?)?;
        let made = variants::made_file(
            self.dir().parent().expect("layouts/ is in the build"),
            &format!("lib{}.so", self.name),
        );
        std::fs::write(&made, sha256).with_context(|| format!("writing {}", made.display()))?;
        for entry in std::fs::read_dir(&self.out_dir)?.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            if file.starts_with(&format!("{}-", self.name)) && file.ends_with(".bc") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(())
    }
}

/// What to keep of rustc's compile `args`: the link of a `cdylib` (`--crate-type cdylib`), none otherwise.
fn kept_link(args: &[String]) -> Option<KeptLink> {
    let value = |flag: &str| build_benches::value(args, flag);
    let cdylib = args.windows(2).any(|w| w[0] == "--crate-type" && w[1].split(',').any(|t| t == "cdylib"))
        || args.iter().any(|a| a.strip_prefix("--crate-type=").is_some_and(|t| t.split(',').any(|t| t == "cdylib")));
    if !cdylib {
        return None;
    }
    let name = value("--crate-name")?;
    let out_dir = PathBuf::from(value("--out-dir")?);
    // `target/release/deps` → `target/release/layouts/libNAME.so.link`.
    let build = out_dir.parent()?.to_owned();
    let file = variants::link_file(&build, &format!("lib{name}.so"));
    Some(KeptLink { name, out_dir, file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_cdylib_keeps_its_link_beside_the_build() {
        let words = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        let link = kept_link(&words(
            "--crate-name rig_wal --edition=2024 --crate-type cdylib --crate-type rlib \
             --out-dir /t/release/deps -C opt-level=3",
        ))
        .unwrap();
        assert_eq!(link.file, Path::new("/t/release/layouts/librig_wal.so.link"));
        assert_eq!(link.out_dir, Path::new("/t/release/deps"));
        assert!(kept_link(&words("--crate-name benchhost --crate-type bin --out-dir /t/release/deps")).is_none());
        assert!(kept_link(&words("--crate-name x --crate-type=cdylib --out-dir=/t/debug/deps")).is_some());
    }
}
