//! A length check for ELF shared objects, run before `dlopen`.
//!
//! The dynamic loader maps a library's segments by the offsets in its headers and does not compare them with
//! the file's length, so a plugin cut short by an interrupted copy can load "successfully" and die later with
//! SIGBUS on the first touch of a page past the end. The headers say how long the file must be; checking that
//! first turns the crash into a one-line reason.

use std::io::Read;
use std::path::Path;

const PT_LOAD: u32 = 1;

/// `Err` with a one-line reason when `path` is a 64-bit little-endian ELF file shorter than its headers say.
/// Anything else (not ELF, another class, unreadable) is left to the loader to judge.
pub fn check_length(path: &Path) -> Result<(), String> {
    let Ok(mut file) = std::fs::File::open(path) else { return Ok(()) };
    let Ok(len) = file.metadata().map(|m| m.len()) else { return Ok(()) };
    let mut bytes = Vec::new();
    // Program headers follow the ELF header in every linker's output; 64 KiB covers them many times over.
    if file.by_ref().take(64 << 10).read_to_end(&mut bytes).is_err() {
        return Ok(());
    }
    match needed_length(&bytes) {
        Some(needed) if needed > len => {
            Err(format!("truncated: its ELF headers describe {needed} bytes, the file has {len}"))
        }
        _ => Ok(()),
    }
}

/// The least length a file with these leading bytes must have: the end of its section header table and of
/// every loadable segment. `None` when the bytes are not a 64-bit little-endian ELF header.
fn needed_length(bytes: &[u8]) -> Option<u64> {
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" || bytes[4] != 2 || bytes[5] != 1 {
        return None;
    }
    let u16_at = |at: usize| Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?) as u64);
    let u32_at = |at: usize| Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?));
    let (phoff, shoff) = (u64_at(0x20)?, u64_at(0x28)?);
    let (phentsize, phnum) = (u16_at(0x36)?, u16_at(0x38)?);
    let (shentsize, shnum) = (u16_at(0x3A)?, u16_at(0x3C)?);
    // Offsets come from the file, so every sum is checked: a crafted header must give `None`, not a panic.
    let mut needed = shoff.saturating_add(shentsize * shnum).max(phoff.saturating_add(phentsize * phnum));
    for i in 0..phnum {
        let header = usize::try_from(phoff.checked_add(i * phentsize)?).ok()?;
        if u32_at(header)? == PT_LOAD {
            needed = needed.max(u64_at(header.checked_add(0x08)?)?.saturating_add(u64_at(header.checked_add(0x20)?)?));
        }
    }
    Some(needed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_test_binary_is_as_long_as_its_headers_say_and_a_cut_copy_is_not() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let needed = needed_length(&me).expect("the test binary is ELF64 LE");
        assert!(needed <= me.len() as u64 && needed > me.len() as u64 / 2, "{needed} of {}", me.len());
        let dir = tempfile::tempdir().unwrap();
        let cut = dir.path().join("cut.so");
        std::fs::write(&cut, &me[..me.len() / 2]).unwrap();
        let err = check_length(&cut).unwrap_err();
        assert!(err.starts_with("truncated: its ELF headers describe "), "{err}");
        assert!(err.ends_with(&format!("the file has {}", me.len() / 2)), "{err}");
        std::fs::write(&cut, b"not ELF at all").unwrap();
        assert_eq!(check_length(&cut), Ok(()), "non-ELF files are left to the loader");
    }

    #[test]
    fn offsets_near_the_top_of_u64_are_no_panic() {
        // regression: `phoff + i * phentsize` overflowed (a panic in a debug build) on a crafted header.
        let mut header = vec![0u8; 64];
        header[..6].copy_from_slice(b"\x7fELF\x02\x01");
        header[0x20..0x28].copy_from_slice(&(u64::MAX - 10).to_le_bytes());
        header[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        header[0x38..0x3A].copy_from_slice(&3u16.to_le_bytes());
        assert_eq!(needed_length(&header), None);
        // A header table inside the bytes whose entry points past usize arithmetic's reach.
        header[0x20..0x28].copy_from_slice(&(usize::MAX as u64 - 0x10).to_le_bytes());
        assert_eq!(needed_length(&header), None);
    }
}
