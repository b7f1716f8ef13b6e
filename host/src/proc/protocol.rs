//! The child → parent protocol: versioned JSON lines on the child's original stdout, which the child moves
//! away from fd 1 before any plugin code runs (so whatever a rig prints lands in the cell log instead).
//!
//! The first line is a [`Message::Hello`] carrying [`MAGIC`] and [`PROTOCOL`]; anything else is a protocol
//! violation, reported as such rather than waited on.

use std::collections::BTreeMap;
use std::path::PathBuf;

use benchhost_plugin_api::ErrorKind;

use benchhost_plugin_api::abi::PluginInfo;
use serde::{Deserialize, Serialize};

use crate::plan::settings::Plan;
use serde_json::Value;

/// Magic word of the first line.
pub const MAGIC: &str = "benchhost-cell";
/// Protocol version; bump on any incompatible change.
pub const PROTOCOL: u32 = 1;
/// Longest line the parent accepts; a longer one is a protocol violation, not an allocation.
pub const MAX_LINE: usize = 4 << 20;

/// What the parent asks a child to do, sent as one JSON line on the child's stdin.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "task", rename_all = "snake_case")]
pub enum Task {
    /// Load a library and report its [`PluginInfo`] or why it cannot be loaded.
    Probe {
        /// Library file.
        path: PathBuf,
        /// The SHA-256 it must have (`[sha256]` in `rigs.toml`), checked on the bytes the child loads.
        #[serde(default)]
        pin: Option<String>,
    },
    /// Run one cell.
    Cell(CellTask),
    /// Run two cells of one rig in this one process, their samples alternating (`--pairing alternate`).
    Duel(Box<DuelTask>),
    /// Count a cell's instructions per iteration, under Valgrind (`run --instructions`).
    Count(CountTask),
}

/// An instruction count (`child/count.rs`): the rig set up once, then pairs of forks, one running m
/// iterations and the other 2m, whose totals Cachegrind writes to `totals/cachegrind.PID`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CountTask {
    /// The cell.
    pub cell: CellTask,
    /// The directory Cachegrind writes each process's totals to (`--cachegrind-out-file=DIR/cachegrind.%p`).
    pub totals: PathBuf,
    /// The m of the rig's earlier counts (this run's, then the stream's): one near what this cell asks for is
    /// taken instead, so that arms compared with each other, and nights of a series, count alike.
    #[serde(default)]
    pub near: Vec<u64>,
    /// The most m may be: what 100 ms of the cell's time per iteration allows, for iterations whose time is in
    /// the kernel (a sleep, an fsync), where instructions are few.
    pub most: u64,
}

impl CountTask {
    /// The Cachegrind files of the last pair of forks, kept in `totals` by the count process: the short fork's,
    /// then the long one's. The host reads the functions of the counted iterations from them.
    pub const LAST: [&str; 2] = ["last-short", "last-long"];
}

/// Two arms measured in one process: both libraries loaded, both rigs set up, then pairs of samples, one of
/// each arm, back to back, the arm that goes first swapped every pair.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DuelTask {
    /// The two arms; both name the same rig. Side 0 is the reference.
    pub sides: [CellTask; 2],
    /// Which side is loaded, set up and sampled first in this process (0 or 1); the parent alternates it
    /// between processes, so no side always has the first turn.
    pub first: usize,
    /// Warm-up of each side, ns.
    pub warmup_ns: u64,
    /// Target duration of one sample, ns.
    pub sample_ns: u64,
    /// Pairs of samples to take.
    pub pairs: u32,
}

/// One cell, as the child needs it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellTask {
    /// Library file.
    pub plugin_path: PathBuf,
    /// The SHA-256 it must have, checked on the bytes the child loads.
    #[serde(default)]
    pub pin: Option<String>,
    /// The run's sealed memfd of the library, inherited by the child, and the SHA-256 of its bytes: the child
    /// copies from it without hashing again (see `plugin::sealed`). `None`: the child reads and hashes the file.
    #[serde(default)]
    pub sealed: Option<(i32, String)>,
    /// Rig name.
    pub rig: String,
    /// Every declared parameter with its value.
    pub params: BTreeMap<String, Value>,
    /// Sampling plan.
    pub plan: Plan,
    /// The cell's scratch directory.
    pub scratch_dir: PathBuf,
    /// `--quick`.
    pub quick: bool,
    /// Where the rig keeps what it seeds once per library and run ([`SetupContext::seed_dir`]).
    ///
    /// [`SetupContext::seed_dir`]: benchhost_plugin_api::SetupContext::seed_dir
    #[serde(default)]
    pub seed_dir: Option<PathBuf>,
    /// The core to pin the child to before the plugin loads (`--pairing concurrent`).
    #[serde(default)]
    pub cpu: Option<usize>,
    /// A duel's window of a run-style rig that measures windows ([`SetupContext::window_ns`]).
    ///
    /// [`SetupContext::window_ns`]: benchhost_plugin_api::SetupContext::window_ns
    #[serde(default)]
    pub window_ns: Option<u64>,
}

pub(crate) use benchhost_record::Phase;

/// A line from the child.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// First line.
    Hello {
        /// Must be [`MAGIC`].
        magic: String,
        /// Must be [`PROTOCOL`].
        protocol: u32,
    },
    /// The library loaded; its self-description.
    Plugin {
        /// Info from the root module.
        info: PluginInfo,
        /// SHA-256 of the bytes the child loaded (what the record carries: the code that ran).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sha256: Option<String>,
    },
    /// The library could not be loaded (probe), in one line.
    Rejected {
        /// Why.
        reason: String,
    },
    /// A phase began.
    Phase {
        /// Which.
        phase: Phase,
    },
    /// Warm-up finished.
    Warmup {
        /// Iterations done (or runs, in run style).
        iterations: u64,
        /// Time spent in timed batches.
        ns: u64,
        /// Run style: the counters of the warm-up run, checked like every repetition's (its numbers are
        /// discarded, its answer is not: a wrong cold answer is a failure).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        counters: Option<BTreeMap<String, u64>>,
    },
    /// Sampling ended, and why: `samples` (the planned count), `target` (the CI target was met) or `budget`.
    Stopped {
        /// Why.
        reason: benchhost_record::Stop,
    },
    /// In a duel, one side's threads (not the timing one) and the CPU they used while the other side was timed.
    IdleCpu {
        /// CPU time of this side's threads meanwhile, ns.
        busy_ns: u64,
        /// Wall time the other side was timed, ns.
        during_ns: u64,
    },
    /// Minor page faults the child took while warming up and sampling.
    PageFaults {
        /// Count.
        minor: u64,
    },
    /// One timed batch.
    Sample {
        /// Iterations in the batch.
        iterations: u64,
        /// Nanoseconds for the whole batch.
        ns: u64,
    },
    /// One pair of samples of a duel: both arms ran `iterations` iterations, back to back.
    Pair {
        /// Iterations in each sample.
        iterations: u64,
        /// Nanoseconds of side 0's sample and side 1's.
        ns: [u64; 2],
    },
    /// A message about one side of a duel (its plugin, warm-up, outcome or error).
    Side {
        /// 0 or 1.
        side: usize,
        /// The message.
        message: Box<Message>,
    },
    /// One run-style repetition.
    Observation {
        /// Metric values.
        metrics: BTreeMap<String, f64>,
        /// Counters.
        counters: BTreeMap<String, u64>,
        /// The rig's note on how it measured.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        /// One window of a continuing workload (a duel's), not a whole run.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        window: bool,
    },
    /// Teardown's counters.
    Outcome {
        /// Counters.
        counters: BTreeMap<String, u64>,
        /// The rig's note.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// A rig call failed (a panic included).
    Error {
        /// Where.
        phase: Phase,
        /// What kind.
        kind: ErrorKind,
        /// The rig's message.
        message: String,
    },
    /// A count's forks ran their iterations (`Task::Count`).
    Counted {
        /// Threads of the process before it forked.
        threads: Option<u64>,
        /// m: the shorter fork's iterations (the longer ran 2m).
        iterations: u64,
        /// The instructions each fork executed in all, the shorter first; none when the process could not
        /// fork (more than one thread).
        totals: Option<[u64; 2]>,
    },
    /// The child finished its work and is about to exit 0.
    Done,
}

impl Message {
    /// The hello line of this protocol version.
    pub fn hello() -> Self {
        Message::Hello { magic: MAGIC.into(), protocol: PROTOCOL }
    }
}

/// Decodes a line that is not the first. Errors are protocol violations, described in one line.
pub fn decode(line: &str) -> Result<Message, String> {
    serde_json::from_str(line).map_err(|e| format!("undecodable protocol line ({e}): {}", clip(line)))
}

/// Checks the first line.
pub fn decode_hello(line: &str) -> Result<(), String> {
    match serde_json::from_str::<Message>(line) {
        Ok(Message::Hello { magic, protocol }) if magic == MAGIC && protocol == PROTOCOL => Ok(()),
        Ok(Message::Hello { magic, protocol }) if magic == MAGIC => {
            Err(format!("the child speaks protocol {protocol}, this benchhost speaks {PROTOCOL}"))
        }
        _ => Err(format!("the child's first line is not a benchhost hello: {}", clip(line))),
    }
}

fn clip(line: &str) -> String {
    let mut end = line.len().min(120);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    if end < line.len() { format!("{}…", &line[..end]) } else { line.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_round_trips_and_is_checked() {
        let line = serde_json::to_string(&Message::hello()).unwrap();
        assert!(line.contains("\"magic\":\"benchhost-cell\""));
        assert_eq!(decode_hello(&line), Ok(()));
        let other = line.replace("\"protocol\":1", "\"protocol\":2");
        assert!(decode_hello(&other).unwrap_err().contains("protocol 2"));
        assert!(decode_hello("hello world").unwrap_err().contains("not a benchhost hello"));
    }

    #[test]
    fn garbage_is_a_violation_with_the_line_clipped() {
        let long = "x".repeat(500);
        let err = decode(&long).unwrap_err();
        assert!(err.len() < 300, "{err}");
        assert!(decode(r#"{"type":"sample","iterations":3,"ns":10}"#).is_ok());
    }
}
