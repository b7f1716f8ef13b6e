//! One tenant of the `writer` rig: a catalog of its own with seed 000's empty `metrics_gauge` table, appended to
//! as the seed's writer appends (the batches to the table's form, sorted by the declared key, one file per hour
//! partition, committed and confirmed), and read back to check what it holds.

use std::path::PathBuf;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use benchhost_plugin_api::RigError;
use futures::TryStreamExt;
use iceberg::spec::{Literal, PartitionSpec, Transform};
use iceberg::table::Table;
use iceberg::transaction::{ApplyTransactionAction, Transaction};
use iceberg::{Catalog, TableCreation};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::table::gauge::{self, Tally};
use crate::table::warehouse::{self, Storage, Warehouse};

/// One tenant's table, waiting for its append or its check.
pub struct Tenant {
    pub warehouse: Warehouse,
    pub table: Table,
    pub dir: Option<PathBuf>,
}

impl Tenant {
    /// A fresh catalog (its own storage) with an empty `metrics_gauge` table: untimed for appends, the timed
    /// work of `op = create`.
    pub async fn create(storage: Storage, dir: Option<PathBuf>) -> Result<Tenant, RigError> {
        let path = dir.clone().unwrap_or_default();
        Tenant::create_in(Warehouse::new(storage, &path).await?, dir).await
    }

    /// The same table in a warehouse made by the caller (a seeding one, whose files are kept).
    pub async fn create_in(warehouse: Warehouse, dir: Option<PathBuf>) -> Result<Tenant, RigError> {
        let schema = gauge::schema()?;
        let spec = PartitionSpec::builder(schema.clone())
            .add_partition_field("timestamp", "timestamp_hour", Transform::Hour)?
            .build()?;
        let creation = TableCreation::builder()
            .name("metrics_gauge".to_string())
            .schema(schema.clone())
            .partition_spec(spec)
            .sort_order(warehouse::ascending(&schema, &gauge::SORT_KEY)?)
            .build();
        let table = warehouse.catalog.create_table(&warehouse.namespace, creation).await?;
        Ok(Tenant { warehouse, table, dir })
    }

    /// The timed append of one tenant: the commit group in the table's form, sorted, written per hour partition,
    /// committed, and the table loaded again to confirm its snapshot. Returns the files and bytes written.
    pub async fn append(&self, input: &[RecordBatch], prefix: String) -> Result<(u64, u64), RigError> {
        let schema: SchemaRef = warehouse::arrow_schema(&self.table)?;
        let batches = input.iter().map(|b| gauge::to_table(b, &schema)).collect::<Result<Vec<_>, _>>()?;
        let group = arrow::compute::concat_batches(&schema, &batches)?;
        let sorted = gauge::sorted(&group)?;
        let properties = WriterProperties::builder().set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?)).build();
        let mut files = Vec::new();
        for (hour, run) in hour_runs(&sorted)? {
            let name = format!("{prefix}-h{hour}");
            files.extend(
                warehouse::write_partition(&self.table, run, Some(Literal::int(hour)), properties.clone(), &name)
                    .await?,
            );
        }
        let (count, bytes) = (files.len() as u64, files.iter().map(|f| f.file_size_in_bytes()).sum());
        let tx = Transaction::new(&self.table);
        let tx = tx.fast_append().add_data_files(files).apply(tx)?;
        let name = self.table.identifier();
        let parent = self.table.metadata().current_snapshot_id();
        let committed = tx.commit(self.warehouse.catalog.as_ref()).await.map_err(|e| {
            RigError::new(format!("tenant {name}: committing {count} data files onto snapshot {parent:?}: {e}"))
        })?;
        let landed = self.warehouse.catalog.load_table(self.table.identifier()).await?;
        let (ours, theirs) = (committed.metadata().current_snapshot_id(), landed.metadata().current_snapshot_id());
        if ours.is_none() || ours != theirs {
            return Err(RigError::new(format!(
                "tenant {}: the commit of snapshot {ours:?} did not land (the catalog holds {theirs:?})",
                self.table.identifier()
            )));
        }
        Ok((count, bytes))
    }

    /// A tenant's table read back: its rows' tally, its snapshots, and its data files whose rows are out of key order.
    pub async fn read_back(&self) -> Result<ReadBack, RigError> {
        let table = self.warehouse.catalog.load_table(self.table.identifier()).await?;
        let snapshots = table.metadata().snapshots().count() as u64;
        let batches: Vec<RecordBatch> = table.scan().select_all().build()?.to_arrow().await?.try_collect().await?;
        let in_key_order = batches.iter().filter(|b| gauge::out_of_order(b).is_none()).count() as u64;
        Ok(ReadBack { tally: gauge::tally(&batches), snapshots, batches: batches.len() as u64, in_key_order })
    }

    /// Whether the table loads back from its catalog as it was created (`op = create`'s check): its schema,
    /// partition spec, declared sort order and properties; the schema the seed's, the order declared.
    pub async fn loads_back(&self) -> Result<bool, RigError> {
        let loaded = self.warehouse.catalog.load_table(self.table.identifier()).await?;
        let (made, back) = (self.table.metadata(), loaded.metadata());
        Ok(back.current_schema() == made.current_schema()
            && back.default_partition_spec() == made.default_partition_spec()
            && back.default_sort_order() == made.default_sort_order()
            && back.properties() == made.properties()
            && back.current_schema().as_struct() == gauge::schema()?.as_struct()
            && back.default_sort_order().fields.len() == gauge::SORT_KEY.len())
    }
}

/// What a tenant's table held when it was read back.
pub struct ReadBack {
    /// Its rows, counted and summed.
    pub tally: Tally,
    /// Snapshots in its metadata.
    pub snapshots: u64,
    /// The batches the scan returned, and those whose rows are in key order.
    pub batches: u64,
    pub in_key_order: u64,
}

/// The rows of a sorted batch per hour of their timestamp (Iceberg's `hour` transform: hours since the epoch),
/// each a contiguous run.
fn hour_runs(sorted: &RecordBatch) -> Result<Vec<(i32, RecordBatch)>, RigError> {
    use arrow::array::AsArray;
    let ts = sorted
        .column_by_name("timestamp")
        .and_then(|c| c.as_primitive_opt::<arrow::datatypes::TimestampMicrosecondType>().cloned())
        .ok_or_else(|| RigError::new("the table's timestamp is not in microseconds"))?;
    let hour = |i: usize| ts.value(i).div_euclid(3_600_000_000) as i32;
    let mut runs = Vec::new();
    let mut start = 0;
    for i in 1..=sorted.num_rows() {
        if i == sorted.num_rows() || hour(i) != hour(start) {
            runs.push((hour(start), sorted.slice(start, i - start)));
            start = i;
        }
    }
    Ok(runs)
}
