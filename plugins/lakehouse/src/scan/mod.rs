//! The querier's scan: an Iceberg snapshot's files, planned from its manifests on every query and scanned by
//! DataFusion's own Parquet source through the warehouse's storage, in a session configured once; what each
//! scan did, read from its executed plan; the point index beside a table; and the querier's shapes, the SQL each
//! sends with the answer it must give.

pub mod facts;
pub mod files;
pub mod index;
pub mod provider;
pub mod session;
pub mod shapes;
pub mod store;
pub mod topk_order;
