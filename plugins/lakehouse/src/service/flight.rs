//! The querier service as an arrow-flight `FlightService`: `do_get` decodes the ticket, routes it to its
//! engine ([`statement::of`]), plans the statement in the querier's session over the service's tables and
//! streams the answer as Flight data while it executes. A ticket no engine can answer is `InvalidArgument`,
//! saying why; a plan that fails is `Internal`. The other Flight calls are `Unimplemented`: the seed times
//! `do_get` only.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::flight_service_server::FlightService;
use arrow_flight::{
    Action, ActionType, Criteria, Empty, FlightData, FlightDescriptor, FlightInfo, HandshakeRequest, HandshakeResponse,
    PollInfo, PutResult, SchemaResult, Ticket,
};
use datafusion::physical_plan::{ExecutionPlan, execute_stream};
use datafusion::prelude::SessionContext;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use tonic::{Request, Response, Status, Streaming};

use crate::service::statement;
use crate::service::ticket;

/// What the service last served: the plan it ran and how long planning took (for the rig's scan facts).
#[derive(Clone)]
pub struct Served {
    pub plan: Arc<dyn ExecutionPlan>,
    pub planning: Duration,
}

/// The service over a session in which the tables are registered under [`statement`]'s names.
pub struct QuerierService {
    ctx: SessionContext,
    last: Mutex<Option<Served>>,
}

impl QuerierService {
    pub fn new(ctx: SessionContext) -> Self {
        QuerierService { ctx, last: Mutex::new(None) }
    }

    /// The plan of the last `do_get` that planned, taken.
    pub fn take_served(&self) -> Option<Served> {
        self.last.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// The session, for the rig's cold footer cache.
    pub fn session(&self) -> &SessionContext {
        &self.ctx
    }
}

type Stream<T> = BoxStream<'static, Result<T, Status>>;

fn unimplemented<T>(call: &str) -> Result<T, Status> {
    Err(Status::unimplemented(format!("the querier service answers do_get only, not {call}")))
}

#[tonic::async_trait]
impl FlightService for QuerierService {
    type HandshakeStream = Stream<HandshakeResponse>;
    type ListFlightsStream = Stream<FlightInfo>;
    type DoGetStream = Stream<FlightData>;
    type DoPutStream = Stream<PutResult>;
    type DoActionStream = Stream<arrow_flight::Result>;
    type ListActionsStream = Stream<ActionType>;
    type DoExchangeStream = Stream<FlightData>;

    async fn do_get(&self, request: Request<Ticket>) -> Result<Response<Self::DoGetStream>, Status> {
        let ticket = ticket::Ticket::decode(request.get_ref())?;
        let sql = statement::of(&ticket).map_err(Status::invalid_argument)?;
        let failed = |e: datafusion::error::DataFusionError| Status::internal(format!("planning `{sql}`: {e}"));
        let start = Instant::now();
        let plan = self.ctx.sql(&sql).await.map_err(failed)?.create_physical_plan().await.map_err(failed)?;
        let planning = start.elapsed();
        let batches = execute_stream(plan.clone(), self.ctx.task_ctx()).map_err(failed)?;
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(Served { plan, planning });
        let schema = batches.schema();
        let batches = batches.map_err(|e| FlightError::ExternalError(Box::new(e)));
        let data = FlightDataEncoderBuilder::new().with_schema(schema).build(batches).map_err(Status::from);
        Ok(Response::new(data.boxed()))
    }

    async fn handshake(
        &self,
        _: Request<Streaming<HandshakeRequest>>,
    ) -> Result<Response<Self::HandshakeStream>, Status> {
        unimplemented("handshake")
    }

    async fn list_flights(&self, _: Request<Criteria>) -> Result<Response<Self::ListFlightsStream>, Status> {
        unimplemented("list_flights")
    }

    async fn get_flight_info(&self, _: Request<FlightDescriptor>) -> Result<Response<FlightInfo>, Status> {
        unimplemented("get_flight_info")
    }

    async fn poll_flight_info(&self, _: Request<FlightDescriptor>) -> Result<Response<PollInfo>, Status> {
        unimplemented("poll_flight_info")
    }

    async fn get_schema(&self, _: Request<FlightDescriptor>) -> Result<Response<SchemaResult>, Status> {
        unimplemented("get_schema")
    }

    async fn do_put(&self, _: Request<Streaming<FlightData>>) -> Result<Response<Self::DoPutStream>, Status> {
        unimplemented("do_put")
    }

    async fn do_action(&self, _: Request<Action>) -> Result<Response<Self::DoActionStream>, Status> {
        unimplemented("do_action")
    }

    async fn list_actions(&self, _: Request<Empty>) -> Result<Response<Self::ListActionsStream>, Status> {
        unimplemented("list_actions")
    }

    async fn do_exchange(&self, _: Request<Streaming<FlightData>>) -> Result<Response<Self::DoExchangeStream>, Status> {
        unimplemented("do_exchange")
    }
}
