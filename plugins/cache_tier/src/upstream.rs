//! The origin the cache tiers sit in front of. `DataFusion` plans and executes the seed's statement on every
//! fetch over an in-memory table, as a real origin would; `Canned` replays answers DataFusion gave once, like
//! the seed's fake in-process upstream, so the seed's numbers can be compared like for like.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::RecordBatch;
use datafusion::datasource::MemTable;
use datafusion::error::DataFusionError;
use datafusion::prelude::{SessionConfig, SessionContext};
use tokio::runtime::Runtime;

use crate::data::{self, Window};

/// The seed's delta-cacheable statement with its time range taken out: the delta tier's key. It has an
/// `ORDER BY` so that every answer has one row order and answers compare row by row (the seed's has none).
pub fn template() -> String {
    "SELECT date_bin(INTERVAL '1 minute', time) AS time, host, avg(v) AS v FROM m \
     WHERE time >= to_timestamp_nanos($start) AND time < to_timestamp_nanos($end) GROUP BY 1, host ORDER BY 1, host"
        .to_string()
}

/// The statement over `window`: the object tier's key and what the upstream executes.
pub fn statement(window: Window) -> String {
    template().replace("$start", &window.start.to_string()).replace("$end", &window.end.to_string())
}

/// Where answers come from.
pub enum Upstream {
    /// DataFusion plans and executes every statement.
    DataFusion(Engine),
    /// Answers recorded from DataFusion in setup, replayed as bytes; other statements are an error.
    Canned(HashMap<String, Vec<u8>>),
}

impl Upstream {
    /// The answer to `statement` as an Arrow IPC stream.
    pub fn fetch(&self, statement: &str) -> Result<Vec<u8>, DataFusionError> {
        match self {
            Upstream::DataFusion(engine) => engine.answer(statement),
            Upstream::Canned(answers) => answers
                .get(statement)
                .cloned()
                .ok_or_else(|| DataFusionError::Plan(format!("the canned upstream has no answer for `{statement}`"))),
        }
    }
}

/// A DataFusion session over the raw table `m`, driven from a current-thread runtime with one target
/// partition: one request runs on one core, like the tiers it is compared with.
pub struct Engine {
    context: SessionContext,
    runtime: Runtime,
}

impl Engine {
    /// Registers `raw` as table `m`.
    pub fn new(raw: RecordBatch) -> Result<Self, DataFusionError> {
        let config = SessionConfig::new().with_target_partitions(1);
        let context = SessionContext::new_with_config(config);
        let table = MemTable::try_new(raw.schema(), vec![vec![raw]])?;
        context.register_table("m", Arc::new(table))?;
        let runtime = tokio::runtime::Builder::new_current_thread().build()?;
        Ok(Engine { context, runtime })
    }

    /// Plans and executes `statement`, then encodes the answer as an Arrow IPC stream.
    pub fn answer(&self, statement: &str) -> Result<Vec<u8>, DataFusionError> {
        self.runtime.block_on(async {
            let frame = self.context.sql(statement).await?;
            let schema = Arc::new(frame.schema().as_arrow().clone());
            let batches = frame.collect().await?;
            let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
            Ok(data::encode(&schema, &batches, 256 + rows * 32)?)
        })
    }
}
