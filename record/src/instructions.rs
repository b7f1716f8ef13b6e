//! Instruction counts: how the `instructions` metric of a record was obtained (or why a cell has none).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The name of the metric an instruction count is recorded under.
pub const INSTRUCTIONS: &str = "instructions";

/// The unit of [`INSTRUCTIONS`].
pub const INSTRUCTIONS_UNIT: &str = "instructions";

/// How a cell's instructions per iteration were counted (`run --instructions`): one process under Valgrind
/// sets the rig up and prepares the inputs, then forks twice; one fork runs `iterations`, the other twice as
/// many, and the difference of their totals is the iterations' alone (load, set-up, `prepare` and the host's
/// code are counted before the forks, in both).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstructionCount {
    /// The tool and its options, e.g. `valgrind-3.19.0 --tool=cachegrind --cache-sim=no`.
    pub tool: String,
    /// Iterations the shorter process ran (the longer ran twice as many).
    pub iterations: u64,
    /// Instructions each fork executed in all (what came before the fork included), the shorter first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub totals: Vec<u64>,
    /// Threads of the rig's process before it forked: with more than one it cannot fork (a fork keeps one
    /// thread), and there is no count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u64>,
    /// Wall time of the counting process, ms.
    pub wall_ms: u64,
    /// Why there is no `instructions` metric, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unclean: Option<String>,
    /// The functions the iterations ran, from Cachegrind's per-function totals of the two forks: the most
    /// instructions per iteration first (at most 200, none under half an instruction).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<FunctionCount>,
}

/// One function's instructions per iteration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FunctionCount {
    /// Its demangled name (without the hash of Rust's legacy mangling).
    pub name: String,
    /// Its source file, where debug info gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The first line of it that ran, where debug info gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Instructions per iteration.
    pub per_iteration: f64,
}

/// Where a change of instructions per iteration happened: the functions whose count changed most.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FunctionChange {
    /// Its demangled name.
    pub name: String,
    /// Its source file, where debug info gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Its first line, where debug info gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Instructions per iteration on the old side (0 where it did not run or was not kept).
    pub before: f64,
    /// Instructions per iteration on the new side.
    pub after: f64,
}

impl FunctionChange {
    /// `after - before`.
    pub fn difference(&self) -> f64 {
        self.after - self.before
    }

    /// `name (file:line)`, the file by its last component, as far as debug info goes.
    pub fn place(&self) -> String {
        let file = self.file.as_deref().map(|f| f.rsplit('/').next().unwrap_or(f));
        match (file, self.line) {
            (Some(file), Some(line)) => format!("{} ({file}:{line})", self.name),
            (Some(file), None) => format!("{} ({file})", self.name),
            _ => self.name.clone(),
        }
    }
}

impl InstructionCount {
    /// Instructions per iteration from the two totals, or why they give no clean count.
    pub fn per_iteration(&self) -> Result<f64, String> {
        if let Some(threads) = self.threads.filter(|t| *t > 1) {
            return Err(format!(
                "the rig runs {threads} threads after set-up: a count forks the set-up rig, and a fork keeps one \
                 thread"
            ));
        }
        let [short, long] = self.totals[..] else {
            return Err("the two forks did not both leave a total".into());
        };
        if long <= short || self.iterations == 0 {
            return Err(format!(
                "{} iterations more counted {} instructions against {short}: no positive difference",
                self.iterations, long
            ));
        }
        Ok((long - short) as f64 / self.iterations as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(totals: Vec<u64>, threads: u64) -> InstructionCount {
        InstructionCount { tool: "t".into(), iterations: 1000, totals, threads: Some(threads), ..Default::default() }
    }

    #[test]
    fn the_difference_of_the_totals_is_the_iterations_alone() {
        assert_eq!(count(vec![5_000_000, 5_012_000], 1).per_iteration(), Ok(12.0));
        assert!(count(vec![5_000_000, 5_012_000], 3).per_iteration().unwrap_err().contains("3 threads"));
        assert!(count(vec![5_000_000, 5_000_000], 1).per_iteration().unwrap_err().contains("no positive"));
        assert!(count(vec![5_000_000], 1).per_iteration().unwrap_err().contains("did not both"));
    }
}
