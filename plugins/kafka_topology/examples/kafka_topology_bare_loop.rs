//! librdkafka's bare consumer loop, for judging what the rig itself costs: the same mock cluster shape as
//! the rig's 0 µs perthread arm (16 partitions x 10,000 records of 256 B produced up front, 4 threads, one
//! consumer each owning p % 4), with nothing per record but counting. Two loops:
//! - `same cadence`: consumers created up front, each assigned by its thread right before its loop,
//!   non-blocking polls and a 100 µs sleep when a round finds nothing: the rig's loop without its bookkeeping
//!   (offset checks, sampled gaps, progress for the feed), so the difference is what the rig costs;
//! - `blocking`: the textbook `poll(100 ms)` loop with consumers created inside the threads.
//!
//! `cargo run --release -p rig-kafka-topology --example kafka_topology_bare_loop`

use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::mocking::MockCluster;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

const PARTITIONS: i32 = 16;
const PER_PARTITION: u64 = 10_000;
const THREADS: i32 = 4;
const REPETITIONS: usize = 7;

fn main() {
    let cluster = MockCluster::new(1).expect("mock cluster");
    let bootstrap = cluster.bootstrap_servers();
    let topic = "bench-p16-b256";
    cluster.create_topic(topic, PARTITIONS, 1).expect("topic");
    // Produced as the rig's prefill produces (same settings, partition after partition), so both read the
    // same batches.
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("linger.ms", "5")
        .set("batch.num.messages", "10000")
        .set("queue.buffering.max.messages", "2000000")
        .set("queue.buffering.max.kbytes", "2097151")
        .create()
        .expect("producer");
    let payload = vec![b'x'; 256];
    for p in 0..PARTITIONS {
        for _ in 0..PER_PARTITION {
            producer.send(BaseRecord::<(), [u8]>::to(topic).partition(p).payload(&payload)).expect("send");
        }
        producer.poll(Duration::ZERO);
    }
    producer.flush(Duration::from_secs(30)).expect("flush");

    for blocking in [false, true] {
        let mut rates: Vec<f64> = (0..REPETITIONS).map(|_| run(&bootstrap, topic, blocking)).collect();
        rates.sort_by(f64::total_cmp);
        let name = if blocking { "blocking" } else { "same cadence" };
        let all: Vec<String> = rates.iter().map(|r| format!("{:.2}M", r / 1e6)).collect();
        println!(
            "bare loop, {name}: median {:.0} records/s over {REPETITIONS} ({})",
            rates[REPETITIONS / 2],
            all.join(" ")
        );
    }
}

fn consumer(bootstrap: &str) -> BaseConsumer {
    ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "bare")
        // The rig's consumer configuration exactly, so only the loops differ.
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("enable.partition.eof", "false")
        .set("auto.offset.reset", "earliest")
        .set("queued.min.messages", "100000")
        .set("fetch.wait.max.ms", "10")
        .create()
        .expect("consumer")
}

/// One pass over the topic; the sum over threads of records / own window (first record to last).
fn run(bootstrap: &str, topic: &str, blocking: bool) -> f64 {
    let made: Vec<Option<BaseConsumer>> = (0..THREADS).map(|_| (!blocking).then(|| consumer(bootstrap))).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = made
            .into_iter()
            .enumerate()
            .map(|(t, made)| {
                s.spawn(move || {
                    let consumer = made.unwrap_or_else(|| consumer(bootstrap));
                    let mut list = TopicPartitionList::new();
                    let mine: Vec<i32> = (0..PARTITIONS).filter(|p| p % THREADS == t as i32).collect();
                    for p in &mine {
                        list.add_partition_offset(topic, *p, Offset::Beginning).expect("partition");
                    }
                    consumer.assign(&list).expect("assign");
                    let expected = PER_PARTITION * mine.len() as u64;
                    let (mut count, mut first) = (0u64, None);
                    while count < expected {
                        let timeout = if blocking { Duration::from_millis(100) } else { Duration::ZERO };
                        match consumer.poll(timeout) {
                            Some(Ok(_)) => {
                                first.get_or_insert_with(Instant::now);
                                count += 1;
                            }
                            _ if !blocking => std::thread::sleep(Duration::from_micros(100)),
                            _ => {}
                        }
                    }
                    count as f64 / first.expect("records arrived").elapsed().as_secs_f64()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("thread")).sum()
    })
}
