//! Where a counted rig keeps its files: a path that is the same on every run, so that the count is too.
//!
//! A rig that writes files names them by their path (an Iceberg table's metadata holds every file's absolute
//! URI), and comparing, hashing and copying those names costs instructions that depend on their bytes: under
//! the run's work dir, whose name is random (`benchhost-run-XXXXXX`), the `storage = fs` cells counted
//! 0.09-0.15% apart from run to run. So a count's scratch dir is `$TMPDIR/benchhost-count-{uid}/{slot}/scratch`,
//! in the first slot no other process holds (an exclusive lock on `{slot}.lock`): slot 0 whenever counts do not
//! run side by side, which is what makes two runs' counts equal.

use std::fs::{DirBuilder, File, TryLockError};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// How many counts may run side by side on one machine before the next one is refused.
const SLOTS: usize = 64;

/// A count's scratch directory, empty when claimed, held (locked against other processes) until dropped, and
/// emptied then.
pub struct CountDir {
    scratch: PathBuf,
    _lock: File,
}

impl CountDir {
    /// The first free slot under `$TMPDIR/benchhost-count-{uid}`.
    pub fn claim() -> io::Result<CountDir> {
        let uid = unsafe { libc::geteuid() };
        CountDir::claim_in(&std::env::temp_dir().join(format!("benchhost-count-{uid}")))
    }

    /// The first free slot under `root`, which is made (mode 0700) if missing and must otherwise be a
    /// directory of this user's that no one else may enter: a predictable path in a shared `/tmp` is only
    /// safe to use when nobody else could have planted it.
    pub fn claim_in(root: &Path) -> io::Result<CountDir> {
        own_private_dir(root)?;
        for slot in 0..SLOTS {
            let lock =
                File::options().create(true).truncate(false).write(true).open(root.join(format!("{slot}.lock")))?;
            match lock.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => continue,
                Err(TryLockError::Error(e)) => return Err(e),
            }
            let scratch = root.join(slot.to_string()).join("scratch");
            let _ = std::fs::remove_dir_all(&scratch);
            DirBuilder::new().recursive(true).mode(0o700).create(&scratch)?;
            return Ok(CountDir { scratch, _lock: lock });
        }
        Err(io::Error::other(format!("all {SLOTS} count slots under {} are held by other processes", root.display())))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.scratch
    }
}

impl Drop for CountDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// Makes `dir` with mode 0700, or checks that the one there is a real directory (not a link), this user's,
/// and closed to everyone else.
fn own_private_dir(dir: &Path) -> io::Result<()> {
    match DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        other => return other,
    }
    let meta = std::fs::symlink_metadata(dir)?;
    let uid = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(io::Error::other(format!(
            "{} is not a private directory of user {uid} (it is {}, owned by {}, mode {:o}); remove it",
            dir.display(),
            if meta.is_dir() { "a directory" } else { "not a directory" },
            meta.uid(),
            meta.mode() & 0o7777
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_count_dir_is_the_same_path_each_time_it_is_free_and_another_while_held() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("count");
        let first = CountDir::claim_in(&root).unwrap();
        std::fs::write(first.path().join("left-over"), b"x").unwrap();
        let beside = CountDir::claim_in(&root).unwrap();
        assert_ne!(first.path(), beside.path(), "a held slot is not handed out twice");
        let path = first.path().to_owned();
        drop(first);
        let again = CountDir::claim_in(&root).unwrap();
        assert_eq!(again.path(), path, "the first free slot again, so the same path");
        assert_eq!(std::fs::read_dir(again.path()).unwrap().count(), 0, "claimed empty");
    }

    #[test]
    fn a_root_others_may_enter_is_refused_with_its_path() {
        let root = tempfile::tempdir().unwrap();
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let message = CountDir::claim_in(root.path()).err().expect("refused").to_string();
        assert!(message.contains(&root.path().display().to_string()) && message.contains("777"), "{message}");
    }
}
