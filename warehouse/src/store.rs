//! The warehouse: an Iceberg table `benchhost.records` behind iceberg's SQL catalog on a sqlite file, over a
//! local directory: `DIR/catalog.sqlite` and `DIR/data/`. One row per record (its time, bench, kind, run id,
//! variant and the whole record as JSON text), partitioned by `day(ts)` and `bench`, so a trend of one rig
//! reads few files. Publishers append with `fast_append`; the SQL catalog commits by compare-and-swap on the metadata
//! location, and a publisher that lost the race reloads the table and tries again, so concurrent publishers
//! lose nothing.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use iceberg::io::LocalFsStorageFactory;
use iceberg::spec::{DataFile, NestedField, PartitionSpec, PrimitiveType, Schema, Transform, Type};
use iceberg::table::Table;
use iceberg::transaction::{AddColumn, ApplyTransactionAction, Transaction};
use iceberg::{Catalog, CatalogBuilder, ErrorKind, NamespaceIdent, TableCreation, TableIdent};
use iceberg_catalog_sql::{
    SQL_CATALOG_PROP_BIND_STYLE, SQL_CATALOG_PROP_URI, SQL_CATALOG_PROP_WAREHOUSE, SqlBindStyle, SqlCatalog,
    SqlCatalogBuilder,
};

const NAMESPACE: &str = "benchhost";
const TABLE: &str = "records";
/// The column of a record's variant (canonical JSON), so the newest record of each series is found without
/// reading the records; absent from tables made before it, and null in their older rows.
pub const VARIANT: &str = "variant";
/// Commits that lose the compare-and-swap are retried this many times (on top of iceberg's own retries).
const ATTEMPTS: u32 = 20;

/// An open warehouse.
pub struct Warehouse {
    catalog: SqlCatalog,
    ident: TableIdent,
}

fn schema() -> iceberg::Result<Schema> {
    let text = || Type::Primitive(PrimitiveType::String);
    Schema::builder()
        .with_fields(vec![
            NestedField::required(1, "ts", Type::Primitive(PrimitiveType::Timestamptz)).into(),
            NestedField::required(2, "bench", text()).into(),
            NestedField::required(3, "kind", text()).into(),
            NestedField::optional(4, "run_id", text()).into(),
            NestedField::required(5, "record", text()).into(),
            NestedField::optional(6, VARIANT, text()).into(),
        ])
        .build()
}

impl Warehouse {
    /// Opens the warehouse in `dir`, creating the directory, the catalog and the table on first use.
    pub async fn open(dir: &Path) -> Result<Warehouse> {
        std::fs::create_dir_all(dir.join("data")).with_context(|| format!("creating {}", dir.display()))?;
        let dir = dir.canonicalize()?;
        let props = HashMap::from([
            (SQL_CATALOG_PROP_URI.to_string(), format!("sqlite:{}?mode=rwc", dir.join("catalog.sqlite").display())),
            (SQL_CATALOG_PROP_WAREHOUSE.to_string(), dir.join("data").display().to_string()),
            (SQL_CATALOG_PROP_BIND_STYLE.to_string(), SqlBindStyle::QMark.to_string()),
        ]);
        let catalog = SqlCatalogBuilder::default()
            .with_storage_factory(Arc::new(LocalFsStorageFactory))
            .load("benchhost", props)
            .await
            .with_context(|| format!("opening the catalog in {}", dir.display()))?;
        let namespace = NamespaceIdent::new(NAMESPACE.to_string());
        let ident = TableIdent::new(namespace.clone(), TABLE.to_string());
        // Several publishers may open a new warehouse at once: creating what exists already is fine.
        if !catalog.namespace_exists(&namespace).await? {
            let _ = catalog.create_namespace(&namespace, HashMap::new()).await;
        }
        if !catalog.table_exists(&ident).await? {
            let schema = schema()?;
            let spec = PartitionSpec::builder(schema.clone())
                .add_partition_field("ts", "day", Transform::Day)?
                .add_partition_field("bench", "bench", Transform::Identity)?
                .build()?;
            let creation = TableCreation::builder().name(TABLE.to_string()).schema(schema).partition_spec(spec).build();
            if let Err(err) = catalog.create_table(&namespace, creation).await
                && !catalog.table_exists(&ident).await?
            {
                return Err(err).context("creating the records table");
            }
        }
        let warehouse = Warehouse { catalog, ident };
        warehouse.evolve().await?;
        Ok(warehouse)
    }

    /// The table as it stands now.
    pub async fn table(&self) -> Result<Table> {
        Ok(self.catalog.load_table(&self.ident).await?)
    }

    /// Adds `files` (written for this table, see `publish`) in one commit, retried against the newest table
    /// when another publisher committed first: the files are re-applied, never written again. Returns how
    /// many attempts the commit took.
    pub async fn commit(&self, files: Vec<DataFile>) -> Result<u32> {
        for attempt in 1..=ATTEMPTS {
            let table = self.table().await?;
            let tx = Transaction::new(&table);
            let tx = tx.fast_append().add_data_files(files.clone()).apply(tx)?;
            match tx.commit(&self.catalog).await {
                Ok(_) => return Ok(attempt),
                Err(err) if err.kind() == ErrorKind::CatalogCommitConflicts => {
                    tokio::time::sleep(Duration::from_millis(5 * u64::from(attempt))).await;
                }
                Err(err) => return Err(err).context("committing the records"),
            }
        }
        bail!("the commit lost the race {ATTEMPTS} times in a row; try again")
    }

    /// Adds the columns a table made by an older benchhost lacks (its rows read them as null).
    async fn evolve(&self) -> Result<()> {
        for _ in 0..ATTEMPTS {
            let table = self.table().await?;
            if table.metadata().current_schema().field_by_name(VARIANT).is_some() {
                return Ok(());
            }
            let tx = Transaction::new(&table);
            let column = AddColumn::optional(VARIANT, Type::Primitive(PrimitiveType::String));
            let tx = tx.update_schema().add_column(column).apply(tx)?;
            match tx.commit(&self.catalog).await {
                Ok(_) => return Ok(()),
                Err(err) if err.kind() == ErrorKind::CatalogCommitConflicts => {}
                Err(err) => return Err(err).context("adding the variant column"),
            }
        }
        bail!("adding the variant column lost the race {ATTEMPTS} times in a row; try again")
    }
}
