//! The origin the cache sits in front of, and the seed's three statements. `DataFusion` plans and executes
//! every statement it is sent over in-memory tables, as a real origin would; `Canned` hands over batches
//! DataFusion answered once, like the seed's fake in-process upstream, so the seed's numbers compare like for
//! like. Either way the answer arrives as record batches, and the tier that asked encodes them.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::datasource::MemTable;
use datafusion::error::DataFusionError;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::data::{self, Window};

/// The seed's delta-cacheable statement over `window` (nanoseconds in `to_timestamp_nanos`, where the seed's
/// InfluxDB compares `time` to bare seconds). It has an `ORDER BY`, so that every answer has one row order
/// and answers compare row by row (the seed's has none).
pub fn delta_statement(window: Window) -> String {
    format!(
        "SELECT date_bin(INTERVAL '1 minute', time) AS time, host, avg(v) AS v FROM m \
         WHERE time >= to_timestamp_nanos({}) AND time < to_timestamp_nanos({}) GROUP BY 1, host ORDER BY 1, host",
        window.start, window.end
    )
}

/// The seed's object statement, `SELECT * FROM cpu LIMIT 5` over a canned payload of `rows` rows: here the
/// limit is the payload's size and the order is fixed, so a DataFusion origin answers the same rows.
pub fn object_statement(rows: usize) -> String {
    format!("SELECT * FROM cpu ORDER BY time, host LIMIT {rows}")
}

/// The seed's passthrough statement: nondeterministic, so never cached.
pub fn passthrough_statement() -> String {
    "SELECT now(), * FROM cpu ORDER BY time, host".to_string()
}

/// An answer: its schema (a statement may answer no batch) and its batches.
#[derive(Clone)]
pub struct Answer {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

/// Where answers come from.
pub enum Upstream {
    /// DataFusion plans and executes every statement.
    DataFusion(Engine),
    /// Answers recorded from DataFusion in setup, handed over again; other statements are an error.
    Canned(HashMap<String, Answer>),
}

impl Upstream {
    /// The answer to `statement`.
    pub async fn fetch(&self, statement: &str) -> Result<Answer, DataFusionError> {
        match self {
            Upstream::DataFusion(engine) => engine.answer(statement).await,
            Upstream::Canned(answers) => answers
                .get(statement)
                .cloned()
                .ok_or_else(|| DataFusionError::Plan(format!("the canned upstream has no answer for `{statement}`"))),
        }
    }
}

/// A DataFusion session with one target partition (one request runs on one core, like the tiers it is
/// compared with) over table `m`, the raw points the delta statement aggregates, and `cpu`, those of the
/// object and passthrough statements. It runs on the runtime of whoever awaits it.
pub struct Engine {
    context: SessionContext,
}

impl Engine {
    /// `m` holds `2 x minutes` minutes of points, `cpu` the first `minutes`.
    pub fn new(minutes: i64) -> Result<Self, DataFusionError> {
        let config = SessionConfig::new().with_target_partitions(1);
        let context = SessionContext::new_with_config(config);
        for (name, raw) in [("m", data::raw_table(2 * minutes)), ("cpu", data::raw_table(minutes))] {
            let table = MemTable::try_new(raw.schema(), vec![vec![raw]])?;
            context.register_table(name, Arc::new(table))?;
        }
        Ok(Engine { context })
    }

    /// Plans and executes `statement`.
    pub async fn answer(&self, statement: &str) -> Result<Answer, DataFusionError> {
        let frame = self.context.sql(statement).await?;
        let schema = Arc::new(frame.schema().as_arrow().clone());
        Ok(Answer { schema, batches: frame.collect().await? })
    }
}
