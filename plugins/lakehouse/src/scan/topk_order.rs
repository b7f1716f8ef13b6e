//! A top-k reads first the files that hold its first rows: a physical optimizer rule of the querier's session
//! that orders each file group of a scan under a TopK by the files' statistics on the sort's first key, newest
//! first for `DESC` (largest upper bound first), oldest first for `ASC` (smallest lower bound first). The heap
//! then fills from the first file of each group, and the TopK's dynamic filter prunes the others on their
//! statistics before they are opened, whether or not the files attest an order.
//!
//! Why it is needed: DataFusion 53 reorders a scan for a sort only when the sort is the exact reverse of the
//! scan's declared order (`PushdownSort`, which reverses files and row groups), and `ORDER BY timestamp DESC`
//! means `NULLS FIRST`, which is not the reverse of the declared `timestamp ASC NULLS FIRST`. So each group was
//! read oldest first and the threshold came too late to prune. Seed 000 ran DataFusion 54, whose scan "reads
//! files newest-first" in every arm; this rule is that step, in the querier's own session, on DataFusion 53.

use std::cmp::Ordering;
use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{Result, ScalarValue};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfig};
use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::sorts::sort::SortExec;

/// The rule. See the module's documentation.
#[derive(Debug, Default)]
pub struct TopKFileOrder;

/// The name of DataFusion's rule this one runs after: by then a sort that a reversed scan can serve has been
/// pushed into it, and the TopK's dynamic filter is not yet pushed into the scan (that comes later, so the
/// filter the scan holds is the one the rebuilt TopK updates).
pub const RUNS_AFTER: &str = "PushdownSort";

impl PhysicalOptimizerRule for TopKFileOrder {
    fn optimize(&self, plan: Arc<dyn ExecutionPlan>, _config: &ConfigOptions) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_down(|node| {
            let Some(sort) = node.as_any().downcast_ref::<SortExec>() else { return Ok(Transformed::no(node)) };
            let first = sort.expr().first();
            let key = first.expr.as_any().downcast_ref::<Column>().map(|c| (c.name(), first.options));
            let (Some(_), Some((name, options))) = (sort.fetch(), key) else { return Ok(Transformed::no(node)) };
            match reordered(sort.input(), name, options.descending)? {
                Some(scan) => Ok(Transformed::yes(node.clone().with_new_children(vec![scan])?)),
                None => Ok(Transformed::no(node)),
            }
        })
        .data()
    }

    fn name(&self) -> &str {
        "TopKFileOrder"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// `plan`, if it is a file scan with statistics on column `name`, with each group's files in the order a
/// top-k on that column wants them; `None` when there is nothing to reorder. A declared output order is dropped
/// when the files move (the TopK above keeps its sort, so nothing relied on it).
fn reordered(plan: &Arc<dyn ExecutionPlan>, name: &str, descending: bool) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    let Some(exec) = plan.as_any().downcast_ref::<DataSourceExec>() else { return Ok(None) };
    let Some(config) = exec.data_source().as_any().downcast_ref::<FileScanConfig>() else { return Ok(None) };
    let Ok(index) = config.file_schema().index_of(name) else { return Ok(None) };
    let groups: Vec<FileGroup> = config
        .file_groups
        .iter()
        .map(|group| {
            let mut files = group.files().to_vec();
            files
                .sort_by(|a, b| first_rows_first(bound(a, index, descending), bound(b, index, descending), descending));
            FileGroup::new(files)
        })
        .collect();
    let same = groups
        .iter()
        .zip(&config.file_groups)
        .all(|(new, old)| new.files().iter().map(|f| f.path()).eq(old.files().iter().map(|f| f.path())));
    if same {
        return Ok(None);
    }
    let mut config = config.clone();
    config.file_groups = groups;
    config.output_ordering.clear();
    Ok(Some(DataSourceExec::from_data_source(config)))
}

/// The bound of a file's column `index` a top-k compares: its upper bound for `DESC`, its lower bound for `ASC`.
fn bound(file: &PartitionedFile, index: usize, descending: bool) -> Option<&ScalarValue> {
    let column = file.statistics.as_ref()?.column_statistics.get(index)?;
    let value = if descending { &column.max_value } else { &column.min_value };
    value.get_value()
}

/// Files whose bound comes first in the sort first; files without statistics last, in their planned order.
fn first_rows_first(a: Option<&ScalarValue>, b: Option<&ScalarValue>, descending: bool) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => {
            let order = a.partial_cmp(b).unwrap_or(Ordering::Equal);
            if descending { order.reverse() } else { order }
        }
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}
