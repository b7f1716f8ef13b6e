//! Shared by the integration tests: the benchhost binary, the plugin directories, and fixture plugins built
//! on demand into the test target directory (never next to the real plugins).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use benchhost_record::Record;
use benchhost_record::reader;

pub mod lakana;
pub mod servers;

/// The benchhost binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_benchhost"))
}

/// Where `cargo test` put the workspace's cdylibs (`target/<profile>/deps`, next to this test binary).
pub fn workspace_plugins() -> PathBuf {
    std::env::current_exe().unwrap().parent().unwrap().to_owned()
}

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

// One fixture build at a time in this process; cargo's own lock serializes across test binaries.
static BUILD: Mutex<()> = Mutex::new(());

fn cargo_build(manifest: &Path, package: &str) -> PathBuf {
    let target = tmp().join("fixtures-target");
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let status = Command::new(cargo)
        .args(["build", "--quiet", "--manifest-path"])
        .arg(manifest)
        .args(["-p", package, "--target-dir"])
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .expect("running cargo");
    assert!(status.success(), "building fixture {package} failed");
    target.join("debug").join(format!("lib{}.so", package.replace('-', "_")))
}

/// Copies a freshly built library into a directory of its own, so each test sees only what it asks for.
fn install(built: &Path, dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let staged = dir.join(format!(".{name}.tmp"));
    std::fs::copy(built, &staged).unwrap();
    let path = dir.join(name);
    std::fs::rename(&staged, &path).unwrap();
    path
}

/// A directory holding only `libfixture_faults.so`.
pub fn fault_plugins() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let _guard = BUILD.lock().unwrap_or_else(|e| e.into_inner());
        let built = cargo_build(&repo().join("host/tests/fixtures/Cargo.toml"), "fixture-faults");
        let dir = tmp().join("plugins-faults");
        install(&built, &dir, "libfixture_faults.so");
        dir
    })
    .clone()
}

/// How a skewed copy of plugin-api differs from the real one.
#[derive(Clone, Copy, Debug)]
pub enum Skew {
    /// Version 0.1.1 with a field inserted into the root module: passes the version check, fails layout.
    Layout,
    /// Version 0.2.0, same layout: fails the version check.
    Version,
}

/// A directory holding one plugin built against a modified copy of plugin-api.
pub fn skewed_plugin(skew: Skew) -> PathBuf {
    let _guard = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("{skew:?}").to_lowercase();
    let root = tmp().join(format!("skew-{name}"));
    let api = root.join("plugin-api");
    std::fs::create_dir_all(api.join("src")).unwrap();
    for file in ["Cargo.toml", "build.rs"] {
        std::fs::copy(repo().join("plugin-api").join(file), api.join(file)).unwrap();
    }
    for entry in std::fs::read_dir(repo().join("plugin-api/src")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), api.join("src").join(entry.file_name())).unwrap();
    }
    let edit = |path: &Path, from: &str, to: &str| {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.contains(from), "{} no longer contains {from:?}", path.display());
        std::fs::write(path, text.replacen(from, to, 1)).unwrap();
    };
    let version = match skew {
        Skew::Layout => "0.1.1",
        Skew::Version => "0.2.0",
    };
    edit(&api.join("Cargo.toml"), "version = \"0.1.0\"", &format!("version = \"{version}\""));
    if let Skew::Layout = skew {
        let abi = api.join("src/abi.rs");
        edit(
            &abi,
            "    pub info: extern \"C\" fn() -> RString,",
            "    pub info: extern \"C\" fn() -> RString,\n    pub extra: u64,",
        );
        edit(&abi, "Plugin { info, new_rig }", "Plugin { info, extra: 0, new_rig }");
    }
    // The workspace manifest and lock of the real repo, so dependencies resolve (and compile) the same way.
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let manifest: String = manifest
        .lines()
        .map(|l| if l.starts_with("members") { "members = [\"plugin-api\", \"plugin\"]" } else { l })
        .filter(|l| !l.starts_with("default-members"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(
        root.join("Cargo.toml"),
        manifest.replace("version = \"0.1.0\" }", &format!("version = \"{version}\" }}")),
    )
    .unwrap();
    std::fs::copy(repo().join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
    std::fs::create_dir_all(root.join("plugin/src")).unwrap();
    std::fs::write(root.join("plugin/Cargo.toml"), SKEW_MANIFEST).unwrap();
    std::fs::write(root.join("plugin/src/lib.rs"), SKEW_RIG).unwrap();
    let built = cargo_build(&root.join("Cargo.toml"), "fixture-skew");
    let dir = tmp().join(format!("plugins-skew-{name}"));
    install(&built, &dir, &format!("libfixture_skew_{name}.so"));
    dir
}

const SKEW_MANIFEST: &str = r#"[package]
name = "fixture-skew"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
benchhost-plugin-api.workspace = true
serde.workspace = true
"#;

const SKEW_RIG: &str = r#"
use benchhost_plugin_api::{Descriptor, Metric, Outcome, Rig, RigError, SetupContext};
#[derive(serde::Deserialize)]
pub struct Params {}
pub struct Skewed;
impl Rig for Skewed {
    type Params = Params;
    fn describe() -> Descriptor { Descriptor::iterations("skewed", "built against another plugin-api").metric(Metric::iter_time("t")) }
    fn setup(_: Params, _: &SetupContext) -> Result<Self, RigError> { Ok(Skewed) }
    fn iterate(&mut self) -> Result<(), RigError> { Ok(()) }
    fn teardown(self) -> Result<Outcome, RigError> { Ok(Outcome::new()) }
}
benchhost_plugin_api::export_rigs![Skewed];
"#;

/// `benchhost` in a fresh temporary working directory.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox { dir: tempfile::tempdir().unwrap() }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A command running benchhost in the sandbox, with no plugin path from the environment.
    pub fn cmd(&self) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::new(bin());
        cmd.current_dir(self.path()).env_remove("BENCHHOST_PLUGIN_PATH").timeout(std::time::Duration::from_secs(300));
        cmd
    }

    /// The records of the sandbox's results file so far; none while it does not exist.
    pub fn records_if_any(&self, name: &str) -> Vec<Record> {
        let path = self.path().join(name);
        reader::read(&path).map(|s| s.records.into_iter().map(|(_, r)| r).collect()).unwrap_or_default()
    }

    /// Runs `cmd`, which must be refused before anything runs: exit code 2, one line on stderr (returned), and
    /// no record in `out`.
    pub fn refused(&self, cmd: &mut assert_cmd::Command, out: &str) -> String {
        let output = cmd.assert().code(2);
        let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(self.records_if_any(out).is_empty(), "nothing ran");
        stderr
    }

    /// The records of the sandbox's results file, with the problems the reader reported.
    pub fn records(&self, name: &str) -> (Vec<Record>, Vec<String>) {
        let stream = reader::read(&self.path().join(name)).unwrap();
        (stream.records.into_iter().map(|(_, r)| r).collect(), stream.problems)
    }
}

/// Records of `benchhost run --quick --plugin RIG` over the repository's own rigs.toml, which must succeed.
pub fn quick_run_of_repo_matrix(rig: &str) -> Vec<Record> {
    quick_run_of_repo_matrix_with(rig, &[])
}

/// [`quick_run_of_repo_matrix`] with more arguments to `run` (a FILTER, `--set`).
pub fn quick_run_of_repo_matrix_with(rig: &str, args: &[&str]) -> Vec<Record> {
    run_of_repo_matrix(rig, &[&["--quick"], args].concat())
}

/// Records of the whole matrix of RIG (no `quick` table applied), each cell as short as `--quick` times it:
/// for the arms `--quick` leaves out.
pub fn short_run_of_repo_matrix_with(rig: &str, args: &[&str]) -> Vec<Record> {
    let short = ["--warmup", "100ms", "--measurement", "200ms", "--samples", "10"];
    run_of_repo_matrix(rig, &[&short, args].concat())
}

fn run_of_repo_matrix(rig: &str, args: &[&str]) -> Vec<Record> {
    let sandbox = Sandbox::new();
    let rigs = concat!(env!("CARGO_MANIFEST_DIR"), "/../rigs.toml");
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--plugin", rig, "--out", "r.jsonl", "--config", rigs])
        .args(args)
        .arg("--plugin-dir")
        .arg(workspace_plugins());
    cmd.assert().success();
    sandbox.records("r.jsonl").0
}
