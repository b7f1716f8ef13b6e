use std::collections::BTreeMap;
use std::time::Duration;

use benchhost_plugin_api::ErrorKind;

use super::*;
use crate::plan::settings::Plan;
use crate::proc::executor::End;
use crate::proc::protocol::Phase;

fn cell(index: usize, rig: &str, against: bool) -> Cell {
    let plan = Plan::flat(1_000_000_000, 30, 100_000_000, 5);
    Cell { index, rig: rig.into(), params: BTreeMap::new(), plan, deadline: Duration::from_secs(60), against }
}

#[test]
fn a_plan_is_spread_over_the_processes_in_short_samples() {
    // The defaults: 1 s warm-up, 30 samples of 100 ms; five processes.
    let shape = Shape::of(&Plan::flat(1_000_000_000, 30, 100_000_000, 5), 5);
    assert_eq!(shape, Shape { warmup_ns: 200_000_000, sample_ns: SAMPLE_NS, pairs: 60 });
    // Short samples stay as asked; a tiny plan still takes ten pairs.
    let shape = Shape::of(&Plan::flat(0, 10, 1_000_000, 5), 5);
    assert_eq!(shape, Shape { warmup_ns: 0, sample_ns: 1_000_000, pairs: 10 });
}

#[test]
fn arms_duel_their_rigs_first_arm_and_builds_duel_their_twins() {
    let cells =
        [cell(0, "a", false), cell(1, "b", false), cell(2, "a", false), cell(3, "a", false), cell(4, "b", false)];
    let all = |_: &str| true;
    assert_eq!(duels_of(&cells, false, &all), [[0, 2], [0, 3], [1, 4]]);
    let only_a = |rig: &str| rig == "a";
    assert_eq!(duels_of(&cells, false, &only_a), [[0, 2], [0, 3]], "run-style rigs stay in rounds");
    let twins = [cell(0, "a", false), cell(1, "a", true), cell(2, "b", false), cell(3, "b", true)];
    assert_eq!(duels_of(&twins, true, &all), [[1, 0], [3, 2]], "the other build is the reference");
    assert_eq!(duels_of(&twins, true, &only_a), [[1, 0]]);
}

fn child(messages: Vec<Message>) -> ChildRun {
    ChildRun {
        messages,
        end: End::Exited(0),
        stderr_tail: vec![],
        peak_rss_kib: None,
        wall: Duration::from_millis(5),
        escaped: vec![],
    }
}

fn side(s: usize, message: Message) -> Message {
    Message::Side { side: s, message: Box::new(message) }
}

#[test]
fn each_side_sees_its_own_messages_and_its_sample_of_every_pair() {
    let outcome = |c| Message::Outcome { counters: BTreeMap::from([("n".to_string(), c)]), note: None };
    let run = child(vec![
        Message::Phase { phase: Phase::Measure },
        Message::Pair { iterations: 4, ns: [40, 44] },
        side(1, outcome(2)),
        side(0, outcome(1)),
        Message::Done,
    ]);
    let b = side_of(&run, 1);
    assert_eq!(
        b.messages,
        [
            Message::Phase { phase: Phase::Measure },
            Message::Sample { iterations: 4, ns: 44 },
            outcome(2),
            Message::Done
        ]
    );
    assert_eq!(side_of(&run, 0).messages[1], Message::Sample { iterations: 4, ns: 40 });
}

#[test]
fn when_one_side_fails_the_other_fails_with_it_and_names_it() {
    let error = Message::Error { phase: Phase::Setup, kind: ErrorKind::Panic, message: "boom".into() };
    let run = child(vec![Message::Phase { phase: Phase::Setup }, side(1, error.clone()), Message::Done]);
    assert!(side_of(&run, 1).messages.contains(&error));
    let innocent = side_of(&run, 0);
    let Some(Message::Error { phase, message, .. }) =
        innocent.messages.iter().find(|m| matches!(m, Message::Error { .. }))
    else {
        panic!("{:?}", innocent.messages)
    };
    assert_eq!(*phase, Phase::Setup);
    assert_eq!(message, "the arm compared with it, measured in the same process, failed during setup: boom");
    assert_eq!(innocent.messages.last(), Some(&Message::Done), "the error comes before the end, as a child sends it");
}

#[test]
fn a_process_gathers_its_pairs_and_each_sides_outcome() {
    let outcome = |c: u64| Message::Outcome { counters: BTreeMap::from([("bytes".to_string(), c)]), note: None };
    let messages = vec![
        Message::Pair { iterations: 5, ns: [10, 11] },
        Message::Side { side: 1, message: Box::new(outcome(2)) },
        Message::Pair { iterations: 5, ns: [12, 13] },
        Message::Side { side: 0, message: Box::new(outcome(1)) },
    ];
    let p = process_of(&messages);
    assert_eq!(p.pairs, [(5, [10, 11]), (5, [12, 13])]);
    assert_eq!((p.counters[0]["bytes"], p.counters[1]["bytes"]), (1, 2));
}
