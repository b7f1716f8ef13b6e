//! A cell's heap is settled before the rig runs: memory an iteration frees stays with the process, so the
//! next iteration does not pay page faults to get it back (see `host/src/heap.rs`).

use crate::support::{Sandbox, fault_plugins};
use benchhost_record::Kind;

#[test]
fn an_iteration_that_frees_what_it_allocated_does_not_fault_it_back_in() {
    let sandbox = Sandbox::new();
    sandbox.write("rigs.toml", "[defaults]\nwarmup = \"50ms\"\nmeasurement = \"300ms\"\nsamples = 10\n");
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--plugin", "churn", "--out", "r.jsonl", "--plugin-dir"]).arg(fault_plugins());
    cmd.assert().success();
    let (records, _) = sandbox.records("r.jsonl");
    let record = &records[0];
    assert_eq!(record.kind, Kind::Measurement, "{:?}", record.failure);
    let cell = record.cell.as_ref().unwrap();
    let iterations = cell.warmup_iterations + cell.samples * cell.iterations_per_sample.unwrap();
    let faults = cell.page_faults.expect("the child reports its page faults");
    // Each iteration touches 400 pages: a heap given back to the kernel would fault ~400 times per iteration.
    // Settled, only the first iteration's pages fault (and the child's own few).
    assert!(iterations >= 20, "{iterations} iterations");
    assert!(faults < 2 * 400 + 200, "{faults} page faults over {iterations} iterations");
}
