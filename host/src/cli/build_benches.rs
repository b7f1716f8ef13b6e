//! `benchhost build --benches`: each bench target of the workspace compiled twice by the same rustc wrapper,
//! once as cargo asks (the executable of `cargo bench`) and once as a plugin library, `lib<crate>.so` in
//! `target/release/benches/`, its link kept beside it so that comparisons run over its code layouts. A target
//! whose `criterion_main!` is benchhost-criterion's (renamed in as `criterion`) exports one rig named after the
//! target, a cell per benchmark id. Only the bench target is compiled again: its dependencies are the rlibs
//! cargo built for the executable.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

use crate::plugin::loader::{Loader, Trust};

pub use crate::plugin::relink::{BENCH_DIR as DIR, BENCHES_ENV};

/// A bench target of the workspace: its crate name and its source file, canonical.
pub struct BenchTarget {
    /// The name rustc compiles it as (`-` made `_`): its library's and its rig's.
    pub crate_name: String,
    /// Its source file.
    pub source: PathBuf,
}

/// The bench targets of the workspace `cargo_args` name (`cargo metadata`).
pub fn bench_targets(cargo: &OsString, cargo_args: &[String]) -> Result<Vec<BenchTarget>> {
    let mut metadata = Command::new(cargo);
    metadata.args(["metadata", "--format-version", "1", "--no-deps"]);
    if let Some(i) = cargo_args.iter().position(|a| a == "--manifest-path") {
        metadata.args(["--manifest-path", cargo_args.get(i + 1).map_or("", String::as_str)]);
    }
    let out = metadata.output().context("running cargo metadata")?;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).context("reading cargo metadata")?;
    let targets =
        json["packages"].as_array().into_iter().flatten().flat_map(|p| p["targets"].as_array().into_iter().flatten());
    let benches = targets.filter(|t| t["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "bench")));
    let target = |t: &serde_json::Value| {
        let source = Path::new(t["src_path"].as_str()?);
        Some(BenchTarget {
            crate_name: t["name"].as_str()?.replace('-', "_"),
            source: source.canonicalize().unwrap_or_else(|_| source.to_owned()),
        })
    };
    Ok(benches.filter_map(target).collect())
}

/// The plugin a wrapped compile of rustc `args` makes besides: for the executable of a bench target (its
/// source in [`BENCHES_ENV`]), the same crate as a `cdylib` into `release/benches/deps`.
pub struct BenchPlugin {
    /// The crate's name: the library's and the rig's.
    pub name: String,
    /// rustc's arguments for the library.
    pub args: Vec<String>,
    /// `release/benches`.
    pub dir: PathBuf,
    /// The executable this compile is of, as cargo names it in `release/deps` (`sorting-1a2b3c`): written
    /// beside the library, so that a later build tells a plugin of another build of the target from its own.
    pub executable: String,
}

impl BenchPlugin {
    /// The plugin of the compile `args`, when it is of a bench target's executable.
    pub fn of(args: &[String]) -> Option<BenchPlugin> {
        let sources = std::env::var(BENCHES_ENV).ok()?;
        let sources: BTreeSet<PathBuf> = sources.lines().map(PathBuf::from).collect();
        // A bench target without libtest's harness is compiled as rustc's default crate type, a binary (cargo
        // passes no `--crate-type` for it); with the harness, `--test`, which benchhost cannot run.
        let typed = args.iter().any(|a| a.starts_with("--crate-type"));
        let bin = args.windows(2).any(|w| w[0] == "--crate-type" && w[1] == "bin")
            || (!typed && !args.iter().any(|a| a == "--test"));
        let source = args.iter().find(|a| a.ends_with(".rs") && !a.starts_with('-'))?;
        let source = Path::new(source).canonicalize().ok()?;
        if !bin || !sources.contains(&source) {
            return None;
        }
        let name = value(args, "--crate-name")?;
        let dir = PathBuf::from(value(args, "--out-dir")?).parent()?.join(DIR);
        let mut plugin_args = if typed { Vec::new() } else { vec!["--crate-type".to_owned(), "cdylib".to_owned()] };
        let mut words = args.iter().peekable();
        while let Some(word) = words.next() {
            match word.as_str() {
                "--crate-type" => {
                    words.next();
                    plugin_args.extend(["--crate-type".into(), "cdylib".into()]);
                }
                "--out-dir" => {
                    words.next();
                    plugin_args.extend(["--out-dir".into(), dir.join("deps").display().to_string()]);
                }
                // Its messages are not cargo's to read: cargo has the executable's.
                w if w.starts_with("--error-format") || w.starts_with("--json") => {}
                "-C" if words.peek().is_some_and(|w| w.starts_with("incremental=")) => {
                    words.next();
                }
                _ => plugin_args.push(word.clone()),
            }
        }
        let executable = format!("{name}{}", args.iter().find_map(|a| a.strip_prefix("extra-filename=")).unwrap_or(""));
        Some(BenchPlugin { name, args: plugin_args, dir, executable })
    }

    /// The library, where `run` finds it: `release/benches/lib<name>.so`.
    pub fn library(&self) -> PathBuf {
        self.dir.join(format!("lib{}.so", self.name))
    }
}

/// Where the executable a plugin library was compiled with is written: `lib<name>.so.from`.
pub fn stamp(library: &Path) -> PathBuf {
    library.with_extension("so.from")
}

/// The executable cargo's build made, or found fresh, of each bench target, by crate name, from its
/// `--message-format=json` output (`sorting` → `sorting-1a2b3c`).
pub fn executables(cargo_json: &[u8]) -> BTreeMap<String, String> {
    let messages =
        cargo_json.split(|b| *b == b'\n').filter_map(|line| serde_json::from_slice::<serde_json::Value>(line).ok());
    let benches = messages.filter(|m| {
        m["reason"] == "compiler-artifact"
            && m["target"]["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "bench"))
    });
    benches
        .filter_map(|m| {
            let executable = Path::new(m["executable"].as_str()?).file_name()?.to_str()?.to_owned();
            Some((m["target"]["name"].as_str()?.replace('-', "_"), executable))
        })
        .collect()
}

/// Whether the plugin of bench target `name` in `dir` was compiled with `executable`, cargo's build of the
/// target now: a plugin of another build of it (other features, another profile's flags) is not, and cargo,
/// finding the executable fresh, would not compile it again.
pub fn is_current(dir: &Path, name: &str, executable: &str) -> bool {
    let library = dir.join(format!("lib{name}.so"));
    library.is_file() && std::fs::read_to_string(stamp(&library)).is_ok_and(|made| made == executable)
}

/// The value of rustc's `flag` in `args`, as `--flag VALUE` or `--flag=VALUE`.
pub fn value(args: &[String], flag: &str) -> Option<String> {
    args.iter().enumerate().find_map(|(i, a)| match a.strip_prefix(flag) {
        Some("") => args.get(i + 1).cloned(),
        Some(v) => v.strip_prefix('=').map(str::to_owned),
        None => None,
    })
}

/// What `build --benches` made of each bench target: its rig and benchmarks, or why it is no plugin (probed as
/// `run` probes libraries, each in a child). Fails when no bench target is one.
pub fn report(dir: &Path) -> Result<ExitCode> {
    let exe = std::env::current_exe().context("finding the benchhost executable")?;
    let loader = Loader::discover(&[dir.to_owned()], &exe, &Trust::default());
    for plugin in &loader.plugins {
        for rig in &plugin.info.rigs {
            let ids = rig.params.iter().find(|p| p.name == "id").and_then(|p| p.allowed.as_ref()).map_or(0, Vec::len);
            eprintln!("{}: rig `{}`, {ids} benchmarks, its link kept for layouts", shown(&plugin.path), rig.name);
        }
    }
    for rejected in &loader.rejected {
        eprintln!(
            "{}: not a benchhost plugin: {} (a bench target runs under benchhost when its `criterion_main!` is \
             benchhost-criterion's, renamed in as `criterion`, or its `#[divan::bench]` benchhost-divan's, \
             renamed in as `divan`; a hand-written Criterion `main` cannot be run)",
            shown(&rejected.path),
            rejected.reason
        );
    }
    if loader.plugins.is_empty() {
        bail!("{}: no bench target is a benchhost plugin", dir.display());
    }
    eprintln!("run them: `benchhost run --plugin RIG` here, or with `--plugin-dir {}` from elsewhere", dir.display());
    Ok(ExitCode::SUCCESS)
}

/// `path` as a user reads it: relative to the current directory when it is under it.
pub fn shown(path: &Path) -> String {
    let here = std::env::current_dir().ok();
    let relative = here.as_deref().and_then(|h| path.strip_prefix(h).ok());
    relative.unwrap_or(path).display().to_string()
}

/// The directory of bench plugins of the current directory's build (`CARGO_TARGET_DIR`, else `target`), when
/// there is one: `run` searches it after `--plugin-dir`, so a user's crate runs its benches without naming it.
pub fn plugins_here() -> Option<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| PathBuf::from("target"), PathBuf::from);
    Some(target.join("release").join(DIR)).filter(|d| d.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bench_targets_executable_is_compiled_again_as_a_library_beside_the_build() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("sorting.rs");
        std::fs::write(&source, "fn main() {}").unwrap();
        let words = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        let args = words(&format!(
            "--crate-name sorting --edition=2024 {} --error-format=json --json=diagnostic-rendered-ansi,artifacts \
             --crate-type bin --emit=dep-info,link -C opt-level=3 -C incremental=/t/inc --out-dir /t/release/deps \
             -C extra-filename=-1a2b3c \
             --extern criterion=/t/release/deps/libbenchhost_criterion-1.rlib",
            source.display()
        ));
        // SAFETY: the tests of this module alone read this variable.
        unsafe { std::env::set_var(BENCHES_ENV, source.canonicalize().unwrap()) };
        let plugin = BenchPlugin::of(&args).expect("a bench target");
        assert_eq!(plugin.name, "sorting");
        assert_eq!(plugin.library(), Path::new("/t/release/benches/libsorting.so"));
        assert_eq!(plugin.executable, "sorting-1a2b3c");
        let line = plugin.args.join(" ");
        assert!(
            line.contains("--crate-type cdylib --emit=dep-info,link -C opt-level=3 --out-dir /t/release/benches/deps"),
            "{line}"
        );
        assert!(!line.contains("json") && !line.contains("incremental"), "{line}");
        assert!(line.contains("--extern criterion="), "its dependencies are the executable's");
        let untyped = words(&format!("--crate-name sorting {} --cfg test --out-dir /t/release/deps", source.display()));
        let line = BenchPlugin::of(&untyped).expect("cargo's form: no crate type, a binary").args.join(" ");
        assert!(line.starts_with("--crate-type cdylib --crate-name sorting"), "{line}");
        let harness = words(&format!("--crate-name sorting {} --test --out-dir /t/release/deps", source.display()));
        assert!(BenchPlugin::of(&harness).is_none(), "libtest's harness is not Criterion's");
        let lib =
            words(&format!("--crate-name sorting {} --crate-type lib --out-dir /t/release/deps", source.display()));
        assert!(BenchPlugin::of(&lib).is_none(), "only the executable");
        let other = words("--crate-name other src/main.rs --crate-type bin --out-dir /t/release/deps");
        assert!(BenchPlugin::of(&other).is_none(), "only a bench target");
    }

    #[test]
    fn a_plugin_is_current_only_when_made_with_the_executable_cargos_build_has_now() {
        // regression (issue 82): a build of the other features found the plain executable fresh, compiled
        // nothing, and left the other build's plugin in place: an A/B of a +1% change compared it with itself.
        let json = concat!(
            r#"{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"suite_lib"},"executable":null}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"kind":["bench"],"name":"my-suite"},"#,
            r#""executable":"/t/release/deps/my_suite-1a2b3c","fresh":true}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
            "\n"
        );
        let built = executables(json.as_bytes());
        assert_eq!(built, BTreeMap::from([("my_suite".to_owned(), "my_suite-1a2b3c".to_owned())]));
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_current(dir.path(), "my_suite", "my_suite-1a2b3c"), "no plugin");
        let library = dir.path().join("libmy_suite.so");
        std::fs::write(&library, "a library").unwrap();
        assert!(!is_current(dir.path(), "my_suite", "my_suite-1a2b3c"), "a plugin of no known build");
        std::fs::write(stamp(&library), "my_suite-9f9f9f").unwrap();
        assert!(!is_current(dir.path(), "my_suite", "my_suite-1a2b3c"), "a plugin of another build");
        std::fs::write(stamp(&library), "my_suite-1a2b3c").unwrap();
        assert!(is_current(dir.path(), "my_suite", "my_suite-1a2b3c"));
    }
}
