//! The querier's DataFusion session, configured once, here, as a product querier configures its own: target
//! partitions, pruning on statistics and bloom filters, dynamic filter pushdown (the TopK's), grouping the files
//! of an attested order by their statistics, a top-k reading the files that hold its first rows first
//! ([`crate::scan::topk_order`]), and the file-metadata (Parquet footer) cache. Seed 000 names the
//! bug this avoids: "read benches bypassed the real querier and measured a bare SessionContext". Every cell's
//! facts say which configuration it ran ([`Config::line`]).

use std::sync::Arc;

use datafusion::error::DataFusionError;
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::cache::DefaultFilesMetadataCache;
use datafusion::execution::cache::cache_manager::CacheManagerConfig;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::physical_optimizer::optimizer::PhysicalOptimizer;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::scan::store::{self, IcebergStore};
use crate::scan::topk_order::{RUNS_AFTER, TopKFileOrder};

/// The footer cache's size: every footer of the querier's tables many times over.
const FOOTER_CACHE_BYTES: usize = 64 << 20;

/// How the querier's session is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Partitions a scan is split into (the querier's worker threads).
    pub target_partitions: usize,
    /// Files and row groups pruned on their statistics and bloom filters; off, every file is read whole.
    pub pruning: bool,
    /// A TopK's threshold pushed into the scan while it runs, pruning files and row groups on the way.
    pub dynamic_filters: bool,
    /// The files of a declared order grouped by their statistics into ordered chains, one per partition
    /// (`split_file_groups_by_statistics`); off, each partition gets a contiguous run of files.
    pub split_by_statistics: bool,
    /// Parquet footers kept in DataFusion's file-metadata cache across queries.
    pub footer_cache: bool,
    /// A TopK's files read in the order of their statistics on its key ([`TopKFileOrder`]); off, DataFusion
    /// 53's own order (each group's files as planned, reversed only for the exact reverse of a declared order).
    pub topk_file_order: bool,
}

impl Config {
    /// The product querier's configuration on `workers` threads.
    pub fn querier(workers: usize) -> Config {
        Config {
            target_partitions: workers.max(1),
            pruning: true,
            dynamic_filters: true,
            split_by_statistics: true,
            footer_cache: true,
            topk_file_order: true,
        }
    }

    /// A session configured so, reading the warehouse's files through `store`.
    pub fn session(&self, store: IcebergStore) -> datafusion::error::Result<SessionContext> {
        let mut config = SessionConfig::new().with_target_partitions(self.target_partitions);
        let options = config.options_mut();
        options.execution.parquet.pruning = self.pruning;
        options.execution.parquet.bloom_filter_on_read = self.pruning;
        options.execution.split_file_groups_by_statistics = self.split_by_statistics;
        options.optimizer.enable_dynamic_filter_pushdown = self.dynamic_filters;
        options.optimizer.enable_topk_dynamic_filter_pushdown = self.dynamic_filters;
        let limit = if self.footer_cache { FOOTER_CACHE_BYTES } else { 0 };
        let cache = Arc::new(DefaultFilesMetadataCache::new(limit));
        let caches =
            CacheManagerConfig::default().with_file_metadata_cache(Some(cache)).with_metadata_cache_limit(limit);
        let runtime = RuntimeEnvBuilder::new().with_cache_manager(caches).build_arc()?;
        runtime.register_object_store(store::url().as_ref(), Arc::new(store));
        let mut rules = PhysicalOptimizer::new().rules;
        if self.topk_file_order {
            let at = rules.iter().position(|rule| rule.name() == RUNS_AFTER).ok_or_else(|| {
                DataFusionError::Plan(format!("DataFusion has no physical optimizer rule {RUNS_AFTER} to follow"))
            })?;
            rules.insert(at + 1, Arc::new(TopKFileOrder));
        }
        let state = SessionStateBuilder::new()
            .with_config(config)
            .with_runtime_env(runtime)
            .with_default_features()
            .with_physical_optimizer_rules(rules)
            .build();
        Ok(SessionContext::new_with_state(state))
    }

    /// The configuration in one line, for the cell's facts.
    pub fn line(&self) -> String {
        let on = |b: bool| if b { "on" } else { "off" };
        format!(
            "session: target_partitions {}, pruning {}, dynamic filters {}, split by statistics {}, footer cache {}, top-k file order {}",
            self.target_partitions,
            on(self.pruning),
            on(self.dynamic_filters),
            on(self.split_by_statistics),
            on(self.footer_cache),
            on(self.topk_file_order)
        )
    }
}
