use std::time::Duration;

use benchhost_plugin_api::abi::BuildInfo;
use benchhost_plugin_api::{Invariant, Metric, Observation, Unit};
use serde_json::json;

use super::*;
use crate::plan::settings::Plan;

fn cell() -> Cell {
    let params = BTreeMap::from([("rows".to_string(), json!(1000))]);
    let plan = Plan::flat(0, 3, 1, 3);
    Cell { index: 4, rig: "r".into(), params, plan, deadline: Duration::from_secs(1), against: false }
}

fn run_info() -> RunInfo {
    RunInfo { profile: "debug".into(), ..RunInfo::for_tests(1, Some("id")) }
}

fn plugin() -> Message {
    let build = BuildInfo { profile: "release".into(), rustc: "rustc 1.95.0".into(), target: "x".into() };
    Message::Plugin {
        info: PluginInfo {
            api_version: "0.1.0".into(),
            name: "p".into(),
            version: "1.0.0".into(),
            build,
            rigs: vec![],
        },
        sha256: Some("ab".repeat(32)),
    }
}

fn iterations_rig() -> Descriptor {
    Descriptor::iterations("r", "")
        .metric(Metric::iter_time("t"))
        .metric(Metric::rate("rows_per_s", Unit::RowsPerSec, "rows"))
        .metric(Metric::counter("size", Unit::Bytes, "bytes"))
        .invariant(Invariant::equal("rows_out", "rows"))
}

fn child(messages: Vec<Message>, end: End) -> ChildRun {
    ChildRun {
        messages,
        end,
        stderr_tail: vec!["last words".into()],
        peak_rss_kib: Some(1234),
        wall: Duration::from_millis(5),
        escaped: vec![],
    }
}

fn healthy(rows_out: u64) -> Vec<Message> {
    let outcome = BTreeMap::from([("rows".into(), 1000), ("rows_out".into(), rows_out), ("bytes".into(), 77)]);
    vec![
        plugin(),
        Message::Phase { phase: Phase::Measure },
        Message::Sample { iterations: 10, ns: 1000 },
        Message::Sample { iterations: 10, ns: 2000 },
        Message::Sample { iterations: 10, ns: 3000 },
        Message::Phase { phase: Phase::Teardown },
        Message::Outcome { counters: outcome, note: None },
        Message::Done,
    ]
}

#[test]
fn a_complete_cell_is_a_measurement_with_median_rate_and_counter() {
    let record = evaluate(&cell(), &iterations_rig(), &child(healthy(1000), End::Exited(0)), &run_info(), None);
    assert_eq!(record.kind, Kind::Measurement);
    let t = &record.metrics["t"];
    assert_eq!((t.value, t.ci95, t.n, t.unit.as_str()), (200.0, Some([100.0, 300.0]), Some(3), "ns"));
    let rate = &record.metrics["rows_per_s"];
    assert_eq!(rate.value, 1000.0 * 1e9 / 200.0);
    assert_eq!(rate.ci95, Some([1000.0 * 1e9 / 300.0, 1000.0 * 1e9 / 100.0]));
    assert!(rate.higher_is_better);
    assert_eq!((record.metrics["size"].value, record.metrics["size"].n), (77.0, None));
    assert_eq!(record.run.profile, "release", "the plugin's profile is the one measured");
    assert_eq!(record.variant["rows"], json!(1000));
    let info = record.cell.unwrap();
    assert_eq!((info.index, info.samples, info.iterations_per_sample, info.peak_rss_kib), (4, 3, Some(10), Some(1234)));
    assert_eq!(info.stats["t"].mean, 200.0);
    assert!(record.checks.iter().all(|c| c.ok));
}

#[test]
fn a_cell_reports_only_the_metrics_declared_for_its_parameters() {
    // The writer's `append_time`, `sort_time` and `create_time`: one per op, each where it means something.
    let rig = Descriptor::iterations("r", "")
        .metric(Metric::iter_time("big_time").only_where("rows", [1_000_000]))
        .metric(Metric::iter_time("t").only_where("rows", [1000]))
        .metric(Metric::counter("size", Unit::Bytes, "bytes"))
        .invariant(Invariant::equal("rows_out", "rows"));
    let record = evaluate(&cell(), &rig, &child(healthy(1000), End::Exited(0)), &run_info(), None);
    assert_eq!(record.kind, Kind::Measurement, "{:?}", record.failure);
    assert_eq!(record.metrics.keys().collect::<Vec<_>>(), ["size", "t"]);
    assert_eq!(rig.metrics_for(&cell().params).next().map(|m| m.name.as_str()), Some("t"), "the cell's headline");
}

#[test]
fn a_broken_invariant_is_a_failure_not_a_number() {
    let record = evaluate(&cell(), &iterations_rig(), &child(healthy(999), End::Exited(0)), &run_info(), None);
    assert_eq!(record.kind, Kind::Failure);
    assert!(record.metrics.is_empty());
    let failure = record.failure.unwrap();
    assert_eq!(failure.cause, "invariant");
    assert_eq!(failure.message, "rows_out == rows violated: rows_out = 999, rows = 1000");
    assert_eq!(failure.salvaged.len(), 3, "the samples are kept raw");
}

#[test]
fn every_kind_of_end_gets_its_own_cause() {
    let mut partial = healthy(1000);
    partial.truncate(4); // two samples in, no outcome, no done
    let panic = {
        let mut m = partial.clone();
        m.push(Message::Error { phase: Phase::Measure, kind: ErrorKind::Panic, message: "index out of bounds".into() });
        m.push(Message::Done);
        m
    };
    let cases = [
        (panic, End::Exited(0), "panic", "index out of bounds"),
        (partial.clone(), End::Signaled(libc::SIGSEGV), "signal", "killed by SIGSEGV during measure"),
        (
            partial.clone(),
            End::Deadline,
            "deadline",
            "deadline of the cell exceeded during measure; the child was killed",
        ),
        (partial.clone(), End::Exited(3), "exit", "the child exited with code 3 during measure"),
        (partial.clone(), End::Exited(0), "protocol", "the child exited during measure without finishing the cell"),
        (partial.clone(), End::Violation("junk".into()), "protocol", "protocol violation: junk"),
    ];
    for (messages, end, cause, message) in cases {
        let record =
            evaluate(&cell(), &iterations_rig(), &child(messages, end.clone()), &run_info(), Some("log".into()));
        let failure = record.failure.unwrap_or_else(|| panic!("{end:?} must fail"));
        assert_eq!((failure.cause.as_str(), failure.message.as_str()), (cause, message), "{end:?}");
        assert_eq!(failure.salvaged.len(), 2, "{end:?}");
        assert_eq!(failure.stderr_tail, ["last words"]);
        assert_eq!(failure.log.as_deref(), Some("log"));
        assert!(record.metrics.is_empty());
    }
}

#[test]
fn run_style_takes_the_mean_across_repetitions_and_omits_unmeasured_metrics() {
    let rig = Descriptor::run("r", "")
        .metric(Metric::observed("records_per_s", Unit::RecordsPerSec, true))
        .metric(Metric::observed("p99_gap", Unit::Micros, false))
        .invariant(Invariant::equal("consumed", "produced"));
    let obs = |v: f64, consumed: u64| {
        let o = Observation::new().metric("records_per_s", v).counter("consumed", consumed).counter("produced", 10);
        Message::Observation { metrics: o.metrics, counters: o.counters, note: Some("fed live".into()), window: false }
    };
    let outcome = Message::Outcome { counters: BTreeMap::new(), note: None };
    let messages = vec![plugin(), obs(10.0, 10), obs(20.0, 10), obs(30.0, 10), outcome.clone(), Message::Done];
    let record = evaluate(&cell(), &rig, &child(messages, End::Exited(0)), &run_info(), None);
    let m = &record.metrics["records_per_s"];
    assert_eq!((m.value, m.n), (20.0, Some(3)));
    let [lo, hi] = m.ci95.unwrap();
    assert!((hi - 20.0 - 4.303 * 10.0 / 3f64.sqrt()).abs() < 1e-9 && lo < 20.0);
    assert!(!record.metrics.contains_key("p99_gap"), "absent is not zero");
    assert_eq!(record.note.as_deref(), Some("fed live"), "the rig's note reaches the record");

    let messages = vec![plugin(), obs(10.0, 10), obs(20.0, 9), outcome.clone(), Message::Done];
    let record = evaluate(&cell(), &rig, &child(messages, End::Exited(0)), &run_info(), None);
    assert_eq!(
        record.failure.unwrap().message,
        "consumed == produced violated: consumed = 9, produced = 10 (repetition 2)"
    );

    // regression: the warm-up run's answer was never checked, so a wrong cold run hid behind right warm ones.
    let counters = BTreeMap::from([("consumed".to_string(), 7), ("produced".to_string(), 10)]);
    let warmup = Message::Warmup { iterations: 1, ns: 5, counters: Some(counters) };
    let messages = vec![plugin(), warmup, obs(10.0, 10), obs(20.0, 10), outcome, Message::Done];
    let record = evaluate(&cell(), &rig, &child(messages, End::Exited(0)), &run_info(), None);
    assert_eq!(record.kind, Kind::Failure);
    assert_eq!(
        record.failure.unwrap().message,
        "consumed == produced violated: consumed = 7, produced = 10 (the warm-up run)"
    );
}

#[test]
fn a_failure_with_an_escaped_process_names_both_in_clauses_that_end_cleanly() {
    // regression: a deadline failure whose cell also had an escaped process was reported ending in a dangling
    // "; " ("...outlived the cell; "); a rig's message ending in "; " gave "; ; a process left...".
    let escaped = |end: End, messages: Vec<Message>| {
        let run = ChildRun { escaped: vec!["pid 7 (sleep)".into()], ..child(messages, end) };
        evaluate(&cell(), &iterations_rig(), &run, &run_info(), None).failure.unwrap().message
    };
    let measuring = vec![plugin(), Message::Phase { phase: Phase::Measure }];
    assert_eq!(
        escaped(End::Deadline, measuring.clone()),
        "deadline of the cell exceeded during measure; the child was killed; a process left the cell's process \
         group (setsid) and outlived the cell; killed: pid 7 (sleep)"
    );
    let error = Message::Error { phase: Phase::Measure, kind: ErrorKind::Failed, message: "lost the broker; ".into() };
    let message = escaped(End::Exited(0), [measuring, vec![error, Message::Done]].concat());
    assert_eq!(
        message,
        "lost the broker; a process left the cell's process group (setsid) and outlived the cell; killed: pid 7 (sleep)"
    );
}

#[test]
fn a_check_keeps_the_sides_it_compared_and_a_law_applies_only_where_declared() {
    // The writer's laws: the append's where op = append, the creation's where op = create.
    let rig = iterations_rig()
        .invariant(Invariant::equal("size", "rows").only_where("rows", [5]))
        .invariant(Invariant::compare("bytes", benchhost_plugin_api::Op::Le, 100));
    let record = evaluate(&cell(), &rig, &child(healthy(1000), End::Exited(0)), &run_info(), None);
    let checks: Vec<(&str, Option<[u64; 2]>)> =
        record.checks.iter().map(|c| (c.invariant.as_str(), c.values)).collect();
    assert_eq!(checks, [("rows_out == rows", Some([1000, 1000])), ("bytes <= 100", Some([77, 100]))]);
}

#[test]
fn a_share_is_one_counter_over_another_and_absent_when_the_whole_is_0() {
    let rig = |of: &str| {
        Descriptor::iterations("r", "").metric(Metric::iter_time("t")).metric(Metric::share("kept", "bytes", of))
    };
    let record = evaluate(&cell(), &rig("rows"), &child(healthy(1000), End::Exited(0)), &run_info(), None);
    let kept = &record.metrics["kept"];
    assert_eq!((kept.value, kept.unit.as_str(), kept.ci95, kept.n), (0.077, "ratio", None, None));
    let mut none = healthy(1000);
    if let Message::Outcome { counters, .. } = &mut none[6] {
        counters.insert("queries".into(), 0);
    }
    let record = evaluate(&cell(), &rig("queries"), &child(none, End::Exited(0)), &run_info(), None);
    assert_eq!(record.kind, Kind::Measurement);
    assert!(!record.metrics.contains_key("kept"), "a share of nothing is absent, not 0");
}

#[test]
fn a_counter_the_rig_did_not_report_leaves_its_metric_and_share_out() {
    // regression (issue 81): the querier reported `trace_rows_missed = 0` where it looked up no trace, and a
    // share of sorts kept where no order was asked; a rig that does not report a counter has not taken it.
    let rig = Descriptor::iterations("r", "")
        .metric(Metric::iter_time("t"))
        .metric(Metric::counter("missed", Unit::Rows, "missed"))
        .metric(Metric::share("kept", "sorts", "rows"));
    let record = evaluate(&cell(), &rig, &child(healthy(1000), End::Exited(0)), &run_info(), None);
    assert_eq!(record.kind, Kind::Measurement, "{:?}", record.failure);
    assert!(!record.metrics.contains_key("missed") && !record.metrics.contains_key("kept"), "{:?}", record.metrics);
    assert!(record.metrics.contains_key("t"));
}

#[test]
fn a_rate_of_a_counter_the_cell_may_not_count_is_absent_and_any_other_missing_counter_fails() {
    // A Divan bench counts its work only when its code calls `counter`: its rates are `if_counted`.
    let rig = |rate: Metric| Descriptor::iterations("r", "").metric(Metric::iter_time("t")).metric(rate);
    let counted = rig(Metric::rate("chars_per_s", Unit::OpsPerSec, "chars").if_counted());
    let record = evaluate(&cell(), &counted, &child(healthy(1000), End::Exited(0)), &run_info(), None);
    assert_eq!(record.kind, Kind::Measurement, "{:?}", record.failure);
    assert!(!record.metrics.contains_key("chars_per_s") && record.metrics.contains_key("t"));
    let bytes = rig(Metric::rate("bytes_per_s", Unit::MegabytesPerSec, "bytes").if_counted());
    let record = evaluate(&cell(), &bytes, &child(healthy(1000), End::Exited(0)), &run_info(), None);
    assert!(record.metrics.contains_key("bytes_per_s"), "counted: reported");
    let plain = rig(Metric::rate("chars_per_s", Unit::OpsPerSec, "chars"));
    let record = evaluate(&cell(), &plain, &child(healthy(1000), End::Exited(0)), &run_info(), None);
    assert_eq!(record.kind, Kind::Failure, "a rate's missing counter is the rig's error");
}
