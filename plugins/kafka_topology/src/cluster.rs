//! The Kafka cluster a run talks to: librdkafka's mock cluster started in process (the default: real
//! librdkafka speaking the Kafka protocol over loopback), or a real cluster given by its bootstrap address.

use std::time::Duration;

use benchhost_plugin_api::RigError;
use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::mocking::MockCluster;
use rdkafka::producer::DefaultProducerContext;
use rdkafka::types::RDKafkaErrorCode;

const METADATA_TIMEOUT: Duration = Duration::from_secs(10);

/// A cluster.
pub enum Cluster {
    /// librdkafka's mock cluster, owned by the rig.
    Mock(Mock),
    /// A real cluster.
    Remote(String),
}

/// The mock cluster handle.
pub struct Mock(MockCluster<'static, DefaultProducerContext>);

// Safety: the handle is a pointer to librdkafka's mock cluster, whose API calls are serialized by the
// cluster's own lock and thread; the rig only moves the handle between threads, never shares it.
unsafe impl Send for Mock {}

impl Cluster {
    /// `mock` starts a mock cluster of `brokers` brokers; anything else is a bootstrap address.
    pub fn start(broker: &str, brokers: i32) -> Result<Cluster, RigError> {
        if broker == "mock" {
            let mock =
                MockCluster::new(brokers).map_err(|e| RigError::new(format!("starting the mock cluster: {e}")))?;
            Ok(Cluster::Mock(Mock(mock)))
        } else {
            Ok(Cluster::Remote(broker.to_string()))
        }
    }

    /// The `bootstrap.servers` to give clients.
    pub fn bootstrap(&self) -> String {
        match self {
            Cluster::Mock(mock) => mock.0.bootstrap_servers(),
            Cluster::Remote(servers) => servers.clone(),
        }
    }

    /// Creates `topic` with `partitions` partitions, or checks that an existing one has exactly that many.
    pub fn ensure_topic(&self, topic: &str, partitions: i32) -> Result<(), RigError> {
        match self {
            // The admin API hangs against the mock cluster; it has its own call.
            Cluster::Mock(mock) => match mock.0.create_topic(topic, partitions, 1) {
                Ok(()) | Err(KafkaError::MockCluster(RDKafkaErrorCode::TopicAlreadyExists)) => {}
                Err(e) => return Err(RigError::new(format!("creating topic {topic} on the mock cluster: {e}"))),
            },
            Cluster::Remote(servers) => create_remote(servers, topic, partitions)?,
        }
        let found = partition_count(&self.bootstrap(), topic)?;
        if found != partitions as usize {
            return Err(RigError::invalid_params(format!(
                "topic {topic} already exists with {found} partitions, the rig needs {partitions}; delete it or change `partitions`"
            )));
        }
        Ok(())
    }

    /// Takes a mock broker down (`up = false`) or back up. Real clusters are not touched.
    pub fn set_broker(&self, id: i32, up: bool) -> Result<(), RigError> {
        match self {
            Cluster::Mock(mock) => {
                let result = if up { mock.0.broker_up(id) } else { mock.0.broker_down(id) };
                result.map_err(|e| RigError::new(format!("mock broker {id}: {e}")))
            }
            Cluster::Remote(_) => {
                Err(RigError::invalid_params("broker faults can only be injected into the mock cluster"))
            }
        }
    }
}

fn create_remote(servers: &str, topic: &str, partitions: i32) -> Result<(), RigError> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new().set("bootstrap.servers", servers).create()?;
    let new_topic = NewTopic::new(topic, partitions, TopicReplication::Fixed(1));
    let options = AdminOptions::new().operation_timeout(Some(METADATA_TIMEOUT)).request_timeout(Some(METADATA_TIMEOUT));
    let results = futures_executor::block_on(admin.create_topics([&new_topic], &options))?;
    for result in results {
        match result {
            Ok(_) | Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((name, code)) => return Err(RigError::new(format!("creating topic {name}: {code}"))),
        }
    }
    Ok(())
}

/// Partitions of `topic`, from the cluster's metadata (bug 9 of seed 003: a reused topic must be checked).
pub fn partition_count(bootstrap: &str, topic: &str) -> Result<usize, RigError> {
    let client: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap).create()?;
    let metadata = client.fetch_metadata(Some(topic), METADATA_TIMEOUT)?;
    let Some(found) = metadata.topics().iter().find(|t| t.name() == topic) else {
        return Err(RigError::new(format!("topic {topic} is missing from the cluster's metadata")));
    };
    if let Some(err) = found.error() {
        return Err(RigError::new(format!("metadata of topic {topic}: {err:?}")));
    }
    Ok(found.partitions().len())
}
