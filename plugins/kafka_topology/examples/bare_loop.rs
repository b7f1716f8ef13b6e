//! librdkafka's bare consumer loop, for judging what the rig itself costs: the same mock cluster shape as
//! the rig's 0 µs perthread arm (16 partitions x 10,000 records of 256 B produced up front, 4 threads, one
//! consumer each owning p % 4), but nothing per record except counting.
//!
//! `cargo run --release -p rig-kafka-topology --example bare_loop`

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
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("linger.ms", "5")
        .set("queue.buffering.max.messages", "2000000")
        .create()
        .expect("producer");
    let payload = vec![b'x'; 256];
    for i in 0..PER_PARTITION * PARTITIONS as u64 {
        let record = BaseRecord::<(), [u8]>::to(topic).partition((i % PARTITIONS as u64) as i32).payload(&payload);
        producer.send(record).expect("send");
        producer.poll(Duration::ZERO);
    }
    producer.flush(Duration::from_secs(30)).expect("flush");

    let mut rates: Vec<f64> = (0..REPETITIONS).map(|_| run(&bootstrap, topic)).collect();
    for rate in &rates {
        println!("bare loop: {rate:.0} records/s");
    }
    rates.sort_by(f64::total_cmp);
    println!("median over {REPETITIONS}: {:.0} records/s", rates[REPETITIONS / 2]);
}

/// One pass over the topic; the sum over threads of records / own window (first record to last).
fn run(bootstrap: &str, topic: &str) -> f64 {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                s.spawn(move || {
                    let consumer: BaseConsumer = ClientConfig::new()
                        .set("bootstrap.servers", bootstrap)
                        .set("group.id", "bare")
                        .set("enable.auto.commit", "false")
                        .set("enable.partition.eof", "false")
                        .set("queued.min.messages", "100000")
                        .set("fetch.wait.max.ms", "10")
                        .create()
                        .expect("consumer");
                    let mut list = TopicPartitionList::new();
                    let mine: Vec<i32> = (0..PARTITIONS).filter(|p| p % THREADS == t).collect();
                    for p in &mine {
                        list.add_partition_offset(topic, *p, Offset::Beginning).expect("partition");
                    }
                    consumer.assign(&list).expect("assign");
                    let expected = PER_PARTITION * mine.len() as u64;
                    let (mut count, mut first) = (0u64, None);
                    while count < expected {
                        if let Some(Ok(_)) = consumer.poll(Duration::ZERO) {
                            first.get_or_insert_with(Instant::now);
                            count += 1;
                        }
                    }
                    count as f64 / first.expect("records arrived").elapsed().as_secs_f64()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("thread")).sum()
    })
}
