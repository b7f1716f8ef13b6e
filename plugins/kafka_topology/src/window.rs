//! Windows of one continuing live feed, for a duel (`SetupContext::window_ns`): the feed and the consumers are
//! made at the first window and live until teardown; each window lets them run for its length, every thread
//! timed from its first record as in a run, then stops them: the feed flushes what it sent and the consumers
//! stop polling. librdkafka's fetchers, caught up, go on long-polling the broker (every `fetch.wait.max.ms`):
//! the host charges that to this arm as idle CPU (on the project's 2-core VM 3.8-4.9% of a core for perthread's
//! four consumers, ~1.9% for split's one). Pausing the partitions would stop it, but librdkafka purges a paused
//! partition's fetch queue, which holds the whole backlog here: every window would fetch it again.
//!
//! The next window goes on from the offsets this one reached, with the backlog the feed left: the same steady
//! state a long run has, without a producer start, a prefill and a consumer start per measurement.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::thread;
use std::time::{Duration, Instant};

use benchhost_plugin_api::{Observation, RigError};
use rdkafka::consumer::base_consumer::PartitionQueue;
use rdkafka::consumer::{BaseConsumer, Consumer, DefaultConsumerContext};

use crate::drain::{Limits, Source, ThreadReport, drain};
use crate::feed::Feed;
use crate::spin::Spin;
use crate::topology::{ConsumerSettings, Mode, owned};

/// The consumers of a session, assigned once.
enum Consumers {
    /// One consumer per thread (thread t's at index t).
    Perthread(Vec<BaseConsumer>),
    /// One consumer and its split-off partition queues, `(partition, queue)`.
    Split(Arc<BaseConsumer>, Vec<(usize, PartitionQueue<DefaultConsumerContext>)>),
}

/// A live feed and its consumers, paused between windows.
pub struct Session {
    feed: Feed,
    consumers: Consumers,
    /// Next offset to consume per partition (`None`: a partition that gets no records).
    next: Vec<Option<i64>>,
    /// Records delivered before this window.
    delivered: u64,
}

/// What a window runs with.
pub struct Setting<'a> {
    /// Topology.
    pub mode: Mode,
    /// Threads.
    pub threads: usize,
    /// Consumer configuration.
    pub settings: &'a ConsumerSettings,
    /// Work per record.
    pub spin: Spin,
    /// How long a run may take at most.
    pub timeout: Duration,
}

impl Session {
    /// Starts `feed` (its prefill) and assigns the consumers of `setting.mode` from its start offsets.
    pub fn start(mut feed: Feed, setting: &Setting<'_>) -> Result<Session, RigError> {
        let next = feed.prefill(setting.timeout)?;
        let Setting { mode, threads, settings, .. } = *setting;
        let consumers = match mode {
            Mode::Perthread => Consumers::Perthread(
                (0..threads)
                    .map(|t| {
                        let consumer = settings.consumer()?;
                        let mine = owned(t, threads, &next);
                        if !mine.is_empty() {
                            consumer.assign(&settings.assignment(&mine)?)?;
                        }
                        Ok(consumer)
                    })
                    .collect::<Result<_, RigError>>()?,
            ),
            Mode::Split => {
                let consumer = Arc::new(settings.consumer()?);
                let mut queues = Vec::new();
                for (p, _) in next.iter().enumerate().filter(|(_, s)| s.is_some()) {
                    let queue = consumer
                        .split_partition_queue(&settings.topic, p as i32)
                        .ok_or_else(|| RigError::new(format!("splitting off the queue of partition {p}")))?;
                    queues.push((p, queue));
                }
                let all: Vec<(usize, i64)> = next.iter().enumerate().filter_map(|(p, s)| Some((p, (*s)?))).collect();
                consumer.assign(&settings.assignment(&all)?)?;
                Consumers::Split(consumer, queues)
            }
        };
        let delivered = feed.shared().delivered.iter().map(|d| d.0.load(Relaxed) as u64).sum();
        Ok(Session { feed, consumers, next, delivered })
    }

    /// One window of `length`, observed as a windowed run is, with `produced` the records delivered during it.
    pub fn window(&mut self, length: Duration, setting: &Setting<'_>) -> Result<Observation, RigError> {
        let shared = self.feed.shared().clone();
        shared.stop.store(false, Relaxed);
        let limits = Limits { window: Some(length), deadline: Instant::now() + setting.timeout };
        let (threads, spin, next) = (setting.threads, &setting.spin, &self.next);
        let (feed, consumers, timeout) = (&mut self.feed, &self.consumers, setting.timeout);
        let (reports, fed) = thread::scope(|s| {
            let feeder = s.spawn(move || feed.feed(timeout));
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let mine = owned(t, threads, next);
                    let (sources, main): (Vec<Source<'_>>, _) = match consumers {
                        Consumers::Perthread(all) => (vec![Source::Consumer(&all[t])], None),
                        Consumers::Split(consumer, queues) => (
                            queues.iter().filter(|(p, _)| p % threads == t).map(|(_, q)| Source::Queue(q)).collect(),
                            (t == 0).then_some(consumer.as_ref()),
                        ),
                    };
                    let shared = &shared;
                    s.spawn(move || drain(&sources, main, &mine, shared, spin, limits))
                })
                .collect();
            let reports: Vec<ThreadReport> =
                handles.into_iter().map(|h| h.join().expect("drain threads do not panic")).collect();
            shared.stop.store(true, Relaxed);
            (reports, feeder.join().expect("the feed does not panic"))
        });
        fed?;
        for (p, _, next) in reports.iter().flat_map(|r| &r.partitions) {
            self.next[*p] = Some(*next);
        }
        let delivered: u64 = shared.delivered.iter().map(|d| d.0.load(Relaxed) as u64).sum();
        let mut observation = crate::observe(&reports, &shared, true)?;
        observation.counters.insert("produced".into(), delivered - self.delivered);
        observation.window = true;
        self.delivered = delivered;
        Ok(observation)
    }
}

impl crate::KafkaTopology {
    /// One window of the session (started by the first), `high` records of backlog per partition at most.
    pub(crate) fn window(&mut self, length: Duration, high: u64) -> Result<Observation, RigError> {
        let setting = Setting {
            mode: self.mode,
            threads: self.threads,
            settings: &self.settings,
            spin: self.spin,
            timeout: self.timeout,
        };
        if self.session.is_none() {
            let (bootstrap, topic) = (&self.settings.bootstrap, &self.settings.topic);
            let feed = Feed::new(bootstrap, topic, self.partitions, self.messages, self.payload_bytes, high, None)?;
            self.session = Some(Session::start(feed, &setting)?);
        }
        let session = self.session.as_mut().expect("started above");
        let note = format!(
            "a duel's window: {:.0} ms of a live feed that goes on from one window of this arm to the next (a producer keeps each partition at most {high} records ahead of its consumer); each thread timed from its first record in the window",
            length.as_secs_f64() * 1e3
        );
        Ok(session.window(length, &setting)?.note(note))
    }
}
