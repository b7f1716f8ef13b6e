//! Plugin libraries: where they are looked for, who could have written them, what each holds (learnt by a
//! probe in a child process), and the one function that opens a library, which only `child` calls.

pub(crate) mod against;
pub(crate) mod elf;
pub(crate) mod library;
pub(crate) mod loader;
pub(crate) mod relink;
pub(crate) mod sealed;
pub(crate) mod variants;
pub(crate) mod writable;
