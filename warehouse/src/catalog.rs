//! A warehouse's catalog, connected: iceberg's SQL catalog on a sqlite file (a directory) or on PostgreSQL (a
//! fleet), or a REST catalog, each with the storage its data files are read and written with (a directory of
//! this machine, or S3).

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{Context, Result};
use iceberg::io::{LocalFsStorageFactory, StorageFactory};
use iceberg::{Catalog, CatalogBuilder};
use iceberg_catalog_rest::RestCatalogBuilder;
use iceberg_catalog_sql::{
    SQL_CATALOG_PROP_BIND_STYLE, SQL_CATALOG_PROP_URI, SQL_CATALOG_PROP_WAREHOUSE, SqlBindStyle, SqlCatalogBuilder,
};
use iceberg_storage_opendal::OpenDalStorageFactory;
use sqlx::Connection;
use url::Url;

use crate::catalog_lock::catalog_turn;
use crate::location::{Location, S3};

/// The storage that reads and writes the data files of a catalog whose data is on `s3` (or on this machine).
fn storage(s3: Option<&S3>) -> Arc<dyn StorageFactory> {
    match s3 {
        Some(_) => Arc::new(OpenDalStorageFactory::S3 { customized_credential_load: None }),
        None => Arc::new(LocalFsStorageFactory),
    }
}

/// The catalog of `location`.
pub(crate) async fn connect(location: &Location) -> Result<Box<dyn Catalog>> {
    let sql = |uri: String, warehouse: String, style: SqlBindStyle| {
        HashMap::from([
            (SQL_CATALOG_PROP_URI.to_string(), uri),
            (SQL_CATALOG_PROP_WAREHOUSE.to_string(), warehouse),
            (SQL_CATALOG_PROP_BIND_STYLE.to_string(), style.to_string()),
        ])
    };
    match location {
        Location::Dir(dir) => {
            std::fs::create_dir_all(dir.join("data")).with_context(|| format!("creating {}", dir.display()))?;
            let dir = dir.canonicalize()?;
            let uri = format!("sqlite:{}?mode=rwc", dir.join("catalog.sqlite").display());
            let props = sql(uri, dir.join("data").display().to_string(), SqlBindStyle::QMark);
            Ok(Box::new(connect_sql(props, storage(None), None).await?))
        }
        Location::Fleet { catalog, data } => {
            let mut props = data.properties();
            props.extend(sql(catalog.to_string(), data.url(), SqlBindStyle::DollarNumeric));
            Ok(Box::new(connect_sql(props, storage(Some(data)), Some(catalog)).await?))
        }
        Location::Rest { catalog, data } => {
            let mut props = data.as_ref().map(|s3| s3.properties()).unwrap_or_default();
            props.extend(catalog.properties());
            let builder = RestCatalogBuilder::default().with_storage_factory(storage(location.s3()));
            Ok(Box::new(builder.load("benchhost", props).await?))
        }
    }
}

/// A SQL catalog. iceberg creates its two tables on every open with `CREATE TABLE IF NOT EXISTS`, which
/// PostgreSQL answers, when two race, with an error (both create the row type: "duplicate key" or "type ...
/// already exists"), so on PostgreSQL the open waits its turn behind
/// [`CATALOG_LOCK`](crate::catalog_lock::CATALOG_LOCK).
async fn connect_sql(
    props: HashMap<String, String>,
    storage: Arc<dyn StorageFactory>,
    postgres: Option<&Url>,
) -> Result<iceberg_catalog_sql::SqlCatalog> {
    // Held until the catalog is open; closing the connection gives the turn to the next opener.
    let turn = match postgres {
        Some(uri) => Some(catalog_turn(uri).await?),
        None => None,
    };
    let catalog = SqlCatalogBuilder::default().with_storage_factory(storage).load("benchhost", props).await;
    if let Some(connection) = turn {
        drop(connection.close().await);
    }
    Ok(catalog?)
}
