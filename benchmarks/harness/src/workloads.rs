//! The four workloads of the proof, as plain functions both harnesses call: an empty operation, a 64 KiB copy,
//! sorting 10,000 u64 (input restored outside the timed region) and the wal rig's IPC round trip (the same
//! source files as the rig, compiled in here).

use std::hint::black_box;

use arrow::record_batch::RecordBatch;

#[path = "../../../plugins/wal/src/ipc.rs"]
mod ipc;

/// Which workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// Nothing: the harness's own per-iteration cost.
    Noop,
    /// `copy_from_slice` of 64 KiB.
    Copy64k,
    /// `sort_unstable` of 10,000 pseudo-random u64.
    Sort10k,
    /// Arrow IPC stream write + read of the 1,000-row trace batch, ZSTD.
    Wal,
}

impl Workload {
    /// Every workload, in report order.
    pub const ALL: [Workload; 4] = [Workload::Noop, Workload::Copy64k, Workload::Sort10k, Workload::Wal];

    /// Its name in params and reports.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Noop => "noop",
            Workload::Copy64k => "copy64k",
            Workload::Sort10k => "sort10k",
            Workload::Wal => "wal",
        }
    }
}

/// Bytes the copy workload copies.
const COPIED: usize = 65536;

/// Where the copy's destination starts past its source's start: 64 KiB and half a page, so that a load never
/// shares its low 12 address bits with a store just issued (4K aliasing, an Intel cost).
const DESTINATION_AT: usize = COPIED + 2048;

/// The inputs of a workload, built once.
pub struct State {
    workload: Workload,
    /// The copy's source at `source_at`, its destination [`DESTINATION_AT`] further: one block, so that both
    /// arms of a comparison copy between buffers placed alike. Two allocations were placed by the heap as it
    /// stood: on an Intel Xeon VM the arm set up first got its destination 528 bytes further into a page than
    /// its source, the arm set up second 16 bytes (its source 48 bytes into a cache line), and that second arm
    /// copied 3% slower, in some processes 22%; each process read the order it set the arms up in, not their
    /// code (issue 83).
    copy: Vec<u8>,
    source_at: usize,
    unsorted: Vec<u64>,
    batch: Option<RecordBatch>,
}

impl State {
    /// Builds the inputs.
    pub fn new(workload: Workload) -> State {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let unsorted = (0..10_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect();
        let batch = (workload == Workload::Wal).then(|| seed_schemas::fixture::traces(1000).expect("trace batch"));
        let mut copy = vec![0u8; DESTINATION_AT + COPIED + 4096];
        let source_at = copy.as_ptr().align_offset(4096);
        copy[source_at..source_at + COPIED].fill(7);
        State { workload, copy, source_at, unsorted, batch }
    }

    /// The addresses the copy workload copies from and to.
    pub fn copy_places(&self) -> (usize, usize) {
        let source = self.copy.as_ptr() as usize + self.source_at;
        (source, source + DESTINATION_AT)
    }

    /// A fresh unsorted input (setup, outside the timed region).
    pub fn unsorted(&self) -> Vec<u64> {
        self.unsorted.clone()
    }

    /// One iteration of the workload (for `sort10k`, give it a fresh input with `sort`).
    pub fn run(&mut self) -> u64 {
        match self.workload {
            Workload::Noop => 0,
            Workload::Copy64k => {
                let (source, destination) = self.copy.split_at_mut(self.source_at + DESTINATION_AT);
                let source = &source[self.source_at..self.source_at + COPIED];
                destination[..COPIED].copy_from_slice(black_box(source));
                u64::from(destination[COPIED - 1])
            }
            Workload::Sort10k => sort(self.unsorted()),
            Workload::Wal => {
                let batch = self.batch.as_ref().expect("wal state has a batch");
                let bytes = ipc::encode(batch, ipc::Compression::Zstd).expect("encode");
                ipc::decode(&bytes).expect("decode").num_rows() as u64
            }
        }
    }
}

/// Sorts `input` and returns its smallest value.
pub fn sort(mut input: Vec<u64>) -> u64 {
    input.sort_unstable();
    input[0]
}

/// `rounds` of dependent arithmetic: a known amount of extra work per iteration (the injected slowdown).
pub fn spin(rounds: u64) -> u64 {
    let mut x = black_box(1u64);
    for _ in 0..rounds {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407));
    }
    x
}
