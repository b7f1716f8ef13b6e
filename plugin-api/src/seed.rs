//! Set-up data built once and kept: a rig whose set-up spends seconds building the same input every time (a
//! table seeded with the same rows, a corpus encoded the same way) builds it once per library and run, and every
//! later instance reads it.
//!
//! Why: a paired comparison sets both arms up in each of its 6-20 processes. When seeding takes 1.5 s (the
//! querier's 60-file Iceberg table), seeding is most of the comparison's time. What is kept is a pure function of
//! the key and the library's bytes: the host gives each library its own directory (by the SHA-256 of the bytes
//! that were loaded), so two builds never read each other's seed, and each instance must build its own state from
//! the files (copy them, load them), never write to them.

use std::path::{Path, PathBuf};

use crate::{RigError, SetupContext};

impl SetupContext {
    /// Where [`SetupContext::seed`] keeps the seed `key`, known before it is built: `build` writes into another
    /// directory that is then renamed to this path, so a seed that names its own files by absolute path (an
    /// Iceberg table's metadata does) names them here.
    pub fn seed_path(&self, key: &str) -> PathBuf {
        self.seed_dir.clone().unwrap_or_else(|| self.scratch_dir.join("seeds")).join(key)
    }

    /// The directory holding the seed `key`: built by `build` (into a new, empty directory) the first time,
    /// and kept in [`SetupContext::seed_dir`] for every later instance in the run; without a seed directory
    /// (a unit test, an older host) it is built in the scratch directory, for this instance alone.
    ///
    /// `build` must depend on `key` alone (and the library's code), and the directory is read-only once made:
    /// read it, copy from it, never change it. `key` names a directory: letters, digits, `-`, `_` and `.`.
    ///
    /// # Examples
    /// ```
    /// use benchhost_plugin_api::SetupContext;
    /// let scratch = std::env::temp_dir().join(format!("seed-doc-{}", std::process::id()));
    /// let ctx = SetupContext { scratch_dir: scratch.clone(), quick: true, seed_dir: Some(scratch.join("seeds")), ..SetupContext::default() };
    /// let build = |dir: &std::path::Path| Ok(std::fs::write(dir.join("rows.csv"), "1,2,3\n")?);
    /// let first = ctx.seed("rows-3", build).unwrap();
    /// // A later instance finds it and does not build it again.
    /// let again = ctx.seed("rows-3", |_| panic!("built twice")).unwrap();
    /// assert_eq!(first, again);
    /// assert_eq!(std::fs::read_to_string(again.join("rows.csv")).unwrap(), "1,2,3\n");
    /// # std::fs::remove_dir_all(scratch).unwrap();
    /// ```
    pub fn seed(&self, key: &str, build: impl FnOnce(&Path) -> Result<(), RigError>) -> Result<PathBuf, RigError> {
        if key.is_empty()
            || !key.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            || key.starts_with('.')
        {
            return Err(RigError::new(format!("seed key {key:?}: use letters, digits, '-', '_' and '.'")));
        }
        let seed = self.seed_path(key);
        let home = seed.parent().map(Path::to_path_buf).unwrap_or_default();
        if seed.is_dir() {
            return Ok(seed);
        }
        let io = |what: &str, path: &Path, e: std::io::Error| {
            RigError::new(format!("seed {key}: {what} {}: {e}", path.display()))
        };
        std::fs::create_dir_all(&home).map_err(|e| io("creating", &home, e))?;
        // Built aside and renamed into place: a seed is either whole or absent, even if this process dies mid-way
        // or another process (a concurrent pair) builds the same one at the same time.
        // Named by the process in a shared directory; by nothing that differs from run to run in this instance's
        // own (a count's: the path's length would move its allocations).
        let draft = match self.seed_dir {
            Some(_) => home.join(format!(".{key}.{}", std::process::id())),
            None => home.join(format!(".{key}.draft")),
        };
        let _ = std::fs::remove_dir_all(&draft);
        std::fs::create_dir(&draft).map_err(|e| io("creating", &draft, e))?;
        let built = build(&draft);
        let placed = built.and_then(|()| match std::fs::rename(&draft, &seed) {
            Ok(()) => Ok(()),
            Err(_) if seed.is_dir() => Ok(()),
            Err(e) => Err(io("keeping", &seed, e)),
        });
        let _ = std::fs::remove_dir_all(&draft);
        placed.map(|()| seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(root: &Path, shared: bool) -> SetupContext {
        SetupContext {
            scratch_dir: root.join("scratch"),
            quick: true,
            seed_dir: shared.then(|| root.join("seeds")),
            counting: false,
            window_ns: None,
        }
    }

    fn root(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("benchhost-seed-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        root
    }

    #[test]
    fn a_seed_is_built_once_and_found_by_every_later_instance() {
        let root = root("once");
        let mut builds = 0;
        for _ in 0..3 {
            let dir = context(&root, true)
                .seed("table", |dir| {
                    builds += 1;
                    Ok(std::fs::write(dir.join("data"), b"rows")?)
                })
                .unwrap();
            assert_eq!(dir, root.join("seeds/table"));
            assert_eq!(std::fs::read(dir.join("data")).unwrap(), b"rows");
        }
        assert_eq!(builds, 1);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_failed_build_keeps_nothing_and_the_next_instance_builds_again() {
        let root = root("failed");
        let ctx = context(&root, true);
        let err = ctx
            .seed("table", |dir| {
                std::fs::write(dir.join("half"), b"x")?;
                Err(RigError::new("disk full"))
            })
            .unwrap_err();
        assert_eq!(err.message, "disk full");
        assert_eq!(std::fs::read_dir(root.join("seeds")).unwrap().count(), 0, "no seed and no draft left");
        let dir = ctx.seed("table", |dir| Ok(std::fs::write(dir.join("whole"), b"y")?)).unwrap();
        assert!(dir.join("whole").is_file() && !dir.join("half").exists());
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn without_a_seed_dir_the_seed_is_built_in_the_scratch_dir() {
        let root = root("scratch");
        let dir = context(&root, false).seed("table", |dir| Ok(std::fs::write(dir.join("data"), b"rows")?)).unwrap();
        assert_eq!(dir, root.join("scratch/seeds/table"));
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_key_that_is_not_a_plain_name_is_refused() {
        let root = root("keys");
        for key in ["", "../up", "a/b", ".hidden"] {
            let err = context(&root, true).seed(key, |_| panic!("built for {key:?}")).unwrap_err();
            assert!(err.message.starts_with("seed key"), "{key:?}: {}", err.message);
        }
    }
}
