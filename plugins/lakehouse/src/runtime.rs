//! The rigs' own tokio runtime, sized by their `workers` parameter. `workers = 0` is a current-thread runtime:
//! the measured work runs on the thread the host times, and a process of one thread can be counted by
//! `run --instructions` (which forks it: only the forking thread survives a fork). `workers = N` runs N worker
//! threads, as a server would. Each rig picks its default by what it measures: compaction 0 (a rewrite took
//! the same time on one thread as on two workers, 19.3-21.1 ms against 20.3-20.9 ms), querier 2 (DataFusion
//! scans partitions in parallel: a cold top-k query took 103 ms on one thread, 67 ms on two workers). iceberg
//! captures the runtime it was built in and spawns its planning tasks there, so catalogs are built and queried
//! inside it (on a current-thread runtime only its own `block_on` runs them). A count's set-up
//! ([`SetupContext::counting`]) gets a current-thread runtime whatever `workers` says: the query's work, on one
//! thread, is what it counts.

use benchhost_plugin_api::{Param, SetupContext};
use tokio::runtime::{Builder, Runtime};

/// The `workers` parameter both rigs declare, with the rig's default.
pub fn param(default: i64) -> Param {
    Param::int("workers", default)
        .range(0, 256)
        .doc("tokio worker threads; 0: one current-thread runtime (a count always runs on one)")
}

/// A current-thread runtime for 0 `workers` or a count's set-up, else a multi-thread one with that many.
pub fn new(workers: i64, ctx: &SetupContext) -> std::io::Result<Runtime> {
    let workers = if ctx.counting { 0 } else { workers };
    match usize::try_from(workers).unwrap_or(0) {
        0 => Builder::new_current_thread().enable_all().build(),
        n => Builder::new_multi_thread().worker_threads(n).enable_all().thread_name("lakehouse-rig").build(),
    }
}

#[cfg(test)]
mod tests {
    use benchhost_plugin_api::SetupContext;
    use tokio::runtime::RuntimeFlavor;

    #[test]
    fn no_workers_is_a_current_thread_runtime_and_workers_are_threads() {
        let timed = SetupContext::default();
        assert_eq!(super::new(0, &timed).unwrap().handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
        let multi = super::new(2, &timed).unwrap();
        assert_eq!(multi.handle().runtime_flavor(), RuntimeFlavor::MultiThread);
        assert_eq!(multi.metrics().num_workers(), 2);
    }

    #[test]
    fn a_count_runs_on_one_thread_whatever_the_workers() {
        let counted = SetupContext { counting: true, ..SetupContext::default() };
        assert_eq!(super::new(2, &counted).unwrap().handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
    }
}
