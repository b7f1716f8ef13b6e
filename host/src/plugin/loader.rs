//! Finds plugin libraries and learns what they hold, without loading any of them into this process: each
//! candidate is opened by a short-lived child (`benchhost __child` with a probe task), so a library that
//! crashes in its constructors or fails abi_stable's checks costs one line, not the run.
//!
//! Search order: `--plugin-dir` (repeatable), `BENCHHOST_PLUGIN_PATH` (colon-separated), the directory of the
//! running executable, and its parent. The first library providing a rig name wins.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use benchhost_plugin_api::Descriptor;
use benchhost_plugin_api::abi::PluginInfo;

use crate::plan::matrix::Catalog;
use crate::plugin::sealed::SealedLibrary;
use crate::plugin::variants::Variants;
use crate::proc::executor::{End, run_child};
use crate::proc::interrupt::signal_name;
use crate::proc::protocol::{Message, Task};

/// A library that loaded.
#[derive(Debug, Clone)]
pub struct Plugin {
    /// Its file.
    pub path: PathBuf,
    /// What it said about itself.
    pub info: PluginInfo,
    /// SHA-256 of the file, computed when first asked for (plugins can be hundreds of MB; most runs use few).
    sha256: OnceLock<Option<String>>,
    /// The SHA-256 `rigs.toml` pins it to: every child that opens it checks the bytes it loads against this.
    pub pin: Option<String>,
    /// Its bytes in a sealed memfd the children of a run copy from, made when first asked for; `None` when it
    /// could not be made (the children read the file then).
    sealed: OnceLock<Option<Arc<SealedLibrary>>>,
    /// Its layout variants, found when first asked for.
    variants: OnceLock<Option<Variants>>,
}

impl Plugin {
    /// SHA-256 of the library file, lowercase hex; `None` if it cannot be read.
    pub fn sha256(&self) -> Option<&str> {
        self.sha256.get_or_init(|| file_sha256(&self.path).ok()).as_deref()
    }

    /// Its bytes as the run's children load them: see [`SealedLibrary`].
    pub fn sealed(&self) -> Option<&SealedLibrary> {
        self.sealed.get_or_init(|| SealedLibrary::of(&self.path).ok().map(Arc::new)).as_deref()
    }

    /// The library's code layout variants, when its build kept its link (`benchhost build`) or variants made of
    /// it: `None` for a library `rigs.toml` pins, whose bytes must be the pinned ones.
    pub fn variants(&self) -> Option<&Variants> {
        let sha256 = || self.sealed().map(|s| s.sha256.clone()).or_else(|| self.sha256().map(str::to_owned));
        let find = || if self.pin.is_some() { None } else { Variants::of(&self.path, &sha256()?) };
        self.variants.get_or_init(find).as_ref()
    }
}

/// What a library must satisfy before any of its code runs.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// Load libraries whose file or directory others can write (unsafe).
    pub allow_writable: bool,
    /// File name → the SHA-256 it must have (`[sha256]` in `rigs.toml`).
    pub pins: BTreeMap<String, String>,
    /// The file whose `[sha256]` gave the pins, as refusals name it (`rigs.toml`, or `--config`'s).
    pub pinned_in: String,
}

/// A file that was not loaded, and why, in one line.
#[derive(Debug, Clone)]
pub struct Rejected {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub reason: String,
}

/// Every plugin found on the search path.
#[derive(Debug, Default)]
pub struct Loader {
    /// Libraries that loaded, in search order.
    pub plugins: Vec<Plugin>,
    /// Files that did not.
    pub rejected: Vec<Rejected>,
    /// Rigs of the source tree whose plugin was not found: rig → cargo command that builds it.
    pub unbuilt: BTreeMap<String, String>,
}

const PROBE_DEADLINE: Duration = Duration::from_secs(30);

impl Loader {
    /// The directories to search, in order, without duplicates.
    pub fn search_path(plugin_dirs: &[PathBuf], env_path: Option<&str>, exe: &Path) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = plugin_dirs.to_vec();
        dirs.extend(env_path.unwrap_or("").split(':').filter(|s| !s.is_empty()).map(PathBuf::from));
        if let Some(dir) = exe.parent() {
            dirs.push(dir.to_owned());
            dirs.extend(dir.parent().map(Path::to_owned));
        }
        let mut seen = Vec::new();
        dirs.retain(|d| {
            let key = d.canonicalize().unwrap_or_else(|_| d.clone());
            !seen.contains(&key) && {
                seen.push(key);
                true
            }
        });
        dirs
    }

    /// Probes every candidate library in `dirs`, using `exe` as the child. A library that breaks `trust` (others
    /// could have written it, or it is pinned to another SHA-256) is refused before any of its code runs:
    /// dlopen runs its constructors.
    pub fn discover(dirs: &[PathBuf], exe: &Path, trust: &Trust) -> Loader {
        let mut loader = Loader::default();
        let paths: Vec<PathBuf> = dirs.iter().flat_map(|d| candidates(d)).collect();
        // Two at a time: each probe is a child loading a library, up to ~0.13 s for a 150 MB one, and a run probes
        // every library on the search path before its first cell (`list` of this workspace's six: 0.28 s one at a
        // time, 0.16 s two at a time). Two: a core each on the project's 2-core VM, and the most cells the
        // interrupt handler tracks at once.
        let probed = crate::in_order::map_in_order(paths.iter().collect(), 2, |path: &PathBuf| {
            let sha256 = OnceLock::new();
            let refusal =
                crate::plugin::writable::writable_by_others(path).filter(|_| !trust.allow_writable).or_else(|| {
                    let pin = trust.pins.get(path.file_name()?.to_str()?)?;
                    let actual = sha256.get_or_init(|| file_sha256(path).ok()).as_deref().unwrap_or("unreadable");
                    (actual != pin).then(|| format!("refused: its sha256 is {actual}, {} pins {pin}", trust.pinned_in))
                });
            let pin = path.file_name().and_then(|n| trust.pins.get(n.to_str()?)).cloned();
            let info = match refusal {
                Some(reason) => Err(reason),
                None => probe(exe, path, pin.as_deref()),
            };
            (info, sha256, pin)
        });
        for (path, (info, sha256, pin)) in paths.into_iter().zip(probed) {
            match info {
                Ok(info) => loader.plugins.push(Plugin {
                    path,
                    info,
                    sha256,
                    pin,
                    sealed: OnceLock::new(),
                    variants: OnceLock::new(),
                }),
                Err(reason) => loader.rejected.push(Rejected { path, reason }),
            }
        }
        loader.unbuilt = unbuilt_hints(exe, &loader);
        loader
    }

    /// The plugin and descriptor providing `rig` (the first in search order).
    pub fn rig(&self, rig: &str) -> Option<(&Plugin, &Descriptor)> {
        self.plugins.iter().find_map(|p| p.info.rigs.iter().find(|d| d.name == rig).map(|d| (p, d)))
    }

    /// Libraries whose rigs are all provided by an earlier library (for example the same plugin found in
    /// two directories).
    pub fn shadowed(&self) -> Vec<&Plugin> {
        self.plugins
            .iter()
            .filter(|p| {
                !p.info.rigs.is_empty() && p.info.rigs.iter().all(|d| !std::ptr::eq(self.rig(&d.name).unwrap().0, *p))
            })
            .collect()
    }
}

impl Catalog for Loader {
    fn descriptor(&self, rig: &str) -> Option<&Descriptor> {
        self.rig(rig).map(|(_, d)| d)
    }

    fn names(&self) -> Vec<String> {
        let loaded = self.plugins.iter().flat_map(|p| p.info.rigs.iter().map(|d| d.name.clone()));
        loaded.chain(self.unbuilt.keys().cloned()).collect()
    }

    fn build_hint(&self, rig: &str) -> Option<String> {
        self.unbuilt.get(rig).cloned()
    }

    fn refused(&self) -> Vec<String> {
        let refused = self.rejected.iter().filter(|r| r.reason.starts_with("refused"));
        refused.map(|r| format!("{}: {}", r.path.display(), r.reason)).collect()
    }
}

/// Shared libraries in `dir`, skipping cargo's hashed dependency artifacts (`libfoo-0123456789abcdef.so`).
fn candidates(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return vec![] };
    let mut files: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file() && named_as_plugin(p)).collect();
    files.sort();
    files
}

/// Whether discovery looks at `path`: `libNAME.so`, as cargo names a cdylib, but not a hashed copy of one
/// (`deps/libNAME-0123456789abcdef.so`).
pub fn named_as_plugin(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem =
        name.strip_prefix(std::env::consts::DLL_PREFIX).and_then(|n| n.strip_suffix(std::env::consts::DLL_SUFFIX));
    stem.is_some_and(|stem| !is_hashed(stem))
}

/// SHA-256 of a file, lowercase hex.
fn file_sha256(path: &Path) -> std::io::Result<String> {
    crate::plugin::library::sha256_of(std::fs::File::open(path)?)
}

fn is_hashed(stem: &str) -> bool {
    stem.rsplit_once('-').is_some_and(|(_, hash)| hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Loads the library at `path` in a child, as discovery does: what it says of itself, or why it was refused.
pub(crate) fn probe(exe: &Path, path: &Path, pin: Option<&str>) -> Result<PluginInfo, String> {
    let task = Task::Probe { path: path.to_owned(), pin: pin.map(str::to_owned) };
    let child = run_child(exe, &task, PROBE_DEADLINE, None, &mut |_| {});
    for message in child.messages {
        match message {
            Message::Plugin { info, .. } => return Ok(info),
            Message::Rejected { reason } => return Err(reason),
            _ => {}
        }
    }
    Err(match child.end {
        End::Signaled(s) => format!("crashed while loading ({})", signal_name(s)),
        End::Deadline => format!("loading took longer than {}s", PROBE_DEADLINE.as_secs()),
        End::Exited(code) => format!("loading it exited the process (code {code})"),
        End::Violation(why) => format!("protocol violation while probing: {why}"),
        End::SpawnFailed(why) => why,
        End::Interrupted(s) => format!("probing was interrupted by {}", signal_name(s)),
    })
}

/// In-tree rigs (`plugins/*/Cargo.toml` and `benchmarks/*/Cargo.toml` with `[package.metadata.benchhost] rigs = [...]`) that no loaded
/// plugin provides, with the command that builds them. The source tree is looked for from the current
/// directory and from the executable's location (`target/<profile>/benchhost`).
fn unbuilt_hints(exe: &Path, loader: &Loader) -> BTreeMap<String, String> {
    let cwd = std::env::current_dir().ok();
    let roots = cwd.iter().map(PathBuf::as_path).chain(exe.ancestors().skip(1));
    let Some(root) = roots.map(Path::to_owned).find(|r| r.join("plugins").is_dir()) else { return BTreeMap::new() };
    let release = if cfg!(debug_assertions) { "" } else { " --release" };
    let mut hints = BTreeMap::new();
    let crates = ["plugins", "benchmarks"]
        .into_iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).into_iter().flatten().flatten());
    for manifest in crates.map(|e| e.path().join("Cargo.toml")) {
        let Ok(text) = std::fs::read_to_string(&manifest) else { continue };
        let Ok(toml) = text.parse::<toml::Table>() else { continue };
        let package = toml.get("package");
        let name = package.and_then(|p| p.get("name")).and_then(|n| n.as_str());
        let rigs = package.and_then(|p| p.get("metadata")).and_then(|m| m.get("benchhost")).and_then(|b| b.get("rigs"));
        let (Some(name), Some(toml::Value::Array(rigs))) = (name, rigs) else { continue };
        for rig in rigs.iter().filter_map(|r| r.as_str()) {
            if loader.rig(rig).is_none() {
                hints.insert(rig.to_string(), format!("cargo build{release} -p {name}"));
            }
        }
    }
    hints
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_dependency_artifacts_are_not_candidates() {
        assert!(is_hashed("serde_derive-0123456789abcdef"));
        assert!(!is_hashed("rig_wal"));
        assert!(!is_hashed("rig-cache-tier"));
    }

    #[test]
    fn search_path_order_is_flags_then_env_then_exe_dirs() {
        let exe = Path::new("/opt/bh/bin/benchhost");
        let dirs = Loader::search_path(&[PathBuf::from("/a"), PathBuf::from("/b")], Some("/c::/d"), exe);
        let expected: Vec<PathBuf> =
            ["/a", "/b", "/c", "/d", "/opt/bh/bin", "/opt/bh"].iter().map(PathBuf::from).collect();
        assert_eq!(dirs, expected);
    }
}
