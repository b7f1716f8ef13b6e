//! The two consumer topologies of seed 003, each feeding the same drain loop:
//! - `perthread`: `threads` consumers, consumer t assigned the partitions p with p % threads == t;
//! - `split`: one consumer; every partition queue is split off **before** `assign` (librdkafka's split
//!   queues must exist before the first assignment; so made, they stay split after it, with 0 records leaked to
//!   the main queue in every trial on librdkafka 2.12.1) and queue p goes to thread p % threads; thread 0 also polls the main
//!   queue for events, where any record counts as leaked.
//!
//! Consumers use manual assignment from the run's start offsets, no commits, no partition EOF events.

use std::sync::Arc;
use std::thread;

use benchhost_plugin_api::RigError;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

use crate::drain::{Limits, Source, ThreadReport, drain};
use crate::feed::Shared;
use crate::spin::Spin;

/// Which topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// One consumer per thread.
    Perthread,
    /// One consumer, partition queues split off to threads.
    Split,
}

/// What every consumer is configured with, identically in both modes.
#[derive(Debug, Clone)]
pub struct ConsumerSettings {
    /// `bootstrap.servers`.
    pub bootstrap: String,
    /// Topic to read.
    pub topic: String,
    /// `queued.min.messages`: the prefetch depth (seed 003 bug 6: it must match the product's).
    pub queued_min_messages: u64,
    /// `fetch.wait.max.ms`.
    pub fetch_wait_max_ms: u64,
}

impl ConsumerSettings {
    pub(crate) fn consumer(&self) -> Result<BaseConsumer, RigError> {
        Ok(ClientConfig::new()
            .set("bootstrap.servers", &self.bootstrap)
            .set("group.id", format!("benchhost-{}", std::process::id()))
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("enable.partition.eof", "false")
            .set("auto.offset.reset", "earliest")
            .set("queued.min.messages", self.queued_min_messages.to_string())
            .set("fetch.wait.max.ms", self.fetch_wait_max_ms.to_string())
            .create()?)
    }

    pub(crate) fn assignment(&self, partitions: &[(usize, i64)]) -> Result<TopicPartitionList, RigError> {
        let mut list = TopicPartitionList::new();
        for (p, start) in partitions {
            list.add_partition_offset(&self.topic, *p as i32, Offset::Offset(*start))?;
        }
        Ok(list)
    }
}

/// Partitions of thread `t`: `(partition, start offset)` for p % threads == t, skipping partitions that get no
/// records in this run. With fewer partitions than threads some threads own none (seed 003 bug 5: never index
/// a thread's first queue blindly).
pub fn owned(t: usize, threads: usize, starts: &[Option<i64>]) -> Vec<(usize, i64)> {
    starts.iter().enumerate().filter(|(p, _)| p % threads == t).filter_map(|(p, s)| s.map(|s| (p, s))).collect()
}

/// One run's consumers.
pub struct Consumers<'a> {
    /// Topology.
    pub mode: Mode,
    /// Threads.
    pub threads: usize,
    /// Consumer configuration.
    pub settings: &'a ConsumerSettings,
    /// Start offset per partition (`None`: no records in this run).
    pub starts: &'a [Option<i64>],
    /// State shared with the feed.
    pub shared: &'a Shared,
    /// Work per record.
    pub spin: Spin,
    /// Window and deadline.
    pub limits: Limits,
}

/// Runs the drain loops and returns their reports in thread order. `during` runs on the calling thread while
/// the consumers work (fault injection).
pub fn consume(run: &Consumers<'_>, during: impl FnOnce()) -> Result<Vec<ThreadReport>, RigError> {
    let Consumers { mode, threads, settings, starts, shared, spin, limits } = *run;
    match mode {
        Mode::Perthread => {
            let consumers = (0..threads)
                .map(|t| Ok((settings.consumer()?, owned(t, threads, starts))))
                .collect::<Result<Vec<_>, RigError>>()?;
            thread::scope(|s| {
                let handles: Vec<_> = consumers
                    .iter()
                    .map(|(consumer, mine)| {
                        s.spawn(move || {
                            // Assigned by its own thread right before its loop, so librdkafka cannot prefetch an
                            // untimed head start while other threads are still being set up.
                            if !mine.is_empty() {
                                consumer.assign(&settings.assignment(mine)?)?;
                            }
                            Ok(drain(&[Source::Consumer(consumer)], None, mine, shared, &spin, limits))
                        })
                    })
                    .collect();
                during();
                handles.into_iter().map(|h| h.join().expect("drain threads do not panic")).collect()
            })
        }
        Mode::Split => {
            let consumer = Arc::new(settings.consumer()?);
            let mut queues = Vec::new();
            for (p, start) in starts.iter().enumerate() {
                if start.is_some() {
                    let queue = consumer
                        .split_partition_queue(&settings.topic, p as i32)
                        .ok_or_else(|| RigError::new(format!("splitting off the queue of partition {p}")))?;
                    queues.push((p, queue));
                }
            }
            let all: Vec<(usize, i64)> = starts.iter().enumerate().filter_map(|(p, s)| s.map(|s| (p, s))).collect();
            let assignment = settings.assignment(&all)?;
            let reports = thread::scope(|s| {
                // Assigned right before the threads start, for the same reason as in perthread.
                consumer.assign(&assignment)?;
                let handles: Vec<_> = (0..threads)
                    .map(|t| {
                        let mine = owned(t, threads, starts);
                        let sources: Vec<Source<'_>> =
                            queues.iter().filter(|(p, _)| p % threads == t).map(|(_, q)| Source::Queue(q)).collect();
                        let main = (t == 0).then_some(consumer.as_ref());
                        s.spawn(move || drain(&sources, main, &mine, shared, &spin, limits))
                    })
                    .collect();
                during();
                Ok(handles.into_iter().map(|h| h.join().expect("drain threads do not panic")).collect())
            });
            drop(queues);
            reports
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_go_to_thread_p_mod_threads_even_when_threads_outnumber_them() {
        let starts = [Some(10), Some(20), None, Some(40)];
        assert_eq!(owned(0, 2, &starts), [(0, 10)]);
        assert_eq!(owned(1, 2, &starts), [(1, 20), (3, 40)]);
        assert!(owned(3, 8, &starts).len() == 1 && owned(5, 8, &starts).is_empty());
    }
}
