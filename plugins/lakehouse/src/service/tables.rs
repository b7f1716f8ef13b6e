//! The service's three tables, seeded once per library and run and copied into each instance's memory
//! warehouse: the querier's `traces` (the same seed as the querier rig's, [`Seeded::Traces`]), `metrics_gauge`
//! ([`series`]) and `logs` ([`logs`]); and the querier's session over them, each registered as DataFusion's
//! Parquet scan over the table's current snapshot.

use std::path::Path;
use std::sync::Arc;

use benchhost_plugin_api::{RigError, SetupContext};
use datafusion::prelude::SessionContext;
use iceberg::Catalog;
use tokio::runtime::Runtime;

use crate::scan::provider::IcebergParquetTable;
use crate::scan::session::Config;
use crate::scan::store::IcebergStore;
use crate::service::statement::{LOGS, METRICS, TRACES};
use crate::table::querier_tables::Seeded;
use crate::table::snapshot::{self, Kept};
use crate::table::warehouse::{Storage, Warehouse};
use crate::table::{logs, series};

/// A warehouse holding the three tables and the session that reads them.
pub struct Tables {
    pub warehouse: Warehouse,
    pub session: SessionContext,
}

/// Opens the tables (seeding any not yet kept for this library and run) in a memory warehouse of this
/// instance's own, and a session configured by `config` over them.
pub fn open(config: &Config, ctx: &SetupContext, runtime: &Runtime) -> Result<Tables, RigError> {
    let traces = Seeded::Traces.kept(ctx, runtime)?;
    let metrics = ctx.seed("service-metrics", |dir| {
        runtime.block_on(async {
            let (warehouse, table) = series::seed(Warehouse::seeding(Storage::Memory, dir).await?).await?;
            snapshot::keep(&warehouse, &table, dir).await
        })
    })?;
    let logs = ctx.seed("service-logs", |dir| {
        runtime.block_on(async {
            let warehouse = Warehouse::seeding(Storage::Memory, dir).await?;
            let table = logs::seed(&warehouse).await?;
            snapshot::keep(&warehouse, &table, dir).await
        })
    })?;
    runtime.block_on(async {
        let warehouse = Warehouse::new(Storage::Memory, Path::new("")).await?;
        let store = IcebergStore::new(warehouse.file_io(), IcebergStore::prefix_of(&warehouse.location));
        let session = config.session(store)?;
        for (dir, name) in [(&traces, TRACES), (&metrics, METRICS), (&logs, LOGS)] {
            let ident = Kept::read(dir)?.load(&warehouse, name).await?;
            let table = warehouse.catalog.load_table(&ident).await?;
            session.register_table(name, Arc::new(IcebergParquetTable::new(table)?))?;
        }
        warehouse.io.take();
        Ok(Tables { warehouse, session })
    })
}
