//! The warehouse: an Iceberg table `benchhost.records` behind iceberg's SQL catalog, on a sqlite file in a
//! directory for one machine or on PostgreSQL with data on S3 for a fleet, or behind a REST catalog (see
//! [`Location`]). One row per record (its time, bench, kind, run id, variant, identity and the whole record as
//! JSON text), partitioned by `month(ts)` and `bench`, so a trend of one rig reads few files, and a publish of a
//! nightly stream writes few (day partitions made a file of ~10 records per day and rig: 1,024 files for 10k
//! records, which a publish over S3 then read back at ~40 ms each). Tables made with day partitions keep them.
//! The SQL catalog commits by compare-and-swap on the table's metadata location (one row, one
//! `UPDATE ... WHERE`); data files are written once under fresh names and never changed.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use iceberg::io::{LocalFsStorageFactory, StorageFactory};
use iceberg::spec::{DataFile, NestedField, PartitionSpec, PrimitiveType, Schema, Transform, Type};
use iceberg::table::Table;
use iceberg::transaction::{AddColumn, ApplyTransactionAction, Transaction};
use iceberg::{Catalog, CatalogBuilder, ErrorKind, NamespaceIdent, TableCreation, TableIdent};
use iceberg_catalog_rest::RestCatalogBuilder;
use iceberg_catalog_sql::{
    SQL_CATALOG_PROP_BIND_STYLE, SQL_CATALOG_PROP_URI, SQL_CATALOG_PROP_WAREHOUSE, SqlBindStyle, SqlCatalogBuilder,
};
use iceberg_storage_opendal::OpenDalStorageFactory;
use sqlx::Connection;
use url::Url;

use crate::location::{Location, S3};
use crate::pinned::Pinned;

const TABLE: &str = "records";
/// The column of a record's variant (canonical JSON), so the newest record of each series is found without
/// reading the records; absent from tables made before it, and null in their older rows.
pub const VARIANT: &str = "variant";
/// The column of a record's identity (as `merge` counts records, 32 hex digits): publish adds no record whose
/// identity the table holds. Absent from tables made before it, and null in their older rows.
pub const IDENTITY: &str = "identity";
/// Schema changes that lose the compare-and-swap are retried this many times.
const ATTEMPTS: u32 = 20;

/// An open warehouse.
pub struct Warehouse {
    catalog: Box<dyn Catalog>,
    ident: TableIdent,
    location: Location,
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
            NestedField::optional(7, IDENTITY, text()).into(),
        ])
        .build()
}

/// What is wrong with a table's schema for this benchhost, if anything: a column it does not write, or one of
/// another type or that a row may lack (columns it adds, optional ones, may be missing: `evolve` adds them).
fn schema_problem(table: &Schema) -> iceberg::Result<Option<String>> {
    let ours = schema()?;
    for field in table.as_struct().fields() {
        match ours.field_by_name(&field.name) {
            None => return Ok(Some(format!("a column `{}` this benchhost does not write", field.name))),
            Some(our) if our.field_type != field.field_type => {
                return Ok(Some(format!("column `{}` is {}, not {}", field.name, field.field_type, our.field_type)));
            }
            Some(our) if field.required && !our.required => {
                return Ok(Some(format!("column `{}` is required", field.name)));
            }
            Some(_) => {}
        }
    }
    let missing = ours.as_struct().fields().iter().find(|f| f.required && table.field_by_name(&f.name).is_none());
    Ok(missing.map(|f| format!("no column `{}`", f.name)))
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
            let schema = schema()?;
            let spec = PartitionSpec::builder(schema.clone())
                .add_partition_field("ts", "month", Transform::Month)?
                .add_partition_field("bench", "bench", Transform::Identity)?
                .build()?;
            let creation = TableCreation::builder().name(TABLE.to_string()).schema(schema).partition_spec(spec).build();
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
        warehouse.evolve().await?;
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

    /// Adds `files` (written for this table) in one commit on exactly `table`, as the caller loaded and checked
    /// it (see [`Pinned`]): true if it landed, false if another commit landed first (load, check, try again).
    pub async fn commit_on(&self, table: Table, files: Vec<DataFile>) -> Result<bool> {
        let tx = Transaction::new(&table);
        let tx = tx.fast_append().add_data_files(files).apply(tx)?;
        match tx.commit(&Pinned { catalog: self.catalog.as_ref(), table }).await {
            Ok(_) => Ok(true),
            Err(err) if err.kind() == ErrorKind::CatalogCommitConflicts => Ok(false),
            Err(err) => Err(err).context("committing the records"),
        }
    }

    /// Adds the columns a table made by an older benchhost lacks (its rows read them as null).
    async fn evolve(&self) -> Result<()> {
        for _ in 0..ATTEMPTS {
            let table = self.table().await?;
            let schema = table.metadata().current_schema();
            let missing: Vec<_> =
                [VARIANT, IDENTITY].into_iter().filter(|c| schema.field_by_name(c).is_none()).collect();
            if missing.is_empty() {
                return Ok(());
            }
            let tx = Transaction::new(&table);
            let mut update = tx.update_schema();
            for column in &missing {
                update = update.add_column(AddColumn::optional(*column, Type::Primitive(PrimitiveType::String)));
            }
            let tx = update.apply(tx)?;
            match tx.commit(self.catalog.as_ref()).await {
                Ok(_) => return Ok(()),
                Err(err) if err.kind() == ErrorKind::CatalogCommitConflicts => {}
                Err(err) => return Err(err).with_context(|| format!("adding the columns {}", missing.join(", "))),
            }
        }
        bail!("adding columns lost the race {ATTEMPTS} times in a row; try again")
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

/// The storage that reads and writes the data files of a catalog whose data is on `s3` (or on this machine).
fn storage(s3: Option<&S3>) -> Arc<dyn StorageFactory> {
    match s3 {
        Some(_) => Arc::new(OpenDalStorageFactory::S3 { customized_credential_load: None }),
        None => Arc::new(LocalFsStorageFactory),
    }
}

/// The catalog of `location`.
async fn connect(location: &Location) -> Result<Box<dyn Catalog>> {
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

/// Openers of one PostgreSQL catalog take turns under this advisory lock (a session's, released when its
/// connection closes, so a publisher killed while holding it frees it). Its key is the hash of a text: a test or
/// an operator takes the same lock with the same query.
const CATALOG_LOCK: &str = "SELECT pg_advisory_lock(hashtext('benchhost: creating the catalog'))";
/// Opening takes milliseconds; an opener that holds the lock this long is stuck, and the wait ends in an error.
const TURN: Duration = Duration::from_secs(120);

/// A SQL catalog. iceberg creates its two tables on every open with `CREATE TABLE IF NOT EXISTS`, which
/// PostgreSQL answers, when two race, with an error (both create the row type: "duplicate key" or "type ...
/// already exists"), so on PostgreSQL the open waits its turn behind [`CATALOG_LOCK`].
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

/// A connection to the PostgreSQL catalog at `uri` that holds [`CATALOG_LOCK`].
async fn catalog_turn(uri: &Url) -> Result<sqlx::PgConnection> {
    let mut connection = sqlx::PgConnection::connect(uri.as_str()).await?;
    let lock = sqlx::query(CATALOG_LOCK).execute(&mut connection);
    match tokio::time::timeout(TURN, lock).await {
        Ok(locked) => _ = locked.context("waiting for the catalog's lock")?,
        Err(_) => bail!("another opener has held the catalog's lock for {} s ({CATALOG_LOCK})", TURN.as_secs()),
    }
    Ok(connection)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(fields: &[(&str, PrimitiveType, bool)]) -> Schema {
        let fields = fields.iter().enumerate().map(|(i, (name, kind, required))| {
            let id = i as i32 + 1;
            let kind = Type::Primitive(kind.clone());
            if *required { NestedField::required(id, *name, kind) } else { NestedField::optional(id, *name, kind) }
                .into()
        });
        Schema::builder().with_fields(fields.collect::<Vec<_>>()).build().unwrap()
    }

    #[test]
    fn a_schema_is_ours_or_an_older_one_of_ours_or_named_as_another() {
        use PrimitiveType::{Long, String as Text, Timestamptz};
        assert_eq!(schema_problem(&schema().unwrap()).unwrap(), None);
        let old = [("ts", Timestamptz, true), ("bench", Text, true), ("kind", Text, true), ("run_id", Text, false)];
        let old_with_record = [&old[..], &[("record", Text, true)]].concat();
        assert_eq!(schema_problem(&columns(&old_with_record)).unwrap(), None, "evolve adds variant and identity");
        assert_eq!(schema_problem(&columns(&old)).unwrap().unwrap(), "no column `record`");
        let extra = [&old_with_record[..], &[("owner", Text, false)]].concat();
        assert!(schema_problem(&columns(&extra)).unwrap().unwrap().contains("a column `owner`"));
        let retyped = [("ts", Long, true), ("bench", Text, true), ("kind", Text, true), ("record", Text, true)];
        assert_eq!(schema_problem(&columns(&retyped)).unwrap().unwrap(), "column `ts` is long, not timestamptz");
    }

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
