//! The rigs' own tokio runtime: two workers, one per core of the reference machine. iceberg captures the
//! runtime it was built in and spawns its planning tasks there, so catalogs are built and queried inside it.

use tokio::runtime::{Builder, Runtime};

/// A multi-thread runtime with two workers.
pub fn new() -> std::io::Result<Runtime> {
    Builder::new_multi_thread().worker_threads(2).enable_all().thread_name("lakehouse-rig").build()
}
