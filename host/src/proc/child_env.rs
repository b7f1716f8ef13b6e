//! What a child's environment holds beyond the parent's: the measured code must not change with a variable
//! the person running benchhost set for something else.
//!
//! `RUST_BACKTRACE=1`, common in a Rust developer's shell, turns on `std::backtrace::Backtrace::capture` in
//! every library the child loads, not only in panics, and a capture walks the whole stack. Errors that a
//! library makes and drops on its success path then cost microseconds each: iceberg 0.10.1 builds one with an
//! eager `ok_or(Error::new(..))` for every projected column of every data file it reads
//! (`arrow/record_batch_transformer.rs`), and anyhow's and others' errors capture too. Measured on the
//! project's 2-core VM, the querier's `cache=warm shape=recent_first_topk` read a `query_time` of 18.0-18.3 ms
//! with captures on and 15.7-15.8 ms with them off (3 runs each: +15%), ~8% of its samples in the unwinder.
//! So a child gets `RUST_LIB_BACKTRACE=0`, which takes precedence over `RUST_BACKTRACE` for captures and
//! leaves a panic's backtrace as it was, unless the person set `RUST_LIB_BACKTRACE` themselves: theirs is
//! kept, as asked.

use std::ffi::OsStr;
use std::process::Command;

/// The variable that governs library backtrace captures.
const LIB_BACKTRACE: &str = "RUST_LIB_BACKTRACE";

/// Sets what a child's environment holds beyond the parent's on `command`.
pub fn apply(command: &mut Command) {
    if let Some(value) = library_backtraces(std::env::var_os(LIB_BACKTRACE).as_deref()) {
        command.env(LIB_BACKTRACE, value);
    }
}

/// The value a child gets for [`LIB_BACKTRACE`], given the parent's: `0` when unset, else none (the parent's
/// is inherited).
fn library_backtraces(parent: Option<&OsStr>) -> Option<&'static str> {
    parent.is_none().then_some("0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_are_off_in_a_child_unless_the_person_set_the_variable() {
        assert_eq!(library_backtraces(None), Some("0"));
        assert_eq!(library_backtraces(Some(OsStr::new("1"))), None, "theirs is inherited");
        let mut command = Command::new("true");
        apply(&mut command);
        let set: Vec<_> = command.get_envs().filter(|(k, _)| *k == LIB_BACKTRACE).collect();
        let expected = library_backtraces(std::env::var_os(LIB_BACKTRACE).as_deref()).map(OsStr::new);
        assert_eq!(set, expected.map(|v| (OsStr::new(LIB_BACKTRACE), Some(v))).into_iter().collect::<Vec<_>>());
    }
}
