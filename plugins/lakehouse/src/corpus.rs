//! The querier's two tables, as seed 000 lays them out, and the answers every shape must give.
//!
//! `traces`: 3 day partitions x 4 files x 1,000 rows of ordinary traces, one filler file per day whose ids are
//! sentinels (`0…0` and `f…f`, no target), and the target trace written three times, at +0 h, +25 h and +50 h,
//! each write a file of three rows: a low id, a high id and the target. Every file's trace_id range spans the
//! target's id, so min/max statistics cannot prune any of them: only an exact-match index (a bloom filter) or
//! the time window can.
//!
//! `spans`: 60 sequential files of 1,000 spans, two minutes apart, each in timestamp order (one row group).

use crate::traces::{EPOCH_US, HOUR_US, Span, span};

/// UTC midnight of seed 000's epoch day (2023-11-14): day partitions start here, so a file's rows share a day.
pub const DAY0_US: i64 = EPOCH_US - EPOCH_US.rem_euclid(24 * HOUR_US);

/// The trace every lookup asks for.
pub const TARGET: &str = "7a3e00000000000000000000000000ff";
/// When the target's first write happened (+0 h); the others are at +25 h and +50 h.
pub const TARGET_AT_US: i64 = DAY0_US + 12 * HOUR_US;
/// Files and rows of the `spans` table.
pub const SEQUENTIAL_FILES: usize = 60;
pub const SPANS_PER_FILE: usize = 1_000;
/// Two minutes between sequential files, and 120 ms between the spans of one file.
const FILE_STEP_US: i64 = 120_000_000;
const SPAN_STEP_US: i64 = FILE_STEP_US / SPANS_PER_FILE as i64;

/// A 32-hex-digit trace id that spreads over the whole id space (SplitMix64 of `n`), as real ids do.
pub fn spread_id(n: u64) -> String {
    let mut z = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    format!("{:016x}{:016x}", z ^ (z >> 31), n)
}

/// The files of `traces`, in write order: each is the spans of one append.
pub fn traces_files() -> Vec<Vec<Span>> {
    let mut files = Vec::new();
    for day in 0..3i64 {
        let day_start = DAY0_US + day * 24 * HOUR_US;
        for f in 0..4u64 {
            let file = (0..1_000u64)
                .map(|i| {
                    let n = (day as u64 * 4 + f) * 1_000 + i;
                    // About 10 spans per trace, as seed 000's fixtures (`i / 10`).
                    let trace = spread_id(n / 10);
                    span(trace, format!("{n:016x}"), day_start + (f as i64 * 1_000 + i as i64) * 20_000_000)
                })
                .collect();
            files.push(file);
        }
        let filler = (0..1_000u64)
            .map(|i| {
                let sentinel = if i % 2 == 0 { "0".repeat(32) } else { "f".repeat(32) };
                span(sentinel, format!("f{day}{i:014x}"), day_start + i as i64 * 60_000_000)
            })
            .collect();
        files.push(filler);
    }
    for (write, at) in target_writes().into_iter().enumerate() {
        files.push(vec![
            span("0".repeat(32), format!("a{write}low"), at - 1),
            span("f".repeat(32), format!("a{write}high"), at + 1),
            span(TARGET.to_string(), format!("a{write}target"), at),
        ]);
    }
    files
}

/// The three times the target trace was written.
pub fn target_writes() -> [i64; 3] {
    [TARGET_AT_US, TARGET_AT_US + 25 * HOUR_US, TARGET_AT_US + 50 * HOUR_US]
}

/// The files of `spans`, in time order.
pub fn sequential_files() -> Vec<Vec<Span>> {
    (0..SEQUENTIAL_FILES)
        .map(|f| {
            (0..SPANS_PER_FILE)
                .map(|i| {
                    let n = (f * SPANS_PER_FILE + i) as u64;
                    let at = EPOCH_US + f as i64 * FILE_STEP_US + i as i64 * SPAN_STEP_US;
                    span(format!("{:032x}", n / 10), format!("{n:016x}"), at)
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_traces_file_spans_the_targets_id_so_min_max_cannot_prune_it() {
        let files = traces_files();
        assert_eq!(files.len(), 18);
        for (i, file) in files.iter().enumerate() {
            let min = file.iter().map(|s| s.trace_id.as_str()).min().unwrap();
            let max = file.iter().map(|s| s.trace_id.as_str()).max().unwrap();
            assert!(min < TARGET && TARGET < max || file.iter().any(|s| s.trace_id == TARGET), "file {i}");
        }
        let targets: Vec<i64> =
            files.iter().flatten().filter(|s| s.trace_id == TARGET).map(|s| s.timestamp_us).collect();
        assert_eq!(targets, target_writes());
    }

    #[test]
    fn sequential_files_follow_each_other_in_time() {
        let all: Vec<i64> = sequential_files().concat().iter().map(|s| s.timestamp_us).collect();
        assert_eq!(all.len(), 60_000);
        assert!(all.windows(2).all(|w| w[0] < w[1]));
    }
}
