//! The warehouse: an Iceberg table `benchhost.records` (its columns and partitions in [`schema`]) behind
//! iceberg's SQL catalog, on a sqlite file in a directory for one machine or on PostgreSQL with data on S3 for a
//! fleet, or behind a REST catalog (see [`Location`]). The SQL catalog commits by compare-and-swap on the
//! table's metadata location (one row, one `UPDATE ... WHERE`); data files are written once under fresh names
//! and never changed.

use std::collections::HashMap;

use anyhow::{Context, Result, bail};
use iceberg::spec::DataFile;
use iceberg::table::Table;
use iceberg::transaction::{ApplyTransactionAction, Transaction};
use iceberg::{Catalog, ErrorKind, NamespaceIdent, TableIdent};

use crate::catalog::connect;
use crate::checked_commit::CheckedTableCatalog;
use crate::location::Location;
use crate::schema::{self, TABLE, schema_problem};

/// An open warehouse.
pub struct Warehouse {
    catalog: Box<dyn Catalog>,
    ident: TableIdent,
    location: Location,
}

impl Warehouse {
    /// Opens the warehouse at `location`, creating the catalog and the table on first use. Nothing is written
    /// unless the servers answer, accept the credentials, the bucket exists, and the table (if any) has the
    /// schema this benchhost writes.
    pub async fn open(location: &Location) -> Result<Warehouse> {
        location.check().await?;
        let catalog =
            connect(location).await.with_context(|| format!("opening the catalog {}", location.describe()))?;
        let namespace = NamespaceIdent::from_vec(location.namespace())?;
        let ident = TableIdent::new(namespace.clone(), TABLE.to_string());
        // Several publishers may open a new warehouse at once: creating what exists already is fine.
        if !namespace_exists(catalog.as_ref(), &namespace).await? {
            let _ = catalog.create_namespace(&namespace, HashMap::new()).await;
        }
        if !table_exists(catalog.as_ref(), &ident).await? {
            let creation = schema::creation()?;
            if let Err(err) = catalog.create_table(&namespace, creation).await
                && !table_exists(catalog.as_ref(), &ident).await?
            {
                return Err(err).context("creating the records table");
            }
        }
        let warehouse = Warehouse { catalog, ident, location: location.clone() };
        let table = warehouse.table().await?;
        if let Some(problem) = schema_problem(table.metadata().current_schema())? {
            bail!(
                "the table {} of {} has another schema: {problem}; publish to a new warehouse",
                location.namespace().join(".") + "." + TABLE,
                location.describe()
            );
        }
        schema::evolve(warehouse.catalog.as_ref(), &warehouse.ident).await?;
        Ok(warehouse)
    }

    /// Where the warehouse is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The table as it stands now.
    pub async fn table(&self) -> Result<Table> {
        Ok(self.catalog.load_table(&self.ident).await?)
    }

    /// Adds `files` (written for this table) in one commit on exactly `table`, as the caller loaded and checked it (see
    /// [`CheckedTableCatalog`]): true if it landed, false if another commit landed first (load, check, try again).
    pub async fn commit_on(&self, table: Table, files: Vec<DataFile>) -> Result<bool> {
        let tx = Transaction::new(&table);
        let tx = tx.fast_append().add_data_files(files).apply(tx)?;
        match tx.commit(&CheckedTableCatalog { catalog: self.catalog.as_ref(), table }).await {
            Ok(_) => Ok(true),
            Err(err) if err.kind() == ErrorKind::CatalogCommitConflicts => Ok(false),
            Err(err) => Err(err).context("committing the records"),
        }
    }
}

/// Whether `namespace` exists, asked by a load: REST servers need not answer the `HEAD` of `namespace_exists`
/// (lakana answers 405).
async fn namespace_exists(catalog: &dyn Catalog, namespace: &NamespaceIdent) -> Result<bool> {
    match catalog.get_namespace(namespace).await {
        Ok(_) => Ok(true),
        Err(err) if err.kind() == ErrorKind::NamespaceNotFound => Ok(false),
        Err(err) => Err(err.into()),
    }
}

/// Whether the table `ident` exists, asked by a load (see [`namespace_exists`]).
async fn table_exists(catalog: &dyn Catalog, ident: &TableIdent) -> Result<bool> {
    match catalog.load_table(ident).await {
        Ok(_) => Ok(true),
        Err(err) if err.kind() == ErrorKind::TableNotFound => Ok(false),
        Err(err) => Err(err.into()),
    }
}

#[cfg(test)]
mod tests {
    use iceberg::TableCreation;
    use iceberg::spec::PrimitiveType;

    use super::*;
    use crate::schema::tests::columns;

    #[test]
    fn a_table_of_another_schema_is_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let location = Location::Dir(dir.path().to_owned());
            let catalog = connect(&location).await.unwrap();
            let namespace = NamespaceIdent::from_vec(location.namespace()).unwrap();
            catalog.create_namespace(&namespace, HashMap::new()).await.unwrap();
            let other = columns(&[("ts", PrimitiveType::Long, true), ("bench", PrimitiveType::String, true)]);
            let creation = TableCreation::builder().name(TABLE.to_string()).schema(other).build();
            let table = catalog.create_table(&namespace, creation).await.unwrap();
            let error = Warehouse::open(&location).await.err().unwrap().to_string();
            assert!(error.contains("has another schema: column `ts` is long"), "{error}");
            let now = catalog.load_table(table.identifier()).await.unwrap();
            assert_eq!(now.metadata_location(), table.metadata_location(), "the table is as it was");
        });
    }
}
