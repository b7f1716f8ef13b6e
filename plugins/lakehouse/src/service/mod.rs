//! The querier service (seed 000's `querier_service_read_paths`): a Flight service over the lakehouse's tables
//! whose `do_get` routes a ticket to the engine that answers it: tickets ([`ticket`]), the statement each becomes
//! ([`statement`], with [`promql`] and [`logql`]), the service ([`flight`]) over its tables ([`tables`]), and the
//! seed's five requests with their answers computed another way ([`arms`]).

pub mod arms;
pub mod flight;
pub mod logql;
pub mod promql;
pub mod statement;
pub mod tables;
pub mod ticket;
