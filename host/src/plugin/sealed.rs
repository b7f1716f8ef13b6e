//! A library's bytes as the run read them once, in a sealed memfd its children inherit: each child copies its
//! private copy from there without hashing it again.
//!
//! Why: every process of a duel loads each library from a private copy (see `library::private_copy`), and
//! hashed what it copied so that the code that runs is the code that was checked. For the DataFusion rigs
//! (151 MB libraries) that hashing was ~0.15 s per library and process: 8 s of a 40 s compaction comparison
//! of 28 processes (perf, this VM). A memfd sealed against writing, shrinking and growing cannot change after
//! its hash was taken, so a child that finds those seals on it may trust the hash the run took.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::path::Path;

/// The seals a library's memfd must carry for a child to trust its hash.
const SEALS: libc::c_int = libc::F_SEAL_WRITE | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW;

/// A library's bytes in a sealed memfd, open (and inherited by every child) for the life of the run.
#[derive(Debug)]
pub struct SealedLibrary {
    file: File,
    /// SHA-256 of the bytes it holds, lowercase hex.
    pub sha256: String,
}

impl SealedLibrary {
    /// The bytes of the library at `path`, hashed as they are copied into a new memfd, then sealed.
    pub fn of(path: &Path) -> std::io::Result<SealedLibrary> {
        // Not close-on-exec: children inherit it and find it by number.
        let mut file = memfd(c"benchhost-library", libc::MFD_ALLOW_SEALING)?;
        let sha256 = copy_hashing(File::open(path)?, &mut file)?;
        // Safety: fcntl on a descriptor this function owns.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, SEALS | libc::F_SEAL_SEAL) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(SealedLibrary { file, sha256 })
    }

    /// Its descriptor, as children inherit it.
    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}

/// The inherited sealed memfd `fd`, opened anew (its own offset), if it carries every seal of [`SEALS`].
pub fn open_inherited(fd: RawFd) -> Result<File, String> {
    // Safety: F_GET_SEALS only reads the descriptor's flags; a bad number is an error, not undefined behaviour.
    let seals = unsafe { libc::fcntl(fd, libc::F_GET_SEALS) };
    if seals < 0 || seals & SEALS != SEALS {
        return Err(format!("descriptor {fd} is not a sealed library (seals {seals:#x})"));
    }
    File::open(format!("/proc/self/fd/{fd}")).map_err(|e| format!("cannot open descriptor {fd}: {e}"))
}

/// A new memfd named `name` with `flags`.
pub fn memfd(name: &std::ffi::CStr, flags: libc::c_uint) -> std::io::Result<File> {
    // Safety: a NUL-terminated name; on success the descriptor is new and owned by the returned File.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // Safety: see above.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Copies everything `reader` yields into `writer`; the SHA-256 of it, lowercase hex.
pub fn copy_hashing(mut reader: impl Read, writer: &mut impl Write) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    let (mut hasher, mut buffer) = (Sha256::new(), vec![0u8; 1 << 20]);
    loop {
        let n = reader.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        writer.write_all(&buffer[..n])?;
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_library_holds_the_bytes_it_hashed_and_cannot_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libx.so");
        let bytes: Vec<u8> = (0..2_500_000u32).map(|i| (i % 253) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let sealed = SealedLibrary::of(&path).unwrap();
        assert_eq!(sealed.sha256, crate::plugin::library::sha256_of(File::open(&path).unwrap()).unwrap());
        let mut opened = open_inherited(sealed.fd()).unwrap();
        let mut read = Vec::new();
        opened.read_to_end(&mut read).unwrap();
        assert!(read == bytes, "the bytes of the file");
        let mut writer = std::fs::OpenOptions::new().write(true).open(format!("/proc/self/fd/{}", sealed.fd()));
        let refused =
            writer.as_mut().map_err(|e| e.to_string()).and_then(|w| w.write_all(b"x").map_err(|e| e.to_string()));
        assert!(refused.is_err(), "sealed against writing");
    }

    #[test]
    fn a_descriptor_without_the_seals_is_not_trusted() {
        let plain = tempfile::tempfile().unwrap();
        let err = open_inherited(plain.as_raw_fd()).unwrap_err();
        assert!(err.contains("is not a sealed library"), "{err}");
        let unsealed = memfd(c"unsealed", libc::MFD_ALLOW_SEALING).unwrap();
        assert!(open_inherited(unsealed.as_raw_fd()).is_err());
    }
}
