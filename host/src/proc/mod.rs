//! One child process and what passes between it and the parent: the protocol, the watch (deadline, stderr,
//! exit status), the signals that stop a run, and the reaping of whatever a cell leaves behind.

pub(crate) mod child_env;
pub(crate) mod cpus;
pub(crate) mod executor;
pub(crate) mod interrupt;
pub(crate) mod protocol;
pub(crate) mod reaper;
