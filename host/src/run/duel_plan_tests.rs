use std::collections::BTreeMap;
use std::time::Duration;

use super::*;
use crate::plan::interleave::{Interleave, pairs};
use crate::plan::matrix::twin_pairs;
use crate::plan::settings::Plan;

fn cell(index: usize, rig: &str, against: bool) -> Cell {
    let plan = Plan::flat(1_000_000_000, 30, 100_000_000, 5);
    Cell { index, rig: rig.into(), params: BTreeMap::new(), plan, deadline: Duration::from_secs(60), against }
}

#[test]
fn a_plan_is_spread_over_the_processes_in_short_samples() {
    // The defaults: 1 s warm-up, 30 samples of 100 ms; five processes.
    let shape = Shape::of(&Plan::flat(1_000_000_000, 30, 100_000_000, 5), 5);
    assert_eq!(shape, Shape { warmup_ns: 200_000_000, sample_ns: SAMPLE_NS, pairs: 60, window_ns: None });
    // Short samples stay as asked; a tiny plan still takes ten pairs.
    let shape = Shape::of(&Plan::flat(0, 10, 1_000_000, 5), 5);
    assert_eq!(shape, Shape { warmup_ns: 0, sample_ns: 1_000_000, pairs: 10, window_ns: None });
}

#[test]
fn a_run_style_process_spends_the_run_budget_or_the_plans_shorter_measurement_on_its_pairs_of_runs_alone() {
    // The defaults (3 s of measurement) give the whole budget; a short plan, as a test's or --quick's, less.
    let shape = Shape::runs(&Plan::flat(1_000_000_000, 30, 100_000_000, 5));
    assert_eq!(
        shape,
        Shape { warmup_ns: 0, sample_ns: RUN_BUDGET_NS, pairs: RUN_PAIRS, window_ns: None },
        "no warm-up run"
    );
    assert_eq!(Shape::runs(&Plan::flat(0, 10, 30_000_000, 5)).sample_ns, 300_000_000);
    assert_eq!(Mode::Runs.processes(None), 10);
    assert_eq!((Mode::Runs.processes(Some(3)), Mode::Runs.name()), (3, "alternate_runs"));
}

#[test]
fn arms_duel_their_rigs_first_arm_and_builds_duel_their_twins() {
    let cells =
        [cell(0, "a", false), cell(1, "b", false), cell(2, "a", false), cell(3, "a", false), cell(4, "b", false)];
    let arms = |duels: Vec<Duel>| duels.iter().map(|d| d.arms).collect::<Vec<_>>();
    let all = |_: &str| Some(Mode::Alternate);
    let interleaved = pairs(&cells, &Interleave::Bare).unwrap().pairs;
    assert_eq!(arms(duels_of(&cells, &interleaved, &all)), [[0, 2], [0, 3], [1, 4]]);
    let a_only = |rig: &str| (rig == "a").then_some(Mode::Alternate);
    let only_a = arms(duels_of(&cells, &interleaved, &a_only));
    assert_eq!(only_a, [[0, 2], [0, 3]], "a rig without a mode stays in rounds");
    let twins = [cell(0, "a", false), cell(1, "a", true), cell(2, "b", false), cell(3, "b", true)];
    let against = twin_pairs(&twins);
    assert_eq!(arms(duels_of(&twins, &against, &all)), [[1, 0], [3, 2]], "the other build is the reference");
    let mixed = |rig: &str| Some(if rig == "a" { Mode::Alternate } else { Mode::Concurrent });
    let modes: Vec<Mode> = duels_of(&twins, &against, &mixed).iter().map(|d| d.mode).collect();
    assert_eq!(modes, [Mode::Alternate, Mode::Concurrent], "each rig duels as its style does best");
}

#[test]
fn a_costly_duel_runs_fewer_processes_down_to_the_least() {
    assert_eq!(processes_for(20_000_000), PROCESSES, "a harness process: 0.02 s");
    assert_eq!(processes_for(0), PROCESSES);
    assert_eq!(processes_for(OVERHEAD_BUDGET_NS / 16), 16);
    assert_eq!(processes_for(OVERHEAD_BUDGET_NS / 15), 14, "each arm first in as many processes");
    assert_eq!(processes_for(700_000_000), LEAST_PROCESSES, "a querier process: 0.7 s");
}

#[test]
fn a_windowed_duel_takes_quarter_second_windows_shorter_only_when_its_plan_is() {
    let shape = Shape::windows(&Plan::flat(1_000_000_000, 30, 100_000_000, 5));
    assert_eq!((shape.sample_ns, shape.window_ns, shape.warmup_ns), (WINDOW_BUDGET_NS, Some(WINDOW_NS), 0));
    let quick = Shape::windows(&Plan::flat(0, 10, 30_000_000, 5));
    assert_eq!((quick.sample_ns, quick.window_ns), (300_000_000, Some(75_000_000)), "two pairs fit in 300 ms");
    assert_eq!((Mode::Windows.processes(None), Mode::Windows.name()), (10, "alternate_windows"));
}
