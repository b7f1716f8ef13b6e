//! The cache as a Flight SQL service (arrow-flight's `FlightSqlService`): `DoGet` of a statement ticket routes
//! the ticket's statement text (`routing`), serves it from its tier or fetches it from the upstream, and
//! streams Flight data. The response's `x-cache-result` header says which tier served and whether it hit, as
//! Trickster's `X-Trickster-Result` does.

use std::pin::Pin;
use std::sync::{Mutex, MutexGuard};

use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::flight_service_server::FlightService;
use arrow_flight::sql::server::FlightSqlService;
use arrow_flight::sql::{ProstMessageExt, SqlInfo, TicketStatementQuery};
use arrow_flight::{FlightData, Ticket};
use futures::{Stream, StreamExt, TryStreamExt, stream};
use prost::Message;
use tonic::metadata::MetadataValue;
use tonic::{Request, Response, Status};

use crate::dataset::Dataset;
use crate::routing::{self, Route};
use crate::tiers::{DeltaTier, ObjectTier};
use crate::upstream::{Answer, Upstream};

/// The response header naming the tier that served and whether it hit: `tier=delta; status=hit`.
pub const RESULT_HEADER: &str = "x-cache-result";

type FlightStream = Pin<Box<dyn Stream<Item = Result<FlightData, Status>> + Send + 'static>>;

/// The statement cache in front of an upstream.
pub struct CacheService {
    upstream: Upstream,
    tiers: Mutex<Tiers>,
}

#[derive(Default)]
struct Tiers {
    object: ObjectTier,
    delta: DeltaTier,
}

/// The ticket a client sends for `statement`: the statement text as the handle of a `TicketStatementQuery`.
pub fn ticket(statement: &str) -> Ticket {
    let query = TicketStatementQuery { statement_handle: statement.to_string().into() };
    Ticket::new(query.as_any().encode_to_vec())
}

impl CacheService {
    /// An empty cache in front of `upstream`.
    pub fn new(upstream: Upstream) -> Self {
        CacheService { upstream, tiers: Mutex::default() }
    }

    /// Forgets everything both tiers hold.
    pub fn purge(&self) {
        let mut tiers = self.tiers();
        tiers.object.clear();
        tiers.delta.clear();
    }

    fn tiers(&self) -> MutexGuard<'_, Tiers> {
        // A panic while the lock was held leaves nothing half-written that a later request could misread:
        // each tier replaces whole entries.
        self.tiers.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    async fn fetch(&self, statement: &str) -> Result<Answer, Status> {
        self.upstream.fetch(statement).await.map_err(|e| Status::internal(format!("the upstream: {e}")))
    }

    /// Serves `statement` from the tier `route` names: the Flight data, and the `x-cache-result` header's value.
    async fn serve(&self, statement: &str, route: &Route) -> Result<(FlightStream, &'static str), Status> {
        match route {
            Route::Passthrough => Ok((encode(self.fetch(statement).await?), "tier=passthrough; status=fetched")),
            Route::Object => {
                if let Some(messages) = self.tiers().object.get(statement) {
                    return Ok((Box::pin(stream::iter(messages.into_iter().map(Ok))), "tier=object; status=hit"));
                }
                let messages: Vec<FlightData> = encode(self.fetch(statement).await?).try_collect().await?;
                self.tiers().object.put(statement, messages.clone());
                Ok((Box::pin(stream::iter(messages.into_iter().map(Ok))), "tier=object; status=miss"))
            }
            Route::Delta { template, window } => {
                let cropped = self.tiers().delta.crop(template, *window);
                let (dataset, status) = match cropped {
                    Some(dataset) => (dataset, "tier=delta; status=hit"),
                    None => {
                        let answer = self.fetch(statement).await?;
                        let dataset = Dataset::from_answer(*window, answer.schema, &answer.batches)
                            .map_err(|e| Status::internal(format!("the delta tier cannot hold the answer: {e}")))?;
                        self.tiers().delta.put(template, dataset.clone());
                        (dataset, "tier=delta; status=miss")
                    }
                };
                let batch = dataset.to_batch().map_err(|e| Status::internal(e.to_string()))?;
                Ok((encode(Answer { schema: dataset.schema().clone(), batches: vec![batch] }), status))
            }
        }
    }
}

/// The Flight data of an answer: its schema's message first, then its batches'.
fn encode(Answer { schema, batches }: Answer) -> FlightStream {
    let batches = stream::iter(batches.into_iter().map(Ok));
    Box::pin(FlightDataEncoderBuilder::new().with_schema(schema).build(batches).map_err(Status::from))
}

#[tonic::async_trait]
impl FlightSqlService for CacheService {
    type FlightService = CacheService;

    async fn do_get_statement(
        &self,
        ticket: TicketStatementQuery,
        _request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        let statement = std::str::from_utf8(&ticket.statement_handle)
            .map_err(|_| Status::invalid_argument("the ticket's statement is not UTF-8"))?;
        let route = routing::route(statement).map_err(Status::invalid_argument)?;
        let (stream, result) = self.serve(statement, &route).await?;
        let mut response = Response::new(stream.boxed());
        response.metadata_mut().insert(RESULT_HEADER, MetadataValue::from_static(result));
        Ok(response)
    }

    async fn register_sql_info(&self, _id: i32, _result: &SqlInfo) {}
}

/// The tier and the status of a response's `x-cache-result` header.
pub fn result_of<T>(response: &Response<T>) -> Option<(&str, &str)> {
    let value = response.metadata().get(RESULT_HEADER)?.to_str().ok()?;
    let (tier, status) = value.split_once("; ")?;
    Some((tier.strip_prefix("tier=")?, status.strip_prefix("status=")?))
}
