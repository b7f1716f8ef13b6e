//! The rigs' own tokio runtime, sized by their `workers` parameter. By default (`workers = 0`) a
//! current-thread runtime: the measured work runs on the thread the host times, with no hand-offs between
//! threads, and a process of one thread can be counted by `run --instructions` (which forks it: only the
//! forking thread survives a fork). `workers = N` runs N worker threads, as a server would. iceberg captures
//! the runtime it was built in and spawns its planning tasks there, so catalogs are built and queried inside
//! it (on a current-thread runtime its `block_on` drives them).

use benchhost_plugin_api::Param;
use tokio::runtime::{Builder, Runtime};

/// The `workers` parameter both rigs declare.
pub fn param() -> Param {
    Param::int("workers", 0).range(0, 256).doc("tokio worker threads; 0: one current-thread runtime (countable)")
}

/// A current-thread runtime for 0 `workers`, else a multi-thread one with that many.
pub fn new(workers: i64) -> std::io::Result<Runtime> {
    match usize::try_from(workers).unwrap_or(0) {
        0 => Builder::new_current_thread().enable_all().build(),
        n => Builder::new_multi_thread().worker_threads(n).enable_all().thread_name("lakehouse-rig").build(),
    }
}

#[cfg(test)]
mod tests {
    use tokio::runtime::RuntimeFlavor;

    #[test]
    fn no_workers_is_a_current_thread_runtime_and_workers_are_threads() {
        assert_eq!(super::new(0).unwrap().handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
        let multi = super::new(2).unwrap();
        assert_eq!(multi.handle().runtime_flavor(), RuntimeFlavor::MultiThread);
        assert_eq!(multi.metrics().num_workers(), 2);
    }
}
