//! A plugin library's layout variants: the same objects linked again, each with a seed of its own
//! ([`crate::plugin::relink`]), kept beside the build under `layouts/`:
//!
//! ```text
//! target/release/librig_wal.so                      the library cargo built
//! target/release/layouts/librig_wal.so.link         its link line, printed by rustc under `benchhost build`
//! target/release/layouts/librig_wal.so.sha256       the SHA-256 of the library that link made
//! target/release/layouts/librig_wal/seed-7.so       layout seed 7, linked when first needed
//! target/release/layouts/librig_wal/library.sha256  which library the variants are of
//! target/release/layouts/librig_wal.lock            held while a variant is made
//! ```
//!
//! A link line is used only while the library beside it is the one it made: a later `cargo build` (without
//! `benchhost build`) makes another library from other objects, and its old variants and link are then of
//! something else. Variants copied without their link (a bisection's builds) serve the seeds they have.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::plugin::relink::Recipe;

/// The directory of a build's variants and link lines.
pub const DIR: &str = "layouts";

/// The layout variants of one library.
#[derive(Debug, Clone)]
pub struct Variants {
    /// Where its variants are (`layouts/librig_wal`).
    dir: PathBuf,
    /// Its link, when the library beside it is the one that link made.
    recipe: Option<Recipe>,
    /// The library's SHA-256.
    sha256: String,
}

/// The file of a library's link line (`layouts/librig_wal.so.link`) in the build directory `dir`.
pub fn link_file(dir: &Path, library: &str) -> PathBuf {
    dir.join(DIR).join(format!("{library}.link"))
}

/// The file of the SHA-256 of the library a link line made.
pub fn made_file(dir: &Path, library: &str) -> PathBuf {
    dir.join(DIR).join(format!("{library}.sha256"))
}

impl Variants {
    /// The variants of the library at `path`, whose SHA-256 is `sha256`: `None` when it has neither a link
    /// line that made it nor variants made of it.
    pub fn of(path: &Path, sha256: &str) -> Option<Variants> {
        let (build, name) = (path.parent()?, path.file_name()?.to_str()?);
        let dir = build.join(DIR).join(name.strip_suffix(".so").unwrap_or(name));
        let made = std::fs::read_to_string(made_file(build, name)).ok();
        let recipe = match made {
            Some(made) if made.trim() == sha256 => {
                std::fs::read_to_string(link_file(build, name)).ok().and_then(|t| Recipe::parse(&t).ok())
            }
            _ => None,
        };
        let kept = std::fs::read_to_string(dir.join("library.sha256")).is_ok_and(|s| s.trim() == sha256);
        (recipe.is_some() || kept).then(|| Variants { dir, recipe, sha256: sha256.to_string() })
    }

    /// The file of layout `seed`.
    pub fn path(&self, seed: u64) -> PathBuf {
        self.dir.join(format!("seed-{seed}.so"))
    }

    /// The file of layout `seed`, linked now if it was not before; whether it was linked now.
    pub fn ensure(&self, seed: u64) -> Result<(PathBuf, bool)> {
        let path = self.path(seed);
        if self.owned() && path.is_file() {
            return Ok((path, false));
        }
        // Another benchhost may be making this library's layouts (two runs, or the processes of one test
        // suite, on one build): one at a time, or one would clear or rename what the other is writing.
        let lock = self.dir.with_extension("lock");
        std::fs::create_dir_all(self.dir.parent().unwrap_or(Path::new(".")))?;
        let lock = std::fs::File::create(&lock).with_context(|| format!("creating {}", lock.display()))?;
        lock.lock().with_context(|| format!("waiting for the layouts of {}", self.dir.display()))?;
        if self.owned() && path.is_file() {
            return Ok((path, false));
        }
        let Some(recipe) = &self.recipe else {
            bail!("no layout seed {seed} of {} and no link line to make it", self.dir.display())
        };
        if !self.owned() {
            // Variants of an older library: another library's now.
            let _ = std::fs::remove_dir_all(&self.dir);
        }
        std::fs::create_dir_all(&self.dir).with_context(|| format!("creating {}", self.dir.display()))?;
        std::fs::write(self.dir.join("library.sha256"), &self.sha256)?;
        recipe.relink(&path, seed)?;
        Ok((path, true))
    }

    /// Whether layouts not made yet can be: its link line is at hand (not a bisection's copies, which serve the
    /// seeds they have).
    pub fn can_link(&self) -> bool {
        self.recipe.is_some()
    }

    /// The seeds of the layouts made of this library so far, in order.
    pub fn made(&self) -> Vec<u64> {
        if !self.owned() {
            return Vec::new();
        }
        let names =
            std::fs::read_dir(&self.dir).into_iter().flatten().filter_map(|e| e.ok()?.file_name().into_string().ok());
        let mut seeds: Vec<u64> =
            names.filter_map(|n| n.strip_prefix("seed-")?.strip_suffix(".so")?.parse().ok()).collect();
        seeds.sort_unstable();
        seeds
    }

    /// Whether the variants in the directory are of this library.
    fn owned(&self) -> bool {
        std::fs::read_to_string(self.dir.join("library.sha256")).is_ok_and(|s| s.trim() == self.sha256)
    }
}

/// Makes layouts `1..=seeds` of the library `built` (whose link its build kept) and copies them beside its
/// copy `kept`, as variants of `kept` (a bisection keeps each commit's libraries apart from the target
/// directory, whose objects the next commit's build overwrites).
pub fn copy_layouts(built: &Path, kept: &Path, seeds: u64) -> Result<()> {
    let sha256 = crate::plugin::library::sha256_of(std::fs::File::open(kept)?)?;
    let Some(from) = Variants::of(built, &sha256) else { return Ok(()) };
    let (parent, name) = (kept.parent().context("a library in a directory")?, kept.file_name().context("a name")?);
    let name = name.to_string_lossy();
    let dir = parent.join(DIR).join(name.strip_suffix(".so").unwrap_or(&name));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for seed in 1..=seeds {
        let (made, _) = from.ensure(seed)?;
        std::fs::copy(&made, dir.join(format!("seed-{seed}.so")))
            .with_context(|| format!("copying layout {seed} to {}", dir.display()))?;
    }
    std::fs::write(dir.join("library.sha256"), sha256)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build directory holding `librig_x.so` and a link line that made it; a shell stands in for the linker
    /// and writes the seed it was given into the output.
    fn build_with_link(dir: &Path) -> PathBuf {
        let library = dir.join("librig_x.so");
        std::fs::write(&library, b"plain").unwrap();
        std::fs::create_dir_all(dir.join(DIR)).unwrap();
        let script = r#"out="$2"; seed="${3#-Wl,--randomize-section-padding=}"; echo "seed $seed" > "$out""#;
        let line = format!(r#""sh" "-c" "{}" "sh" "-o" "{}""#, script.replace('"', "\\\""), library.display());
        std::fs::write(link_file(dir, "librig_x.so"), line).unwrap();
        std::fs::write(made_file(dir, "librig_x.so"), "abc").unwrap();
        library
    }

    #[test]
    fn a_variant_is_linked_once_when_first_needed_and_kept_beside_the_build() {
        let dir = tempfile::tempdir().unwrap();
        let library = build_with_link(dir.path());
        let variants = Variants::of(&library, "abc").unwrap();
        let (path, linked) = variants.ensure(7).unwrap();
        assert!(linked);
        assert_eq!(path, dir.path().join("layouts/librig_x/seed-7.so"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "seed 7\n");
        assert!(!variants.ensure(7).unwrap().1, "made once");
    }

    #[test]
    fn a_link_line_of_another_library_is_not_used_and_its_old_variants_are_not_served() {
        let dir = tempfile::tempdir().unwrap();
        let library = build_with_link(dir.path());
        Variants::of(&library, "abc").unwrap().ensure(3).unwrap();
        // `cargo build` made another library since: the link line and seed 3 are of the old one.
        assert!(Variants::of(&library, "def").is_none());
        // Variants copied without a link line (a bisection's build) serve what they have, and only that.
        std::fs::remove_file(link_file(dir.path(), "librig_x.so")).unwrap();
        let kept = Variants::of(&library, "abc").unwrap();
        assert!(!kept.ensure(3).unwrap().1, "kept");
        assert!(kept.ensure(5).unwrap_err().to_string().contains("no link line to make it"));
    }
}
