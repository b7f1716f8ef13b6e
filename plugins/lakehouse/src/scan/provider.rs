//! An Iceberg table as DataFusion scans it with its own Parquet source: on every query the files are planned
//! from the snapshot's manifests ([`crate::scan::files`]; by iceberg's own scan planning when the query's
//! filters convert to an Iceberg predicate, so a time window skips whole manifests), and scanned by
//! `ParquetSource` with the manifests' statistics. When every planned file attests the table's sort order
//! (written sorted, with that order's id), the scan declares it as its output ordering, so a query in that
//! order needs no sort, and a limit stops the scan early. Whether the sort was elided, and which files the scan
//! reached, pruned and read, is read from the executed plan ([`crate::scan::facts`]).

use std::any::Any;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use arrow::compute::SortOptions;
use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::config::TableParquetOptions;
use datafusion::common::{DFSchema, Result};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::CachedParquetFileReaderFactory;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfig, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{LexOrdering, PhysicalSortExpr};
use datafusion::physical_plan::ExecutionPlan;
use iceberg::spec::{NullOrder, SortDirection};
use iceberg::table::Table;
use iceberg_datafusion::physical_plan::convert_filters_to_predicate;

use crate::scan::{files, store};

/// Footer bytes fetched with a file's first read: the querier's footers are a few KiB.
const METADATA_SIZE_HINT: usize = 64 << 10;

/// The table, scanned by DataFusion's Parquet source.
#[derive(Debug)]
pub struct IcebergParquetTable {
    table: Table,
    schema: SchemaRef,
    /// The table's declared sort order as DataFusion sort keys, and its Iceberg id; `None` without one.
    order: Option<(Vec<(String, SortOptions)>, i32)>,
    /// Only these files (by object path), when a point index has chosen them.
    only: Option<HashSet<String>>,
    /// What the newest scan planned.
    planned: Mutex<Planned>,
}

/// What a scan planned: the data files it was given, and whether they all attested the declared order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Planned {
    /// Files the scan was given: those planning kept (and of them, those a point index chose).
    pub files_planned: u64,
    /// Every given file attests the declared order, and the scan declared it.
    pub ordered: bool,
}

impl IcebergParquetTable {
    /// `table` as it is loaded now (its manifests are read again by every scan).
    pub fn new(table: Table) -> iceberg::Result<IcebergParquetTable> {
        let schema = crate::table::warehouse::arrow_schema(&table)?;
        let metadata = table.metadata();
        let sort = metadata.default_sort_order();
        let current = metadata.current_schema();
        let keys: Option<Vec<(String, SortOptions)>> = sort
            .fields
            .iter()
            .map(|field| {
                let name = current.field_by_id(field.source_id)?.name.clone();
                let options = SortOptions {
                    descending: field.direction == SortDirection::Descending,
                    nulls_first: field.null_order == NullOrder::First,
                };
                Some((name, options))
            })
            .collect();
        let order = keys.filter(|k| !k.is_empty()).map(|k| (k, sort.order_id as i32));
        Ok(IcebergParquetTable { table, schema, order, only: None, planned: Mutex::new(Planned::default()) })
    }

    /// The same table, scanning only the files at these object paths.
    pub fn only(mut self, paths: HashSet<String>) -> IcebergParquetTable {
        self.only = Some(paths);
        self
    }

    /// What the newest scan planned.
    pub fn planned(&self) -> Planned {
        self.planned.lock().map(|p| *p).unwrap_or_default()
    }

    fn ordering(&self, keys: &[(String, SortOptions)]) -> Result<Option<LexOrdering>> {
        let exprs = keys
            .iter()
            .map(|(name, options)| {
                let index = self.schema.index_of(name)?;
                Ok(PhysicalSortExpr::new(Arc::new(Column::new(name, index)), *options))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(LexOrdering::new(exprs))
    }
}

#[async_trait]
impl TableProvider for IcebergParquetTable {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    /// Inexact: DataFusion keeps the filter above the scan and also pushes it into the Parquet source, which
    /// prunes files and row groups with it.
    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let options = state.config_options();
        let pruning = options.execution.parquet.pruning;
        // Without pruning nothing is skipped, at planning either.
        let predicate = if pruning { convert_filters_to_predicate(filters) } else { None };
        let mut planned = match predicate {
            Some(predicate) => files::plan_matching(&self.table, &self.schema, predicate).await,
            None => files::plan(&self.table, &self.schema).await,
        }
        .map_err(iceberg_error)?;
        if let Some(only) = &self.only {
            planned.retain(|p| only.contains(p.file.path().as_ref()));
        }
        let attested = match &self.order {
            Some((_, id)) => !planned.is_empty() && planned.iter().all(|p| p.sort_order_id == Some(*id)),
            None => false,
        };
        let mut given: Vec<PartitionedFile> = planned.into_iter().map(|p| p.file).collect();
        if !pruning {
            // Without statistics nothing can be skipped, nor ordered: every file is opened and read whole.
            given.iter_mut().for_each(|f| f.statistics = None);
        }
        let partitions = options.execution.target_partitions.max(1);
        let ordering = match (&self.order, attested && pruning) {
            (Some((keys, _)), true) => self.ordering(keys)?,
            _ => None,
        };
        let groups = match &ordering {
            Some(lex) if options.execution.split_file_groups_by_statistics => {
                let all = [FileGroup::new(given.clone())];
                FileScanConfig::split_groups_by_statistics_with_target_partitions(&self.schema, &all, lex, partitions)
                    .unwrap_or_else(|_| contiguous(&given, partitions))
            }
            _ => contiguous(&given, partitions),
        };
        if let Ok(mut p) = self.planned.lock() {
            *p = Planned { files_planned: given.len() as u64, ordered: ordering.is_some() };
        }
        let parquet = TableParquetOptions { global: options.execution.parquet.clone(), ..Default::default() };
        let mut source = ParquetSource::new(self.schema.clone())
            .with_table_parquet_options(parquet)
            .with_metadata_size_hint(METADATA_SIZE_HINT);
        if state.runtime_env().cache_manager.get_metadata_cache_limit() > 0 {
            let object_store = state.runtime_env().object_store(store::url())?;
            let cache = state.runtime_env().cache_manager.get_file_metadata_cache();
            source = source
                .with_parquet_file_reader_factory(Arc::new(CachedParquetFileReaderFactory::new(object_store, cache)));
        }
        if let Some(filter) = conjunction(filters.iter().cloned()) {
            let schema = DFSchema::try_from(self.schema.clone())?;
            source = source.with_predicate(state.create_physical_expr(filter, &schema)?);
        }
        let config = FileScanConfigBuilder::new(store::url(), Arc::new(source))
            .with_file_groups(groups)
            .with_projection_indices(projection.cloned())?
            .with_limit(limit)
            .with_output_ordering(ordering.into_iter().collect())
            .build();
        Ok(DataSourceExec::from_data_source(config))
    }
}

/// `files` in `partitions` contiguous runs, in their planned (append) order.
fn contiguous(files: &[PartitionedFile], partitions: usize) -> Vec<FileGroup> {
    if files.is_empty() {
        return Vec::new();
    }
    files.chunks(files.len().div_ceil(partitions)).map(|run| FileGroup::new(run.to_vec())).collect()
}

fn iceberg_error(e: iceberg::Error) -> datafusion::error::DataFusionError {
    datafusion::error::DataFusionError::External(Box::new(e))
}
