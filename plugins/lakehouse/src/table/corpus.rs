//! The querier's two tables, as seed 000 lays them out, and the answers every shape must give.
//!
//! `traces`: 3 days x 4 files x 1,000 rows of ordinary traces, one filler file per day whose ids are sentinels
//! (`0…0` and `f…f`, no target), and the target trace written three times, at +0 h, +25 h and +50 h, each write a
//! file of three rows: a low id, a high id and the target. Every file's trace_id range spans the target's id, so
//! min/max statistics cannot prune any of them: only an exact-match index (a bloom filter) or the time window
//! can. Each file is one hour of spans, as an ingester that flushes an hour partition writes it: the table is
//! partitioned by `hour(timestamp)`, as seed 000's write path partitions it, so a time window skips whole
//! manifests at planning.
//!
//! `spans`: 60 sequential files of 1,000 spans, two minutes apart, each in timestamp order (one row group).

use crate::table::traces::{EPOCH_US, HOUR_US, Span, span};

/// UTC midnight of seed 000's epoch day (2023-11-14): the three days of `traces` start here.
pub const DAY0_US: i64 = EPOCH_US - EPOCH_US.rem_euclid(24 * HOUR_US);

/// The trace every lookup asks for.
pub const TARGET: &str = "7a3e00000000000000000000000000ff";
/// When the target's first write happened (+0 h, half past noon, so its file's three rows share an hour); the
/// others are at +25 h and +50 h.
pub const TARGET_AT_US: i64 = DAY0_US + 12 * HOUR_US + HOUR_US / 2;
/// The hours of a day at which `traces`' four ordinary files are written, and its filler file.
const FILE_HOURS: [i64; 4] = [0, 6, 12, 18];
const FILLER_HOUR: i64 = 3;
/// 1,000 spans an hour: 3.6 s apart.
const TRACES_STEP_US: i64 = HOUR_US / 1_000;
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
        for (f, hour) in FILE_HOURS.into_iter().enumerate() {
            let file = (0..1_000u64)
                .map(|i| {
                    let n = (day as u64 * 4 + f as u64) * 1_000 + i;
                    // About 10 spans per trace, as seed 000's fixtures (`i / 10`).
                    let trace = spread_id(n / 10);
                    span(trace, format!("{n:016x}"), day_start + hour * HOUR_US + i as i64 * TRACES_STEP_US)
                })
                .collect();
            files.push(file);
        }
        let filler = (0..1_000u64)
            .map(|i| {
                let sentinel = if i % 2 == 0 { "0".repeat(32) } else { "f".repeat(32) };
                span(sentinel, format!("f{day}{i:014x}"), day_start + FILLER_HOUR * HOUR_US + i as i64 * TRACES_STEP_US)
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
    fn every_traces_file_is_one_hour_of_spans_so_it_fits_one_hour_partition() {
        for (i, file) in traces_files().iter().enumerate() {
            let hours: std::collections::BTreeSet<i64> =
                file.iter().map(|s| s.timestamp_us.div_euclid(HOUR_US)).collect();
            assert_eq!(hours.len(), 1, "file {i} spans hours {hours:?}");
        }
    }

    #[test]
    fn sequential_files_follow_each_other_in_time() {
        let all: Vec<i64> = sequential_files().concat().iter().map(|s| s.timestamp_us).collect();
        assert_eq!(all.len(), 60_000);
        assert!(all.windows(2).all(|w| w[0] < w[1]));
    }
}
