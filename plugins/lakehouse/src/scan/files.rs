//! The files a query scans, planned from the Iceberg snapshot the way seed 000's querier plans them: on every
//! query, with no manifest cache. Two ways:
//! - [`plan`], a query with no filter iceberg can use: the manifest list and every manifest are read, and each
//!   live data file becomes a DataFusion `PartitionedFile` with the statistics its manifest entry holds (row
//!   count, and per column the lower and upper bounds and null count), so DataFusion can prune it, order it and
//!   stop early.
//! - [`plan_matching`], a query with one: iceberg's own `TableScan` plans it, skipping the manifests whose
//!   partition summaries cannot match and the entries whose partition values or column bounds cannot. Its
//!   tasks name each file's path, size and row count, but neither its bounds nor its sort order, so such a scan
//!   declares no order, and DataFusion prunes the files it is given on their footers.

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, ScalarValue, Statistics};
use datafusion::datasource::listing::PartitionedFile;
use futures::TryStreamExt;
use iceberg::expr::Predicate;
use iceberg::spec::{DataContentType, DataFile, Datum, ManifestContentType, PrimitiveLiteral, PrimitiveType};
use iceberg::table::Table;

use crate::scan::store::IcebergStore;

/// One data file of the snapshot, as planned.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The file, with its size and statistics, for DataFusion.
    pub file: PartitionedFile,
    /// The sort order its writer declared (Iceberg's `sort_order_id`), if any.
    pub sort_order_id: Option<i32>,
}

/// Every live data file of `table`'s current snapshot, in manifest order (the order they were appended), with
/// statistics over `schema` (the table's Arrow schema, whose fields carry their Iceberg field ids). The manifests
/// are read and decoded at once, each a task of the runtime, as iceberg's own planner reads them: one after the
/// other, the 60-file table's planning took 27 ms of a 28 ms oldest-first query.
pub async fn plan(table: &Table, schema: &SchemaRef) -> iceberg::Result<Vec<Planned>> {
    let Some(snapshot) = table.metadata().current_snapshot() else { return Ok(Vec::new()) };
    let list = table.manifest_list_reader(snapshot).load().await?;
    let loads: Vec<_> = list
        .entries()
        .iter()
        .filter(|m| m.content == ManifestContentType::Data)
        .map(|manifest| {
            let (manifest, file_io) = (manifest.clone(), table.file_io().clone());
            tokio::spawn(async move { manifest.load_manifest(&file_io).await })
        })
        .collect();
    let mut planned = Vec::new();
    for load in loads {
        let manifest = load
            .await
            .map_err(|e| iceberg::Error::new(iceberg::ErrorKind::Unexpected, format!("reading a manifest: {e}")))??;
        for entry in manifest.entries() {
            if !entry.is_alive() || entry.content_type() != DataContentType::Data {
                continue;
            }
            let data = entry.data_file();
            let file = PartitionedFile::new(IcebergStore::path_of(data.file_path()), data.file_size_in_bytes())
                .with_statistics(Arc::new(statistics(data, schema)));
            planned.push(Planned { file, sort_order_id: data.sort_order_id() });
        }
    }
    Ok(planned)
}

/// What `table`'s current snapshot holds: the denominators of what planning skips.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Census {
    /// Data manifests in its manifest list.
    pub manifests: u64,
    /// Live data files.
    pub files: u64,
}

/// Counts the snapshot's data manifests and live data files (reading every manifest).
pub async fn census(table: &Table, schema: &SchemaRef) -> iceberg::Result<Census> {
    let Some(snapshot) = table.metadata().current_snapshot() else { return Ok(Census::default()) };
    let list = table.manifest_list_reader(snapshot).load().await?;
    let manifests = list.entries().iter().filter(|m| m.content == ManifestContentType::Data).count() as u64;
    Ok(Census { manifests, files: plan(table, schema).await?.len() as u64 })
}

/// The live data files of `table`'s current snapshot that may hold rows matching `predicate`, as iceberg's
/// `TableScan` plans them (its manifest, partition and metrics evaluators), in the order it yields them, with
/// their row counts and unknown column statistics over `schema`.
/// The scan runs on a view of `table` without iceberg's manifest cache, so each query reads the manifests it
/// does not skip again, as [`plan`] does.
pub async fn plan_matching(table: &Table, schema: &SchemaRef, predicate: Predicate) -> iceberg::Result<Vec<Planned>> {
    let mut uncached = Table::builder()
        .file_io(table.file_io().clone())
        .metadata(table.metadata_ref())
        .identifier(table.identifier().clone())
        .runtime(iceberg::Runtime::try_current()?)
        .readonly(true)
        .disable_cache();
    if let Some(location) = table.metadata_location() {
        uncached = uncached.metadata_location(location);
    }
    let uncached = uncached.build()?;
    let tasks: Vec<_> = uncached.scan().with_filter(predicate).build()?.plan_files().await?.try_collect().await?;
    Ok(tasks
        .into_iter()
        .map(|task| {
            let statistics = Statistics {
                num_rows: task.record_count.map_or(Precision::Absent, |n| Precision::Exact(n as usize)),
                total_byte_size: Precision::Inexact(task.file_size_in_bytes as usize),
                column_statistics: Statistics::unknown_column(schema),
            };
            let file = PartitionedFile::new(IcebergStore::path_of(&task.data_file_path), task.file_size_in_bytes)
                .with_statistics(Arc::new(statistics));
            Planned { file, sort_order_id: None }
        })
        .collect())
}

/// A file's statistics from its manifest entry, one column entry per field of `schema`, in order. Iceberg's
/// bounds are true bounds (a truncated string bound still bounds), so they are exact for pruning.
fn statistics(data: &DataFile, schema: &SchemaRef) -> Statistics {
    let columns = schema
        .fields()
        .iter()
        .map(|field| {
            let id = field.metadata().get(parquet::arrow::PARQUET_FIELD_ID_META_KEY).and_then(|id| id.parse().ok());
            let bound = |bounds: &std::collections::HashMap<i32, Datum>| {
                id.and_then(|id| bounds.get(&id)).and_then(scalar).map_or(Precision::Absent, Precision::Exact)
            };
            let nulls = id.and_then(|id| data.null_value_counts().get(&id));
            ColumnStatistics::new_unknown()
                .with_min_value(bound(data.lower_bounds()))
                .with_max_value(bound(data.upper_bounds()))
                .with_null_count(nulls.map_or(Precision::Absent, |n| Precision::Exact(*n as usize)))
        })
        .collect();
    Statistics {
        num_rows: Precision::Exact(data.record_count() as usize),
        total_byte_size: Precision::Inexact(data.file_size_in_bytes() as usize),
        column_statistics: columns,
    }
}

/// An Iceberg bound as the scalar of its Arrow column (the types `iceberg::arrow::schema_to_arrow_schema` maps to).
fn scalar(datum: &Datum) -> Option<ScalarValue> {
    use PrimitiveLiteral as L;
    use PrimitiveType as T;
    Some(match (datum.data_type(), datum.literal()) {
        (T::String, L::String(s)) => ScalarValue::Utf8(Some(s.clone())),
        (T::Timestamp, L::Long(v)) => ScalarValue::TimestampMicrosecond(Some(*v), None),
        (T::Timestamptz, L::Long(v)) => ScalarValue::TimestampMicrosecond(Some(*v), Some("+00:00".into())),
        (T::Long, L::Long(v)) => ScalarValue::Int64(Some(*v)),
        (T::Int, L::Int(v)) => ScalarValue::Int32(Some(*v)),
        (T::Date, L::Int(v)) => ScalarValue::Date32(Some(*v)),
        _ => return None,
    })
}
