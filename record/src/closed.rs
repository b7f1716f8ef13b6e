//! The closed sets of words a record uses, as enums: why a cell failed, in which phase, and why its sampling
//! stopped. Each is written in snake_case, as the JSON has always spelled it.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why a cell did not complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The rig panicked.
    Panic,
    /// The rig returned an error.
    RigError,
    /// The rig's own correctness check failed.
    Verification,
    /// A declared invariant did not hold.
    Invariant,
    /// The child was killed by a signal.
    Signal,
    /// An allocation failed (under a `memory_limit`, the limit).
    OutOfMemory,
    /// The rig overflowed its stack.
    StackOverflow,
    /// The child exited with a non-zero code.
    Exit,
    /// The cell ran past its deadline.
    Deadline,
    /// The child broke the protocol or ended without finishing the cell.
    Protocol,
    /// The child could not be started.
    Spawn,
    /// A declared metric could not be computed.
    Metrics,
    /// A process left the cell's process group and outlived the cell.
    Escaped,
    /// benchhost was interrupted by a signal while the cell ran.
    Interrupted,
    /// A cause a newer benchhost wrote, which this one does not know.
    #[serde(other)]
    Other,
}

impl Cause {
    /// The word records use.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Panic => "panic",
            Cause::RigError => "rig_error",
            Cause::Verification => "verification",
            Cause::Invariant => "invariant",
            Cause::Signal => "signal",
            Cause::OutOfMemory => "out_of_memory",
            Cause::StackOverflow => "stack_overflow",
            Cause::Exit => "exit",
            Cause::Deadline => "deadline",
            Cause::Protocol => "protocol",
            Cause::Spawn => "spawn",
            Cause::Metrics => "metrics",
            Cause::Escaped => "escaped",
            Cause::Interrupted => "interrupted",
            Cause::Other => "other",
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for Cause {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The phases of a cell, named in errors and failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Loading the library.
    Load,
    /// `setup`.
    Setup,
    /// Warm-up.
    Warmup,
    /// Samples or repetitions.
    Measure,
    /// `teardown`.
    Teardown,
}

impl Phase {
    /// The word records use.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Setup => "setup",
            Phase::Warmup => "warmup",
            Phase::Measure => "measure",
            Phase::Teardown => "teardown",
        }
    }
}

/// Why sampling ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The planned number of samples was taken.
    Samples,
    /// The CI target was met.
    Target,
    /// The budget ran out before the CI target was met.
    Budget,
}

impl Stop {
    /// The word records use.
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::Samples => "samples",
            Stop::Target => "target",
            Stop::Budget => "budget",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_are_the_json_spelling() {
        for cause in [Cause::RigError, Cause::OutOfMemory, Cause::Escaped] {
            assert_eq!(serde_json::to_value(cause).unwrap(), cause.as_str());
        }
        assert_eq!(serde_json::to_value(Phase::Warmup).unwrap(), Phase::Warmup.as_str());
        assert_eq!(serde_json::to_value(Stop::Budget).unwrap(), Stop::Budget.as_str());
        let unknown: Cause = serde_json::from_str("\"a_cause_from_the_future\"").unwrap();
        assert_eq!(unknown, Cause::Other);
    }
}
