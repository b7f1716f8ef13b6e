//! Open loop (`rate` > 0): records produced on a constant-rate schedule, each stamped with the time it was
//! meant to be produced and the time it was, and its latency taken where a consumer has processed it. A
//! consumer that stalls delays every record due meanwhile, and each of them counts from its intended time
//! (coordinated omission, see `benchhost_plugin_api::open_loop`).
//!
//! The producer is never throttled by the consumers (no backlog bound, unlike the saturating feed): a load
//! that waits for the system under test is a closed loop. A run whose consumers fall behind shows it in its
//! corrected latency, and, past the sustain margin, fails on its achieved rate; one that outgrows the mock
//! cluster's retention fails on its offsets.

use std::time::Duration;

use benchhost_plugin_api::RigError;
use benchhost_plugin_api::open_loop::{Issued, OpenLoopRun, Schedule};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseRecord, Producer};

use crate::drain::ThreadReport;
use crate::feed::Feed;

/// Bytes at the head of a paced record's payload: when it was due and when it was sent, each as ns since the
/// run's epoch, little-endian. A payload whose first word is 0 (the prefill's markers) carries no stamp.
pub const STAMP_BYTES: usize = 16;

/// Writes the stamp into the head of `payload` (at least [`STAMP_BYTES`] long).
pub fn stamp(payload: &mut [u8], due: Duration, sent: Duration) {
    let ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1);
    payload[..8].copy_from_slice(&ns(due).to_le_bytes());
    payload[8..STAMP_BYTES].copy_from_slice(&ns(sent).to_le_bytes());
}

/// `(due, sent)` of a stamped payload; `None` for a marker or a payload too short to hold a stamp.
pub fn read_stamp(payload: &[u8]) -> Option<(Duration, Duration)> {
    let word = |at: usize| -> Option<u64> { Some(u64::from_le_bytes(payload.get(at..at + 8)?.try_into().ok()?)) };
    match (word(0)?, word(8)?) {
        (0, _) => None,
        (due, sent) => Some((Duration::from_nanos(due), Duration::from_nanos(sent))),
    }
}

impl Feed {
    /// Produces `ops` records round-robin over the partitions, each when the schedule says, stamped; then
    /// waits for every delivery and marks the feed done (the consumers drain what is left and stop).
    pub fn pace(&mut self, schedule: &Schedule, ops: u64, timeout: Duration) -> Result<Issued, RigError> {
        let epoch = self.shared.epoch;
        let partitions = self.target.len() as u64;
        let mut payload = vec![0u8; self.payload.len()];
        let issued = schedule.issue(ops, |i, due| {
            let partition = (i % partitions) as i32;
            loop {
                stamp(&mut payload, due - epoch, epoch.elapsed());
                let record: BaseRecord<'_, (), [u8]> =
                    BaseRecord::to(&self.topic).partition(partition).payload(&payload);
                match self.producer.send(record) {
                    Ok(()) => break,
                    Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
                        self.producer.poll(Duration::from_millis(1));
                    }
                    Err((e, _)) => return Err(RigError::new(format!("producing to partition {partition}: {e}"))),
                }
            }
            self.producer.poll(Duration::ZERO);
            Ok(())
        })?;
        self.producer.flush(timeout).map_err(|e| RigError::new(format!("flushing the paced feed: {e}")))?;
        self.check_failures()?;
        self.shared.feed_done.store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(issued)
    }
}

/// The run's latencies from every consumer's share, and the rate at which the records came out of the
/// consumers (from the first one processed to the last, plus one interval: `n` records at exactly the target
/// rate read as that rate, however long each took); a failure when the consumers did not keep up with the
/// rate, or when a paced record was not measured exactly once.
pub fn latencies(schedule: &Schedule, issued: &Issued, reports: &[ThreadReport]) -> Result<OpenLoopRun, RigError> {
    let mut run = schedule.run_of(issued);
    for share in reports.iter().filter_map(|r| r.stamps.as_ref()) {
        run.add_latencies(share);
    }
    if run.corrected.len() != issued.ops {
        return Err(RigError::verification(format!(
            "{} of {} paced records measured: each must be consumed once",
            run.corrected.len(),
            issued.ops
        )));
    }
    let first = reports.iter().filter_map(|r| r.stamped.map(|(first, _)| first)).min().unwrap_or_default();
    let last = reports.iter().filter_map(|r| r.stamped.map(|(_, last)| last)).max().unwrap_or_default();
    run.elapsed = last.saturating_sub(first) + schedule.interval();
    run.sustained()?;
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_reads_back_and_a_marker_or_a_short_payload_has_none() {
        let mut payload = vec![0u8; 64];
        assert_eq!(read_stamp(&payload), None, "the prefill's zeroed markers");
        stamp(&mut payload, Duration::from_micros(1_500), Duration::from_micros(1_620));
        assert_eq!(read_stamp(&payload), Some((Duration::from_micros(1_500), Duration::from_micros(1_620))));
        assert_eq!(read_stamp(&payload[..15]), None);
        stamp(&mut payload, Duration::ZERO, Duration::ZERO);
        assert_eq!(read_stamp(&payload), Some((Duration::from_nanos(1), Duration::from_nanos(1))), "never a marker");
    }
}
