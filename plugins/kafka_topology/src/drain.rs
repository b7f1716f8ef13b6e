//! The one drain loop both topologies run, so the arms differ only in how partitions reach threads: same
//! poll cadence (non-blocking polls, the same idle sleep), same batch, same per-record work, and per-thread
//! counters only (seed 003 bug 1: a shared atomic per message anti-scaled; bug 4: one arm blocked while the
//! other spun).

use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use benchhost_plugin_api::open_loop::OpenLoopRun;
use hdrhistogram::Histogram;
use rdkafka::consumer::{BaseConsumer, DefaultConsumerContext};
use rdkafka::error::KafkaResult;
use rdkafka::message::{BorrowedMessage, Message};

use crate::feed::Shared;
use crate::spin::Spin;

/// Records taken from one source before moving to the next.
const BATCH: usize = 256;
/// Sleep when a whole round found nothing; the same in both topologies.
const IDLE: Duration = Duration::from_micros(100);
/// One gap sample (two clock reads) every this many records keeps the clock off most records.
const SAMPLE_EVERY: u64 = 16;

/// Where a thread's records come from.
pub enum Source<'a> {
    /// A consumer's own queue (perthread).
    Consumer(&'a BaseConsumer),
    /// A partition queue split off a shared consumer (split).
    Queue(&'a rdkafka::consumer::base_consumer::PartitionQueue<DefaultConsumerContext>),
}

impl Source<'_> {
    fn poll(&self) -> Option<KafkaResult<BorrowedMessage<'_>>> {
        match self {
            Source::Consumer(c) => c.poll(Duration::ZERO),
            Source::Queue(q) => q.poll(Duration::ZERO),
        }
    }
}

/// When a thread stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Time box from the thread's first record; `None` drains everything.
    pub window: Option<Duration>,
    /// Absolute deadline of the run (seed 003 bug 2: a count target needs one).
    pub deadline: Instant,
}

/// Why a thread left its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Its window ended.
    Window,
    /// Every record of its partitions was consumed.
    Drained,
    /// The run's deadline passed first.
    Timeout,
    /// It owns no partition.
    Idle,
}

/// What one thread did.
#[derive(Debug)]
pub struct ThreadReport {
    /// Records processed (duplicates included).
    pub consumed: u64,
    /// Payload bytes processed.
    pub bytes: u64,
    /// First record to leaving the loop.
    pub elapsed: Duration,
    /// Records at an offset already seen.
    pub duplicates: u64,
    /// Offsets skipped between consecutive records of a partition.
    pub skipped: u64,
    /// Records that arrived on the main queue of a split consumer.
    pub leaked: u64,
    /// Poll errors, with the first message.
    pub errors: (u64, Option<String>),
    /// Time inside the window spent caught up with everything delivered (the feed was the limit).
    pub starved: Duration,
    /// Sampled gaps between consecutive records, ns.
    pub gaps: Histogram<u64>,
    /// Why it stopped.
    pub exit: Exit,
    /// `(partition, start offset, next offset)` per partition it owned.
    pub partitions: Vec<(usize, i64, i64)>,
    /// Open loop: the latencies of the paced records it processed.
    pub stamps: Option<OpenLoopRun>,
    /// Open loop: when it processed its first and its last paced record, since the run's epoch.
    pub stamped: Option<(Duration, Duration)>,
}

/// One thread's drain loop over `sources`, owning `partitions` (`(partition, start offset)`); `main` is the
/// split consumer's main queue, polled for events, where any record is a leak.
pub fn drain(
    sources: &[Source<'_>],
    main: Option<&BaseConsumer>,
    partitions: &[(usize, i64)],
    shared: &Shared,
    spin: &Spin,
    limits: Limits,
) -> ThreadReport {
    let count = shared.processed.len();
    let mut local = vec![usize::MAX; count];
    for (i, (p, _)) in partitions.iter().enumerate() {
        local[*p] = i;
    }
    let mut next: Vec<i64> = partitions.iter().map(|(_, start)| *start).collect();
    let mut r = ThreadReport {
        consumed: 0,
        bytes: 0,
        elapsed: Duration::ZERO,
        duplicates: 0,
        skipped: 0,
        leaked: 0,
        errors: (0, None),
        starved: Duration::ZERO,
        gaps: Histogram::new_with_bounds(1, 600_000_000_000, 3).expect("valid histogram bounds"),
        exit: Exit::Idle,
        partitions: vec![],
        stamps: shared.schedule.map(|s| s.empty_run()),
        stamped: None,
    };
    let (mut first, mut sample_start, mut starved_since): (Option<Instant>, Option<Instant>, Option<Instant>) =
        (None, None, None);
    let caught_up =
        |next: &[i64]| partitions.iter().zip(next).all(|((p, _), n)| *n >= shared.delivered_end[*p].0.load(Relaxed));
    let exit = loop {
        if partitions.is_empty() {
            break Exit::Idle;
        }
        let mut got = 0usize;
        for source in sources {
            for _ in 0..BATCH {
                let Some(polled) = source.poll() else { break };
                let message = match polled {
                    Ok(m) => m,
                    Err(e) => {
                        r.errors.0 += 1;
                        r.errors.1.get_or_insert_with(|| e.to_string());
                        continue;
                    }
                };
                got += 1;
                let i = local.get(message.partition() as usize).copied().unwrap_or(usize::MAX);
                if i == usize::MAX {
                    // A record of a partition this thread does not own: count it as skipped, never as consumed.
                    r.errors.0 += 1;
                    r.errors.1.get_or_insert_with(|| format!("record of unowned partition {}", message.partition()));
                    continue;
                }
                let offset = message.offset();
                match offset.cmp(&next[i]) {
                    std::cmp::Ordering::Less => r.duplicates += 1,
                    std::cmp::Ordering::Greater => r.skipped += (offset - next[i]) as u64,
                    std::cmp::Ordering::Equal => {}
                }
                next[i] = next[i].max(offset + 1);
                r.consumed += 1;
                r.bytes += message.payload_len() as u64;
                if first.is_none() {
                    first = Some(Instant::now());
                }
                if let Some(since) = starved_since.take() {
                    r.starved += since.elapsed();
                }
                // Two clock reads per SAMPLE_EVERY records: the gap between a pair of consecutive records.
                match r.consumed % SAMPLE_EVERY {
                    0 => {
                        let now = Instant::now();
                        if let Some(start) = sample_start.take() {
                            let _ = r.gaps.record((now - start).as_nanos().max(1) as u64);
                        }
                    }
                    n if n == SAMPLE_EVERY - 1 => sample_start = Some(Instant::now()),
                    _ => {}
                }
                spin.work();
                benchhost_plugin_api::slower::spin(crate::SLOWER);
                // Open loop: processed now, from when it was due and when it was sent.
                if let Some(stamps) = r.stamps.as_mut()
                    && let Some((due, sent)) = message.payload().and_then(crate::paced::read_stamp)
                {
                    let now = shared.epoch.elapsed();
                    stamps.record(due, sent, now);
                    r.stamped = Some((r.stamped.map_or(now, |(first, _)| first), now));
                }
            }
        }
        if let Some(main) = main {
            // Serves the split consumer's events; a record here escaped its partition queue.
            while let Some(polled) = main.poll(Duration::ZERO) {
                if polled.is_ok() {
                    r.leaked += 1;
                }
            }
        }
        // Once per round (up to BATCH records per source): progress for the feed's backpressure, and one
        // clock read for the window.
        publish(partitions, &next, shared);
        let now = Instant::now();
        if now >= limits.deadline {
            break Exit::Timeout;
        }
        if let (Some(window), Some(first)) = (limits.window, first)
            && now - first >= window
        {
            break Exit::Window;
        }
        if got == 0 {
            if caught_up(&next) {
                if shared.feed_done.load(Relaxed) {
                    break Exit::Drained;
                }
                if first.is_some() && starved_since.is_none() {
                    starved_since = Some(now);
                }
            }
            std::thread::sleep(IDLE);
        }
    };
    let end = Instant::now();
    if let Some(since) = starved_since {
        r.starved += end - since;
    }
    publish(partitions, &next, shared);
    r.elapsed = first.map_or(Duration::ZERO, |f| end - f);
    r.exit = exit;
    r.partitions = partitions.iter().zip(&next).map(|((p, start), n)| (*p, *start, *n)).collect();
    r
}

fn publish(partitions: &[(usize, i64)], next: &[i64], shared: &Shared) {
    for ((p, _), n) in partitions.iter().zip(next) {
        shared.processed[*p].0.store(*n, Relaxed);
    }
}
