//! Opens one plugin library in *this* process. Only child processes call it: loading runs the library's
//! constructors, and a broken library must take down a child, never `benchhost run`.
//!
//! Each library is loaded with `lib_header_from_path(..)?.init_root_module()`, never
//! `RootModule::load_from_file`, which caches the first module per type and would hand back the first plugin
//! for every later path.

use std::ffi::{CStr, c_char};
use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use abi_stable::library::{LibraryError, RawLibrary, lib_header_from_path};
use benchhost_plugin_api::abi::{API_VERSION, API_VERSION_SYMBOL, PluginInfo, PluginRef};

use crate::plugin::sealed::open_inherited;

/// A library opened in this process: its root module, what it says of itself, and the SHA-256 of the very
/// bytes that were loaded.
pub struct Opened {
    /// The root module.
    pub root: PluginRef,
    /// Its self-description.
    pub info: PluginInfo,
    /// SHA-256 of the file that was loaded, lowercase hex.
    pub sha256: String,
}

/// How a child loads a library.
#[derive(Debug, Clone, Copy)]
pub enum Load<'a> {
    /// From its file, hashed through the descriptor it is loaded from (a probe).
    InPlace,
    /// From a private copy of its own (see [`private_copy`]): of the file, hashed once copied, or of the
    /// run's sealed memfd of it (`(descriptor, its SHA-256)`, see `plugin::sealed`), whose hash holds.
    PrivateCopy { sealed: Option<(i32, &'a str)> },
}

/// A library's bytes as they will be loaded: the file (its private copy, or itself for a probe) and their
/// SHA-256.
pub struct Prepared {
    file: File,
    sha256: String,
}

/// The bytes of the library at `path` made ready to load as `load` says (see [`open_prepared`]): copied, for a
/// private copy, which is most of a load's time (~0.09 s for a 151 MB library), so a duel prepares its two
/// arms' copies side by side.
pub fn prepare(path: &Path, load: Load<'_>) -> Result<Prepared, String> {
    let (file, sha256) = match load {
        // A child that did not inherit the sealed descriptor (a wrapper closed it) reads the file instead.
        Load::PrivateCopy { sealed: Some((fd, sha256)) } if let Ok(sealed) = open_inherited(fd) => {
            let (copy, _) = private_copy(sealed, false)?;
            (copy, sha256.to_string())
        }
        Load::PrivateCopy { .. } => {
            let original = File::open(path).map_err(|e| format!("cannot open it: {e}"))?;
            let (copy, sha256) = private_copy(original, true)?;
            (copy, sha256.expect("hashed as copied"))
        }
        Load::InPlace => {
            let original = File::open(path).map_err(|e| format!("cannot open it: {e}"))?;
            let sha256 = sha256_of(&original).map_err(|e| format!("cannot read it: {e}"))?;
            (original, sha256)
        }
    };
    Ok(Prepared { file, sha256 })
}

/// Loads the library at `path` and reads its self-description; with a `pin`, only if its SHA-256 is that. The
/// file is opened once, hashed through that descriptor (or copied from the run's sealed memfd of it) and
/// loaded through `/proc/self/fd/N`: the code that runs is the code that was hashed, even if the path is
/// replaced after the parent checked it. The error is one line.
pub fn open(path: &Path, pin: Option<&str>, load: Load<'_>) -> Result<Opened, String> {
    open_prepared(prepare(path, load)?, pin)
}

/// Loads a library [`prepare`]d, as [`open`] does.
pub fn open_prepared(prepared: Prepared, pin: Option<&str>) -> Result<Opened, String> {
    let Prepared { file, sha256 } = prepared;
    if let Some(pin) = pin.filter(|pin| **pin != sha256) {
        return Err(format!("refused: its sha256 is {sha256}, its pin is {pin} (it changed after it was checked)"));
    }
    let loaded = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    crate::plugin::elf::check_length(&loaded).map_err(|why| format!("not a loadable library: {why}"))?;
    let theirs = api_version(&loaded)?;
    let root =
        lib_header_from_path(&loaded).and_then(|header| header.init_root_module::<PluginRef>()).map_err(|err| {
            format!("built against plugin-api {theirs}, this benchhost has {API_VERSION}: {}", error_lines(&err))
        })?;
    let json = (root.info())();
    let value: serde_json::Value =
        serde_json::from_str(json.as_str()).map_err(|e| format!("its plugin info is not JSON: {e}"))?;
    if let Some(err) = value.get("error") {
        let message = err.get("message").and_then(|m| m.as_str()).unwrap_or("unknown error");
        return Err(format!("it failed to describe its rigs: {message}"));
    }
    let info: PluginInfo = serde_json::from_value(value).map_err(|e| format!("its plugin info is invalid: {e}"))?;
    // The library stays mapped for the life of the process; the descriptor may stay open with it.
    std::mem::forget(file);
    Ok(Opened { root, info, sha256 })
}

/// A copy of `source` in a memfd of this process's own, and with `hash` the SHA-256 of the bytes copied.
///
/// Why: a file's pages stay in the page cache at the same physical addresses for every process that maps it, so
/// where its code lands in the physically indexed caches is fixed per file: on the AMD EPYC VM class two
/// byte-identical copies of a rig compared 0.4-4% apart, the same way in every process (facts.md, issue 31).
/// A copy written by this process gets pages of its own, and written in a shuffled order (from the run's sealed
/// memfd, the usual way) a placement of its own too, which becomes between-process noise the verdict's interval
/// carries. (A memfd rather than a file in the scratch directory: nothing for the file system to allocate and
/// truncate.) With `hash`, the file is first copied front to back into a staging memfd, hashed as it is read,
/// and the private copy is written from that in a shuffled order: a child without the run's sealed memfd (every
/// process of a comparison over code layouts, whose layouts the run does not seal) gets a placement of its own
/// too (written in order, the copies of a run's layouts shared one again), the hash is of the very bytes it
/// loads, and the file is read in order. Read in a shuffled order, a file the kernel had paged out (the VM's
/// DAMON pages out cold file pages) came back a page at a time without read-ahead: cache_tier's processes on
/// its layouts took ~1.9 s where they had taken ~0.65 s.
fn private_copy(source: File, hash: bool) -> Result<(File, Option<String>), String> {
    use crate::plugin::sealed::{copy_hashing, memfd};
    let fail = |e: std::io::Error| format!("copying it into memory: {e}");
    let copy = memfd(c"benchhost-plugin", libc::MFD_CLOEXEC).map_err(fail)?;
    let sha256 = match hash {
        true => {
            let mut staged = memfd(c"benchhost-staged", libc::MFD_CLOEXEC).map_err(fail)?;
            let sha256 = copy_hashing(source, &mut staged).map_err(fail)?;
            copy_shuffled(&staged, &copy).map_err(fail)?;
            Some(sha256)
        }
        false => {
            copy_shuffled(&source, &copy).map_err(fail)?;
            None
        }
    };
    Ok((copy, sha256))
}

/// What a private copy is written in, in a random order: pages (64 KiB chunks kept their pages' colours).
const SHUFFLED_CHUNK: u64 = 4096;

/// Copies `source` into `copy` a page at a time in an order drawn anew by each process, so that which physical
/// page (and cache colour) holds which part of the code is drawn anew too. Why: the kernel hands a process the
/// pages the one before it freed, in much the same order (pagemap, a cache_tier duel on the AMD VM: ~38% of one
/// child's frames were under the next child's copies, and the colour at a file offset, frame mod 8, agreed
/// between them in up to 39% of offsets where chance is 12.5%), so a copy written front to back gave the
/// processes of one run a placement in common, and the next run another. Chunks of 64 KiB still agreed up to
/// 39%: the frames come in aligned runs, so a chunk's pages keep their colours; single pages agree 11.6-12.8%.
fn copy_shuffled(source: &File, copy: &File) -> std::io::Result<()> {
    use std::hash::BuildHasher;
    use std::os::unix::fs::FileExt;
    let len = source.metadata()?.len();
    copy.set_len(len)?;
    let keys = std::collections::hash_map::RandomState::new();
    let mut order: Vec<u64> = (0..len.div_ceil(SHUFFLED_CHUNK)).collect();
    order.sort_by_cached_key(|chunk| keys.hash_one(chunk));
    let copy_pages = |pages: &[u64]| {
        let mut buffer = vec![0; SHUFFLED_CHUNK as usize];
        for at in pages.iter().map(|chunk| chunk * SHUFFLED_CHUNK) {
            let bytes = &mut buffer[..(len - at).min(SHUFFLED_CHUNK) as usize];
            source.read_exact_at(bytes, at)?;
            copy.write_all_at(bytes, at)?;
        }
        Ok(())
    };
    // Two threads, each a half of the order: 86 ms for the 151 MB lakehouse library where one took 140 ms
    // (AMD VM; a sequential copy takes 73-91 ms), and a plain run copies a library in every cell.
    let halves: Vec<&[u64]> = order.chunks(order.len().div_ceil(2).max(1)).collect();
    crate::in_order::map_in_order(halves, 2, copy_pages).into_iter().collect()
}

/// SHA-256 of everything `reader` yields, lowercase hex.
pub fn sha256_of(mut reader: impl Read) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    std::io::copy(&mut reader, &mut hasher)?;
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The plugin-api version a library was built against, from a plain C symbol that is readable even when
/// the layout check fails.
fn api_version(path: &Path) -> Result<String, String> {
    let raw = RawLibrary::load_at(path).map_err(|err| match err {
        LibraryError::OpenError { err, .. } => format!("not a loadable library: {}", last_part(&err.to_string())),
        other => first_line(&other.to_string()),
    })?;
    // Safety: the symbol is declared by `export_rigs!` as `extern "C" fn() -> *const u8` returning a
    // NUL-terminated static string; a library without it is rejected before the call.
    let version = unsafe {
        let symbol = raw
            .get::<extern "C" fn() -> *const c_char>(API_VERSION_SYMBOL)
            .map_err(|_| "not a benchhost plugin (it exports no `benchhost_plugin_api_version`)".to_string())?;
        CStr::from_ptr(symbol()).to_string_lossy().into_owned()
    };
    // Libraries are never unloaded (abi_stable leaks them on purpose too).
    std::mem::forget(raw);
    Ok(version)
}

/// abi_stable's report on a layout mismatch is a 1,000-line dump; its `Error:` lines say what matters.
pub fn error_lines(err: &LibraryError) -> String {
    let text = err.to_string();
    let mut errors: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| l.starts_with("Error:")) {
        let line = line.trim_start_matches("Error:").trim().to_string();
        if !errors.contains(&line) {
            errors.push(line);
        }
    }
    if errors.is_empty() {
        // Version mismatches and other short errors: collapse the whole message onto one line.
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        errors.join("; ")
    }
}

fn first_line(text: &str) -> String {
    text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("unknown error").to_string()
}

/// dlopen errors repeat the path before the reason; keep the reason.
fn last_part(text: &str) -> String {
    text.rsplit(": ").next().unwrap_or(text).trim().to_string()
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    #[test]
    fn a_private_copy_holds_the_same_bytes_in_memory_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let original = dir.path().join("libx.so");
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&original, &bytes).unwrap();
        let (copy, sha256) = private_copy(File::open(&original).unwrap(), true).unwrap();
        assert_eq!(sha256, Some(sha256_of(File::open(&original).unwrap()).unwrap()), "the hash of the bytes copied");
        let loaded = std::fs::read(format!("/proc/self/fd/{}", copy.as_raw_fd())).unwrap();
        assert!(loaded == bytes, "the copy holds the same bytes");
        let (a, b) = (copy.metadata().unwrap(), std::fs::metadata(&original).unwrap());
        assert_ne!(a.ino(), b.ino(), "an inode, so pages, of its own");
        assert_eq!(a.nlink(), 0, "in no directory");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing left beside the library");
        let (again, unhashed) = private_copy(File::open(&original).unwrap(), false).unwrap();
        assert_eq!(unhashed, None);
        assert_ne!(again.metadata().unwrap().ino(), a.ino(), "every load draws its own");
        let shuffled = std::fs::read(format!("/proc/self/fd/{}", again.as_raw_fd())).unwrap();
        assert!(shuffled == bytes, "written page by page in a shuffled order (the last one short), the same bytes");
    }

    #[test]
    fn a_library_whose_bytes_are_not_the_pinned_ones_is_refused_with_both_sums() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libx.so");
        std::fs::write(&path, b"not the pinned bytes").unwrap();
        let actual = sha256_of(File::open(&path).unwrap()).unwrap();
        let pin = "0".repeat(64);
        for load in [Load::InPlace, Load::PrivateCopy { sealed: None }] {
            let Err(err) = open(&path, Some(&pin), load) else { panic!("{load:?} loaded") };
            assert!(
                err.contains(&actual) && err.contains(&pin) && err.contains("(it changed after it was checked)"),
                "{err}"
            );
        }
        // A sealed copy is trusted for its sha256: a pin it does not match is refused just the same.
        let sealed = crate::plugin::sealed::SealedLibrary::of(&path).unwrap();
        let Err(err) = open(&path, Some(&pin), Load::PrivateCopy { sealed: Some((sealed.fd(), &sealed.sha256)) })
        else {
            panic!("sealed loaded")
        };
        assert!(err.contains(&actual), "{err}");
    }
}
