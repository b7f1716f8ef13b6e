use std::collections::BTreeMap;
use std::time::Duration;

use benchhost_plugin_api::ErrorKind;

use super::*;
use crate::proc::executor::End;
use crate::proc::protocol::Phase;

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
    let (pairs, counters) = pairs_of(&messages);
    assert_eq!(pairs, [(5, [10, 11]), (5, [12, 13])]);
    assert_eq!((counters[0]["bytes"], counters[1]["bytes"]), (1, 2));
}

fn observation(v: f64, window: bool) -> Message {
    let metrics = BTreeMap::from([("records_per_s".to_string(), v)]);
    Message::Observation { metrics, counters: BTreeMap::new(), note: None, window }
}

#[test]
fn a_run_style_process_gives_each_sides_runs_in_order() {
    let observation = |v: f64| observation(v, false);
    // A B B A: the parent pairs the k-th run of one side with the k-th of the other, whatever the order.
    let messages = vec![side(0, observation(1.0)), side(1, observation(2.0)), side(1, observation(3.0))]
        .into_iter()
        .chain([side(0, observation(4.0)), Message::Pair { iterations: 1, ns: [1, 1] }])
        .collect::<Vec<_>>();
    let (runs, windows) = runs_of(&messages);
    let values = |s: usize| runs[s].iter().map(|m| m["records_per_s"]).collect::<Vec<_>>();
    assert_eq!((values(0), values(1)), (vec![1.0, 4.0], vec![2.0, 3.0]));
    assert!(!windows, "whole runs");
}

#[test]
fn a_process_of_windows_says_so_only_when_every_observation_was_one() {
    let windowed =
        |flags: [bool; 2]| runs_of(&[side(0, observation(1.0, flags[0])), side(1, observation(1.0, flags[1]))]).1;
    assert!(windowed([true, true]));
    assert!(!windowed([true, false]), "one side ran a whole run");
    assert!(!runs_of(&[side(0, observation(1.0, true))]).1, "no run of side 1");
}
