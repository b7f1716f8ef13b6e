//! Exports the count process's interposed C library functions (randomness, clocks and timed waits) from
//! the `benchhost` binary, so that they come before glibc's in every lookup of the process, the plugins'
//! included (why: `src/child/fixed.rs`).

fn main() {
    let time = ["clock_gettime", "nanosleep", "clock_nanosleep", "epoll_wait", "epoll_pwait"];
    for symbol in ["getrandom", "getentropy"].into_iter().chain(time) {
        println!("cargo::rustc-link-arg-bins=-Wl,--export-dynamic-symbol={symbol}");
    }
}
