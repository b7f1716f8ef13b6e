//! A commit that lands on the very table it was checked against, or not at all.
//!
//! `Transaction::commit` reloads the table before it commits and re-applies its actions to whatever is newest, and
//! retries a lost compare-and-swap by itself. Publish checks which of its records the table holds already, so its
//! commit must land on exactly the snapshot it checked: [`CheckedTableCatalog`] hands the transaction that table when
//! it reloads, and turns a conflict into an error the transaction does not retry. The catalog refuses the commit if
//! anything landed since (the main branch must still point at the checked snapshot, and the catalog row is swapped by
//! an `UPDATE ... WHERE metadata_location = <the one read>`), and publish checks again.

use std::collections::HashMap;

use async_trait::async_trait;
use iceberg::table::Table;
use iceberg::{Catalog, Error, ErrorKind, Namespace, NamespaceIdent, Result, TableCommit, TableCreation, TableIdent};

/// `BENCHHOST_WAREHOUSE_STALL_COMMIT=FILE`: for the test that kills a publisher in the middle of its commit,
/// the publisher creates FILE after its data files are written and then waits, just before the catalog update.
pub const STALL: &str = "BENCHHOST_WAREHOUSE_STALL_COMMIT";

/// A catalog for one commit of `table`: loads give `table`, updates go to `catalog`, unretried.
#[derive(Debug)]
pub struct CheckedTableCatalog<'a> {
    pub catalog: &'a dyn Catalog,
    pub table: Table,
}

fn unsupported<T>() -> Result<T> {
    Err(Error::new(ErrorKind::FeatureUnsupported, "a pinned catalog only loads and commits its table"))
}

#[async_trait]
impl Catalog for CheckedTableCatalog<'_> {
    async fn load_table(&self, _: &TableIdent) -> Result<Table> {
        Ok(self.table.clone())
    }

    async fn update_table(&self, commit: TableCommit) -> Result<Table> {
        if let Some(marker) = std::env::var_os(STALL) {
            std::fs::write(marker, b"stalled before the catalog update\n")?;
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        }
        self.catalog.update_table(commit).await.map_err(|e| match e.kind() {
            // A new error is not retryable: the transaction must not reload (it would get the same table).
            ErrorKind::CatalogCommitConflicts => Error::new(ErrorKind::CatalogCommitConflicts, e.message()),
            _ => e,
        })
    }

    async fn list_namespaces(&self, _: Option<&NamespaceIdent>) -> Result<Vec<NamespaceIdent>> {
        unsupported()
    }
    async fn create_namespace(&self, _: &NamespaceIdent, _: HashMap<String, String>) -> Result<Namespace> {
        unsupported()
    }
    async fn get_namespace(&self, _: &NamespaceIdent) -> Result<Namespace> {
        unsupported()
    }
    async fn namespace_exists(&self, _: &NamespaceIdent) -> Result<bool> {
        unsupported()
    }
    async fn update_namespace(&self, _: &NamespaceIdent, _: HashMap<String, String>) -> Result<()> {
        unsupported()
    }
    async fn drop_namespace(&self, _: &NamespaceIdent) -> Result<()> {
        unsupported()
    }
    async fn list_tables(&self, _: &NamespaceIdent) -> Result<Vec<TableIdent>> {
        unsupported()
    }
    async fn create_table(&self, _: &NamespaceIdent, _: TableCreation) -> Result<Table> {
        unsupported()
    }
    async fn drop_table(&self, _: &TableIdent) -> Result<()> {
        unsupported()
    }
    async fn purge_table(&self, _: &TableIdent) -> Result<()> {
        unsupported()
    }
    async fn table_exists(&self, _: &TableIdent) -> Result<bool> {
        unsupported()
    }
    async fn rename_table(&self, _: &TableIdent, _: &TableIdent) -> Result<()> {
        unsupported()
    }
    async fn register_table(&self, _: &TableIdent, _: String) -> Result<Table> {
        unsupported()
    }
}
