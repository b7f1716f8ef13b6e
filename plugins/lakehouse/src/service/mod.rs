//! The querier service (seed 000's `querier_service_read_paths`): a Flight service over the lakehouse's tables
//! whose `do_get` routes a ticket to the engine that answers it. So far: the tickets and the LogQL parse.

pub mod logql;
pub mod ticket;
