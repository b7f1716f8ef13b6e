//! The producer side: fills the topic round-robin over partitions and keeps it fed while the consumers run,
//! never letting a partition's backlog exceed `high` records.
//!
//! Why not produce everything up front: librdkafka's mock cluster keeps at most ~5 MiB per partition
//! (hard-coded in `rdkafka_mock.c`), so a large backlog produced in advance silently loses its oldest records.
//! Bounding each partition's lag (produced − consumed) under that limit keeps every record readable, and the
//! same feed works unchanged against a real broker. Produced counts and offsets come from delivery reports,
//! never from the broker's watermarks (which some brokers get wrong).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use benchhost_plugin_api::RigError;
use benchhost_plugin_api::open_loop::Schedule;
use rdkafka::ClientConfig;
use rdkafka::client::ClientContext;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};

/// A value on a cache line of its own, so threads writing neighbouring slots do not contend.
#[repr(align(128))]
#[derive(Default)]
pub struct Slot(pub AtomicI64);

/// State shared by the feed and the consumer threads. Every slot has exactly one writer.
pub struct Shared {
    /// Next offset each partition's consumer has processed up to (written by that partition's thread).
    pub processed: Vec<Slot>,
    /// Highest delivered offset + 1, per partition (written by the feed's delivery reports).
    pub delivered_end: Vec<Slot>,
    /// Lowest offset delivered in this run, per partition.
    pub first: Vec<Slot>,
    /// Records delivered in this run, per partition.
    pub delivered: Vec<Slot>,
    /// Deliveries that failed.
    pub failed: AtomicU64,
    /// First delivery error, for the message.
    pub first_error: std::sync::Mutex<Option<String>>,
    /// Set once every record of the run is delivered (drain mode ends there).
    pub feed_done: AtomicBool,
    /// Set when the consumers are finished: the feed stops.
    pub stop: AtomicBool,
    /// Open loop: the schedule the records are produced on (each consumer measures its records' latency).
    pub schedule: Option<Schedule>,
    /// What the stamps of paced records count from.
    pub epoch: Instant,
}

impl Shared {
    /// Fresh state for `partitions` partitions, produced on `schedule` if given.
    pub fn new(partitions: usize, schedule: Option<Schedule>) -> Shared {
        let slots = |v: i64| (0..partitions).map(|_| Slot(AtomicI64::new(v))).collect();
        Shared {
            processed: slots(0),
            delivered_end: slots(0),
            first: slots(i64::MAX),
            delivered: slots(0),
            failed: AtomicU64::new(0),
            first_error: std::sync::Mutex::new(None),
            feed_done: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            schedule,
            epoch: Instant::now(),
        }
    }
}

/// Routes delivery reports into [`Shared`].
pub struct Reports(pub Arc<Shared>);

impl ClientContext for Reports {}

impl ProducerContext for Reports {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        match result {
            Ok(message) => {
                let (p, offset) = (message.partition() as usize, message.offset());
                let shared = &self.0;
                shared.delivered_end[p].0.fetch_max(offset + 1, Relaxed);
                shared.first[p].0.fetch_min(offset, Relaxed);
                shared.delivered[p].0.fetch_add(1, Relaxed);
            }
            Err((err, _)) => {
                self.0.failed.fetch_add(1, Relaxed);
                let mut first = self.0.first_error.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert_with(|| err.to_string());
            }
        }
    }
}

/// The producer of one run.
pub struct Feed {
    pub(crate) producer: BaseProducer<Reports>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) topic: String,
    pub(crate) payload: Vec<u8>,
    /// Records each partition gets in this run (round-robin split of `messages`).
    pub(crate) target: Vec<u64>,
    /// Records sent (handed to librdkafka) per partition.
    sent: Vec<u64>,
    /// Start offset of each partition's records in this run, known after the prefill.
    start: Vec<i64>,
    high: u64,
}

impl Feed {
    /// A producer for `messages` records of `payload_bytes` over `partitions`, at most `high` unconsumed
    /// records per partition; with a `schedule`, those records are the zeroed markers of an open-loop run
    /// (see `paced`).
    pub fn new(
        bootstrap: &str,
        topic: &str,
        partitions: usize,
        messages: u64,
        payload_bytes: usize,
        high: u64,
        schedule: Option<Schedule>,
    ) -> Result<Feed, RigError> {
        let shared = Arc::new(Shared::new(partitions, schedule));
        let producer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("linger.ms", "5")
            .set("batch.num.messages", "10000")
            .set("queue.buffering.max.messages", "2000000")
            .set("queue.buffering.max.kbytes", "2097151")
            .create_with_context(Reports(shared.clone()))?;
        let p = partitions as u64;
        let target = (0..p).map(|i| messages / p + u64::from(i < messages % p)).collect();
        let payload = vec![if schedule.is_some() { 0 } else { b'x' }; payload_bytes];
        Ok(Feed {
            producer,
            shared,
            topic: topic.into(),
            payload,
            target,
            sent: vec![0; partitions],
            start: vec![0; partitions],
            high,
        })
    }

    /// The shared state.
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Fills every partition up to its backlog limit and waits for the deliveries; returns each partition's
    /// start offset (`None` for a partition that gets no records).
    pub fn prefill(&mut self, timeout: Duration) -> Result<Vec<Option<i64>>, RigError> {
        while self.send_round()? {}
        self.producer.flush(timeout).map_err(|e| RigError::new(format!("prefill: {e}")))?;
        self.check_failures()?;
        let starts: Vec<Option<i64>> = (0..self.target.len())
            .map(|p| (self.target[p] > 0).then(|| self.shared.first[p].0.load(Relaxed)))
            .collect();
        for (p, start) in starts.iter().enumerate() {
            // Lag is measured against what the consumers processed; they start at the run's first offset.
            self.start[p] = start.unwrap_or(0);
            self.shared.processed[p].0.store(self.start[p], Relaxed);
        }
        Ok(starts)
    }

    /// Whether every record of the run has been handed to the producer (after a prefill: nothing is fed live).
    pub fn all_sent(&self) -> bool {
        self.sent.iter().zip(&self.target).all(|(s, t)| s == t)
    }

    /// Keeps the partitions fed until `stop` is set or every record is delivered.
    pub fn feed(&mut self, timeout: Duration) -> Result<(), RigError> {
        while !self.shared.stop.load(Relaxed) {
            let sent_any = self.send_round()?;
            self.producer.poll(Duration::ZERO);
            if self.all_sent() {
                self.producer.flush(timeout).map_err(|e| RigError::new(format!("flushing the feed: {e}")))?;
                self.check_failures()?;
                self.shared.feed_done.store(true, Relaxed);
                return Ok(());
            }
            if !sent_any {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        // Stopped early (window mode): let what was sent be delivered, so `produced` is exact.
        let _ = self.producer.flush(timeout);
        Ok(())
    }

    /// Sends to every partition below its backlog limit; returns whether anything was sent.
    fn send_round(&mut self) -> Result<bool, RigError> {
        let mut sent_any = false;
        for p in 0..self.target.len() {
            let processed = (self.shared.processed[p].0.load(Relaxed) - self.start[p]).max(0) as u64;
            while self.sent[p] < self.target[p] && self.sent[p] - processed.min(self.sent[p]) < self.high {
                let record: BaseRecord<'_, (), [u8]> =
                    BaseRecord::to(&self.topic).partition(p as i32).payload(&self.payload);
                match self.producer.send(record) {
                    Ok(()) => {
                        self.sent[p] += 1;
                        sent_any = true;
                    }
                    Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
                        self.producer.poll(Duration::from_millis(1));
                        break;
                    }
                    Err((e, _)) => return Err(RigError::new(format!("producing to partition {p}: {e}"))),
                }
            }
        }
        Ok(sent_any)
    }

    pub(crate) fn check_failures(&self) -> Result<(), RigError> {
        let failed = self.shared.failed.load(Relaxed);
        if failed == 0 {
            return Ok(());
        }
        let first = self.shared.first_error.lock().unwrap_or_else(|e| e.into_inner()).clone().unwrap_or_default();
        Err(RigError::new(format!("{failed} records failed to be delivered (first: {first})")))
    }
}
