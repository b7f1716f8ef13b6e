//! Exports the count process's `getrandom` and `getentropy` from the `benchhost` binary, so that they come
//! before glibc's in every lookup of the process, the plugins' included (why: `src/child/fixed.rs`).

fn main() {
    for symbol in ["getrandom", "getentropy"] {
        println!("cargo::rustc-link-arg-bins=-Wl,--export-dynamic-symbol={symbol}");
    }
}
