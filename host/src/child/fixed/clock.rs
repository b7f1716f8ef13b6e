//! A count's time, fixed: after [`super::fix`], every clock reads a virtual time that starts at the same instant
//! in every count and moves on by [`STEP_NS`] at each read, and a wait with a timeout moves it on by the timeout
//! instead of waiting (as tokio's paused clock does). Two counts then read the same times in the same order
//! whatever the machine's speed or Valgrind's, and a rig that sleeps is counted without the wait.
//!
//! Every clock id shares the one virtual time: the monotonic and CPU-time clocks start 1 s after their origin
//! (less than any real uptime, so that an absolute deadline a thread computes from it and hands the kernel, as
//! std's timed waits on a futex do, has passed: the wait returns at once rather than for longer than asked), the
//! real-time clocks at 2026-01-01T00:00:00Z plus the same.
//!
//! Waits interposed: `nanosleep` and `clock_nanosleep` (std's `thread::sleep`), `epoll_wait` and `epoll_pwait`
//! (mio's, so tokio's timers). A wait that would block without a timeout still blocks.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use super::fixed;

/// How far the virtual time moves at each read: a read costs tens of nanoseconds natively, rounded up.
pub const STEP_NS: u64 = 1_000;
/// The virtual time of the first read after [`super::fix`], in nanoseconds since the clock's origin.
const START_NS: u64 = 1_000_000_000;
/// 2026-01-01T00:00:00Z in nanoseconds since the Unix epoch: what the real-time clocks add.
const EPOCH_2026_NS: u64 = 1_767_225_600 * NS_PER_S;
const NS_PER_S: u64 = 1_000_000_000;

/// Nanoseconds of virtual time since [`START_NS`].
static ELAPSED: AtomicU64 = AtomicU64::new(0);

/// glibc's definition of the C function `$name` (the next after ours in the lookup order), looked up once,
/// as a `$ty`.
macro_rules! next {
    ($name:literal, $ty:ty) => {{
        static NEXT: AtomicPtr<libc::c_void> = AtomicPtr::new(std::ptr::null_mut());
        let mut next = NEXT.load(Ordering::Relaxed);
        if next.is_null() {
            // SAFETY: a lookup of a C function by its NUL-terminated name.
            next = unsafe { libc::dlsym(libc::RTLD_NEXT, concat!($name, "\0").as_ptr().cast()) };
            assert!(!next.is_null(), concat!("glibc has no ", $name));
            NEXT.store(next, Ordering::Relaxed);
        }
        // SAFETY: glibc's function of that name, whose C type this is.
        unsafe { std::mem::transmute::<*mut libc::c_void, $ty>(next) }
    }};
}

type ClockGettime = unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int;
type Nanosleep = unsafe extern "C" fn(*const libc::timespec, *mut libc::timespec) -> libc::c_int;
type ClockNanosleep =
    unsafe extern "C" fn(libc::clockid_t, libc::c_int, *const libc::timespec, *mut libc::timespec) -> libc::c_int;
type EpollPwait = unsafe extern "C" fn(
    libc::c_int,
    *mut libc::epoll_event,
    libc::c_int,
    libc::c_int,
    *const libc::sigset_t,
) -> libc::c_int;

/// glibc's `clock_gettime(3)`, interposed: glibc's own (through the vDSO), or the virtual time.
///
/// # Safety
/// `tp` must be valid for a write of a `timespec`, as for glibc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clock_gettime(clock: libc::clockid_t, tp: *mut libc::timespec) -> libc::c_int {
    if !fixed() {
        let glibc = next!("clock_gettime", ClockGettime);
        // SAFETY: the caller's arguments, as the caller passed them.
        return unsafe { glibc(clock, tp) };
    }
    let ns = START_NS + ELAPSED.fetch_add(STEP_NS, Ordering::Relaxed) + origin(clock);
    // SAFETY: the caller promises a writable `timespec` at `tp`.
    unsafe { tp.write(timespec(ns)) };
    0
}

/// glibc's `nanosleep(2)` wrapper, interposed: sleeps, or moves the virtual time on by `req`.
///
/// # Safety
/// As for glibc's: `req` readable, `rem` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nanosleep(req: *const libc::timespec, rem: *mut libc::timespec) -> libc::c_int {
    if !fixed() {
        let glibc = next!("nanosleep", Nanosleep);
        // SAFETY: the caller's arguments, as the caller passed them.
        return unsafe { glibc(req, rem) };
    }
    // SAFETY: the caller's pointers, as for glibc's.
    unsafe { slept(nanos(&*req), rem) }
}

/// glibc's `clock_nanosleep(2)` wrapper, interposed: sleeps, or moves the virtual time on to the deadline
/// (`TIMER_ABSTIME`) or by `req`.
///
/// # Safety
/// As for glibc's: `req` readable, `rem` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clock_nanosleep(
    clock: libc::clockid_t,
    flags: libc::c_int,
    req: *const libc::timespec,
    rem: *mut libc::timespec,
) -> libc::c_int {
    if !fixed() {
        let glibc = next!("clock_nanosleep", ClockNanosleep);
        // SAFETY: the caller's arguments, as the caller passed them.
        return unsafe { glibc(clock, flags, req, rem) };
    }
    // SAFETY: the caller promises a readable `timespec` at `req`.
    let asked = nanos(unsafe { &*req });
    let by = match flags & libc::TIMER_ABSTIME {
        0 => asked,
        _ => asked.saturating_sub(START_NS + ELAPSED.load(Ordering::Relaxed) + origin(clock)),
    };
    // SAFETY: the caller's pointer, as for glibc's; `clock_nanosleep` returns 0 where `nanosleep` does.
    unsafe { slept(by, rem) }
}

/// glibc's `epoll_wait(2)` wrapper, interposed: waits, or, with a timeout and nothing ready, moves the virtual
/// time on by the timeout and returns none.
///
/// # Safety
/// As for glibc's: `events` valid for `max` writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn epoll_wait(
    epfd: libc::c_int,
    events: *mut libc::epoll_event,
    max: libc::c_int,
    timeout_ms: libc::c_int,
) -> libc::c_int {
    // SAFETY: the caller's arguments, as the caller passed them.
    unsafe { epoll_pwait(epfd, events, max, timeout_ms, std::ptr::null()) }
}

/// glibc's `epoll_pwait(2)` wrapper, interposed as [`epoll_wait`] is.
///
/// # Safety
/// As for glibc's: `events` valid for `max` writes, `sigmask` null or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn epoll_pwait(
    epfd: libc::c_int,
    events: *mut libc::epoll_event,
    max: libc::c_int,
    timeout_ms: libc::c_int,
    sigmask: *const libc::sigset_t,
) -> libc::c_int {
    let timed = fixed() && timeout_ms > 0;
    let glibc = next!("epoll_pwait", EpollPwait);
    // SAFETY: the caller's arguments (a timeout of 0 when virtual: a look, not a wait).
    let ready = unsafe { glibc(epfd, events, max, if timed { 0 } else { timeout_ms }, sigmask) };
    if timed && ready == 0 {
        ELAPSED.fetch_add(timeout_ms as u64 * 1_000_000, Ordering::Relaxed);
    }
    ready
}

/// What a virtual sleep of `by` nanoseconds returns: the time moved on, nothing left of it.
unsafe fn slept(by: u64, rem: *mut libc::timespec) -> libc::c_int {
    ELAPSED.fetch_add(by, Ordering::Relaxed);
    if !rem.is_null() {
        // SAFETY: the caller promises `rem` writable when not null.
        unsafe { rem.write(timespec(0)) };
    }
    0
}

/// What `clock` adds to the shared virtual time: the real-time clocks count from 2026.
fn origin(clock: libc::clockid_t) -> u64 {
    match clock {
        libc::CLOCK_REALTIME | libc::CLOCK_REALTIME_COARSE | libc::CLOCK_TAI => EPOCH_2026_NS,
        _ => 0,
    }
}

fn timespec(ns: u64) -> libc::timespec {
    libc::timespec { tv_sec: (ns / NS_PER_S) as _, tv_nsec: (ns % NS_PER_S) as _ }
}

fn nanos(ts: &libc::timespec) -> u64 {
    (ts.tv_sec.max(0) as u64).saturating_mul(NS_PER_S).saturating_add(ts.tv_nsec.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant, SystemTime};

    #[test]
    fn until_fixed_the_time_is_the_clocks_and_a_sleep_sleeps() {
        let (wall, start) = (SystemTime::now(), Instant::now());
        std::thread::sleep(Duration::from_millis(20));
        assert!(start.elapsed() >= Duration::from_millis(20), "std's clock and sleep come through ours");
        let mut tp = super::timespec(0);
        // SAFETY: a `timespec` to write.
        assert_eq!(unsafe { super::clock_gettime(libc::CLOCK_REALTIME, &mut tp) }, 0);
        let read = SystemTime::UNIX_EPOCH + Duration::from_nanos(super::nanos(&tp));
        assert!(read.duration_since(wall).is_ok_and(|d| d < Duration::from_secs(60)), "the wall's time");
    }
}
