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

/// The inputs of a workload, built once.
pub struct State {
    workload: Workload,
    src: Vec<u8>,
    dst: Vec<u8>,
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
        State { workload, src: vec![7; 65536], dst: vec![0; 65536], unsorted, batch }
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
                self.dst.copy_from_slice(black_box(&self.src));
                u64::from(self.dst[65535])
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
