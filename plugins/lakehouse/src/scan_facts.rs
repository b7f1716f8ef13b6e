//! What a query's scan did, beyond its time: files in the snapshot, files the Iceberg planner kept, whether
//! a sort stayed in the plan. Wall-clock alone cannot tell an elided sort or a pruned file from a quiet
//! machine (seed 000 prints this table before timing; so does this rig, into the cell log and the record).
//!
//! The Iceberg scan node has no `metrics()`, so its pruning is observed by planning the same scan again with
//! the predicate the node carries, on a freshly loaded table (its own, cold manifest cache, so the measured
//! query's cache is left as it was).

use std::sync::Arc;

use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::sorts::sort::SortExec;
use futures::TryStreamExt;
use iceberg::expr::Predicate;
use iceberg::table::Table;
use iceberg_datafusion::physical_plan::IcebergTableScan;

/// The plan's mechanism, for one query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanFacts {
    /// Data files in the scanned snapshot.
    pub files_total: u64,
    /// Files the planner kept after partition and column-statistics pruning.
    pub files_planned: u64,
    /// A `SortExec` is in the plan.
    pub sort_kept: bool,
    /// That sort is a TopK (it has a fetch).
    pub topk: bool,
    /// The predicate pushed into the Iceberg scan, as the plan shows it.
    pub pushed: Option<String>,
}

impl ScanFacts {
    /// Walks `plan` and re-plans its Iceberg scan on `fresh` (a table loaded anew from the catalog).
    pub async fn of(plan: &Arc<dyn ExecutionPlan>, fresh: &Table) -> iceberg::Result<ScanFacts> {
        let mut facts = ScanFacts::default();
        let mut predicate = None;
        walk(plan, &mut facts, &mut predicate);
        facts.pushed = predicate.as_ref().map(|p| p.to_string());
        facts.files_total = count_files(fresh, None).await?;
        // Without a pushed predicate the planner plans every file: the same scan again (60 manifests' worth,
        // ~50-80 ms of each querier arm's set-up on the sequential layout) would count the same.
        facts.files_planned = match predicate {
            Some(predicate) => count_files(fresh, Some(predicate)).await?,
            None => facts.files_total,
        };
        Ok(facts)
    }

    /// One line for the cell log and the record's note.
    pub fn line(&self) -> String {
        let sort = match (self.sort_kept, self.topk) {
            (false, _) => "elided",
            (true, true) => "kept (TopK)",
            (true, false) => "kept",
        };
        let pushed = self.pushed.as_deref().unwrap_or("none");
        format!(
            "files {} in the snapshot, {} pruned by the planner, {} planned; sort {sort}; pushed predicate: {pushed}",
            self.files_total,
            self.files_total - self.files_planned,
            self.files_planned
        )
    }
}

fn walk(plan: &Arc<dyn ExecutionPlan>, facts: &mut ScanFacts, predicate: &mut Option<Predicate>) {
    if let Some(sort) = plan.as_any().downcast_ref::<SortExec>() {
        facts.sort_kept = true;
        facts.topk |= sort.fetch().is_some();
    }
    if let Some(scan) = plan.as_any().downcast_ref::<IcebergTableScan>() {
        *predicate = scan.predicates().cloned();
    }
    for child in plan.children() {
        walk(child, facts, predicate);
    }
}

async fn count_files(table: &Table, predicate: Option<Predicate>) -> iceberg::Result<u64> {
    let mut builder = table.scan().select_empty();
    if let Some(predicate) = predicate {
        builder = builder.with_filter(predicate);
    }
    let tasks: Vec<_> = builder.build()?.plan_files().await?.try_collect().await?;
    Ok(tasks.len() as u64)
}
