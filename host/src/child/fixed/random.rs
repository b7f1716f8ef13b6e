//! A count's randomness, fixed: the same stream of "random" bytes in every count process.
//!
//! Why: set-ups draw on the OS's randomness (std's `HashMap` seeds, `ahash` in DataFusion, the UUIDs iceberg-rust
//! names files and snapshots with), so two processes walked their maps in other orders, freed in other orders and
//! left glibc's free lists otherwise: the same iterations then cost a few more or fewer instructions in
//! `_int_malloc` and `unlink_chunk`. Counted twice, the cache tier's cells differed by 0.05-2.1%, all of it in the
//! allocator; with this, to the last digit. (Code that makes the raw system call itself, as the `getrandom`
//! crate's 0.2 line does, still gets the kernel's bytes.)

use std::sync::atomic::{AtomicU64, Ordering};

use super::fixed;

/// splitmix64's state.
static STATE: AtomicU64 = AtomicU64::new(SEED);
const SEED: u64 = 0x5EED_0FC0_0175;
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// Fills `bytes` from the fixed stream.
fn fill(bytes: &mut [u8]) {
    for chunk in bytes.chunks_mut(8) {
        let mut z = STATE.fetch_add(GOLDEN, Ordering::Relaxed).wrapping_add(GOLDEN);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
    }
}

/// glibc's `getrandom(2)` wrapper, interposed: the kernel's bytes, or the fixed stream after [`super::fix`].
///
/// # Safety
/// `buf` must be valid for `len` bytes of writes, as for glibc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn getrandom(buf: *mut libc::c_void, len: libc::size_t, flags: libc::c_uint) -> libc::ssize_t {
    if !fixed() {
        // SAFETY: the caller's buffer, as the caller passed it.
        return unsafe { libc::syscall(libc::SYS_getrandom, buf, len, flags) } as libc::ssize_t;
    }
    // SAFETY: the caller promises `len` writable bytes at `buf`.
    fill(unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), len) });
    len as libc::ssize_t
}

/// glibc's `getentropy(3)`, interposed the same way (at most 256 bytes, as glibc's).
///
/// # Safety
/// `buf` must be valid for `len` bytes of writes, as for glibc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn getentropy(buf: *mut libc::c_void, len: libc::size_t) -> libc::c_int {
    if len > 256 {
        // SAFETY: errno is this thread's.
        unsafe { *libc::__errno_location() = libc::EIO };
        return -1;
    }
    let mut done = 0;
    while done < len {
        // SAFETY: within the caller's `len` bytes.
        match unsafe { getrandom(buf.cast::<u8>().add(done).cast(), len - done, 0) } {
            n if n > 0 => done += n as usize,
            // SAFETY: errno is this thread's.
            _ if unsafe { *libc::__errno_location() } == libc::EINTR => {}
            _ => return -1,
        }
    }
    0
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fixed_stream_is_a_stream_and_not_a_constant() {
        let (mut a, mut b) = ([0u8; 13], [0u8; 13]);
        super::fill(&mut a);
        super::fill(&mut b);
        assert_ne!(a, b, "two draws differ");
        assert_ne!(a[..8], a[8..], "so do the words of one draw");
    }

    #[test]
    fn until_fixed_the_bytes_are_the_kernels() {
        let mut bytes = [0u8; 32];
        // SAFETY: a buffer of 32 bytes.
        let n = unsafe { super::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
        assert_eq!(n, 32);
        assert_ne!(bytes, [0u8; 32]);
    }
}
