//! What a query's scan did, read from the metrics of the plan that ran: wall-clock alone cannot tell an elided
//! sort or a pruned file from a quiet machine (seed 000 prints these before timing; so does this rig, into the
//! cell log and the record), and a second plan would count what it planned, not what the first one did.
//!
//! The seed's columns: files **reached** (the scan got as far as preparing to open them), **pruned** (reached,
//! then skipped whole on their statistics, a TopK's dynamic filter included), **read** (the rest), the
//! **bytes** the scan fetched of them (DataFusion's `bytes_scanned`: column chunks, page indexes and bloom
//! filters, not footers), and whether a **sort** stayed in the plan.

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::metrics::MetricValue;
use datafusion::physical_plan::sorts::sort::SortExec;

/// One query's scan, from its executed plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Facts {
    /// Files the scan began to open.
    pub files_reached: u64,
    /// Of those, files skipped whole on their statistics (before or while reading them).
    pub files_pruned: u64,
    /// Bytes of column chunks, page indexes and bloom filters fetched.
    pub bytes_scanned: u64,
    /// A `SortExec` is in the plan.
    pub sort_kept: bool,
    /// That sort is a TopK (it has a fetch).
    pub topk: bool,
}

/// The scans of the plans a rig ran in its timed region, summed outside it: reading a plan's metrics is work the
/// timer must not see, so each plan is kept ([`Scans::push`]) and folded in between batches ([`Scans::fold`]).
#[derive(Debug, Default)]
pub struct Scans {
    pending: Vec<Arc<dyn ExecutionPlan>>,
    pub files_reached: u64,
    pub files_pruned: u64,
    pub bytes_scanned: u64,
    /// Plans that kept a sort.
    pub sorts_kept: u64,
}

impl Scans {
    /// Keeps a plan that has run, to be folded in later.
    pub fn push(&mut self, plan: Arc<dyn ExecutionPlan>) {
        self.pending.push(plan);
    }

    /// Adds the facts of every plan kept since the last fold.
    pub fn fold(&mut self) {
        for plan in std::mem::take(&mut self.pending) {
            let f = Facts::of(&plan);
            self.files_reached += f.files_reached;
            self.files_pruned += f.files_pruned;
            self.bytes_scanned += f.bytes_scanned;
            self.sorts_kept += u64::from(f.sort_kept);
        }
    }
}

impl Facts {
    /// The facts of `plan`, which has run to its end.
    pub fn of(plan: &Arc<dyn ExecutionPlan>) -> Facts {
        let mut facts = Facts::default();
        let mut reached = HashSet::new();
        walk(plan, &mut facts, &mut reached);
        facts.files_reached = reached.len() as u64;
        facts
    }

    /// Files read: reached and not pruned.
    pub fn files_read(&self) -> u64 {
        self.files_reached.saturating_sub(self.files_pruned)
    }

    /// One line for the cell log and the record's note; of a query that asked for an order (`ordered`), whether
    /// its sort stayed (a query that asked for none has no sort to elide, and says nothing of one).
    pub fn line(&self, ordered: bool) -> String {
        let sort = match (ordered, self.sort_kept, self.topk) {
            (false, _, _) => "",
            (true, false, _) => "; sort elided",
            (true, true, true) => "; sort kept (TopK)",
            (true, true, false) => "; sort kept",
        };
        format!(
            "files reached {}, pruned {}, read {}; {} bytes scanned{sort}",
            self.files_reached,
            self.files_pruned,
            self.files_read(),
            self.bytes_scanned
        )
    }
}

fn walk(plan: &Arc<dyn ExecutionPlan>, facts: &mut Facts, reached: &mut HashSet<String>) {
    if let Some(sort) = plan.as_any().downcast_ref::<SortExec>() {
        facts.sort_kept = true;
        facts.topk |= sort.fetch().is_some();
    }
    if plan.as_any().is::<DataSourceExec>()
        && let Some(metrics) = plan.metrics()
    {
        for metric in metrics.iter() {
            match metric.value() {
                // Every file the opener is called for gets its per-file metrics, `bytes_scanned` among them.
                value @ MetricValue::Count { name, .. } if name == "bytes_scanned" => {
                    facts.bytes_scanned += value.as_usize() as u64;
                    if let Some(file) = metric.labels().iter().find(|l| l.name() == "filename") {
                        reached.insert(file.value().to_string());
                    }
                }
                MetricValue::PruningMetrics { name, pruning_metrics } if name == "files_ranges_pruned_statistics" => {
                    facts.files_pruned += pruning_metrics.pruned() as u64;
                }
                _ => {}
            }
        }
    }
    for child in plan.children() {
        walk(child, facts, reached);
    }
}
