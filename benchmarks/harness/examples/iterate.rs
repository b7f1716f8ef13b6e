//! The harness rig's iterations without benchhost: `iterate WORKLOAD N [SPIN_ROUNDS]` sets the rig up,
//! prepares N inputs and runs N iterations inside `run_iterations`, which nothing inlines. `instructions.py`
//! runs it under `valgrind --tool=callgrind --toggle-collect=*run_iterations*` for Callgrind's own count of
//! the same code, to hold beside benchhost's Cachegrind count (a sanity ratio: another tool, another binary,
//! no plugin boundary).

use benchhost_plugin_api::{Rig, RigError, SetupContext};
use rig_harness::Harness;

/// The loop as plugin-api's `measure` has it, without the clock pair around it.
#[inline(never)]
fn run_iterations(rig: &mut Harness, n: u64) -> Result<(), RigError> {
    for _ in 0..n {
        rig.iterate()?;
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (workload, n) = (args[1].as_str(), args[2].parse::<u64>().expect("N is a number"));
    let spin: i64 = args.get(3).map_or(0, |s| s.parse().expect("SPIN_ROUNDS is a number"));
    let params = serde_json::json!({ "workload": workload, "spin_rounds": spin, "spin_every": 1, "replica": 0 });
    let params = serde_json::from_value(params).expect("harness parameters");
    let mut rig = Harness::setup(params, &SetupContext::default()).expect("set-up");
    rig.prepare(n).expect("prepare");
    run_iterations(&mut rig, n).expect("the harness's iterations do not fail");
}
