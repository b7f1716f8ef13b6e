use super::*;

/// Spins for `d`: an operation of known length that no scheduler can shorten.
fn spin(d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

#[test]
fn a_stall_shows_in_the_corrected_tail_and_in_the_late_count_and_not_in_the_uncorrected_one() {
    // 20,000/s for 5 s, each operation ~10 µs, one stall of 200 ms a second in (issue 34's proof).
    let (rate, ops, service, stall) = (20_000.0, 100_000, Duration::from_micros(10), Duration::from_millis(200));
    let schedule = Schedule::per_second(rate).unwrap();
    let run = schedule
        .drive(ops, |i| {
            spin(if i == 20_000 { stall } else { service });
            Ok(())
        })
        .unwrap();
    assert_eq!(run.ops, ops);
    // The arithmetic: the 4,000 operations due during the stall start late, and so do those due while the
    // backlog drains (one interval of 50 µs brings one more, 10 µs serves one): 4,000 / (1 - 10/50) = 5,000;
    // a loaded VM adds its own (6,399 in one run here), a count of every operation would be 100,000.
    let due_in_stall = (stall.as_secs_f64() * rate) as u64;
    let draining = due_in_stall as f64 / (1.0 - service.as_secs_f64() * rate);
    assert!(run.late >= due_in_stall && (run.late as f64) < draining * 4.0, "late {}", run.late);
    assert!(run.worst_late >= stall - Duration::from_millis(5), "worst {:?}", run.worst_late);
    let p999 = |h: &Histogram<u64>| Duration::from_nanos(h.value_at_quantile(0.999));
    assert!(p999(&run.corrected) >= Duration::from_millis(100), "corrected p99.9 {:?}", p999(&run.corrected));
    assert!(p999(&run.uncorrected) * 10 < p999(&run.corrected), "uncorrected p99.9 {:?}", p999(&run.uncorrected));
    run.sustained().expect("the stall is caught up: the rate holds over the run");
    let observation = run.metrics(Observation::new(), "op");
    assert_eq!(observation.metrics["late_ops"], run.late as f64);
    assert!(observation.metrics["p999_op_us"] >= 100_000.0 && observation.metrics["p999_op_us_uncorrected"] < 10_000.0);
}

#[test]
fn a_rate_that_cannot_be_reached_is_a_failure_naming_both_rates() {
    let schedule = Schedule::per_second(10_000.0).unwrap();
    // 1 ms an operation: at most 1,000/s.
    let run = schedule
        .drive(200, |_| {
            spin(Duration::from_millis(1));
            Ok(())
        })
        .unwrap();
    let err = run.sustained().unwrap_err().to_string();
    assert!(err.starts_with("could not sustain 10,000/s: achieved ") && err.ends_with("/s"), "{err}");
    assert!(run.late > 150, "nearly every operation started late: {}", run.late);
}

#[test]
fn operations_never_start_before_they_are_due() {
    let schedule = Schedule::per_second(1_000.0).unwrap();
    let start = Instant::now();
    let mut began = Vec::new();
    schedule
        .drive(20, |_| {
            began.push(start.elapsed());
            Ok(())
        })
        .unwrap();
    for (i, at) in began.iter().enumerate() {
        assert!(*at >= Duration::from_millis(i as u64), "operation {i} began at {at:?}");
    }
}

#[test]
fn rates_without_an_interval_in_nanoseconds_are_invalid() {
    for rate in [0.0, -1.0, f64::NAN, f64::INFINITY, 2e9, 1e-12] {
        let err = Schedule::per_second(rate).unwrap_err().to_string();
        assert!(err.contains("has no interval between 1 ns"), "{rate}: {err}");
    }
    assert_eq!(Schedule::per_second(20_000.0).unwrap().interval(), Duration::from_micros(50));
    assert_eq!(thousands(61_200.4), "61,200");
    assert_eq!(thousands(999.0), "999");
}

#[test]
fn issued_operations_start_on_schedule_and_their_ends_recorded_elsewhere_make_the_run() {
    let schedule = Schedule::per_second(2_000.0).unwrap();
    let mut began = Vec::new();
    let issued = schedule
        .issue(40, |i, due| {
            began.push((i, due, Instant::now()));
            // Operation 10 holds the sender 20 ms: the next 40 come due meanwhile (all there are), and start late.
            if i == 10 {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(issued.ops, 40);
    assert!(began.iter().all(|(i, due, at)| *at >= *due && *due == schedule.due(issued.start, *i)));
    assert!(issued.late >= 29 && issued.worst_late >= Duration::from_millis(14), "{issued:?}");
    // Ends seen by two "consumers", each 1 ms after its operation began: merged, the corrected tail holds the
    // sender's stall and the uncorrected one does not.
    let mut run = schedule.run_of(&issued);
    let mut halves = [schedule.empty_run(), schedule.empty_run()];
    for (i, due, at) in &began {
        let since = |t: Instant| t - issued.start;
        halves[(*i % 2) as usize].record(since(*due), since(*at), since(*at) + Duration::from_millis(1));
    }
    halves.iter().for_each(|h| run.add_latencies(h));
    assert_eq!((run.ops, run.corrected.len(), run.late), (40, 40, issued.late));
    assert!(run.corrected.max() >= 15_000_000 && run.uncorrected.max() < 2_000_000, "{:?}", run.corrected.max());
}

#[test]
fn a_failing_start_ends_the_issue_with_its_error() {
    let schedule = Schedule::per_second(10_000.0).unwrap();
    let err = schedule.issue(100, |i, _| if i == 3 { Err(RigError::new("broker gone")) } else { Ok(()) }).unwrap_err();
    assert_eq!(err.to_string(), "broker gone");
}

#[test]
fn a_short_run_may_lose_one_stall_of_its_rate_and_a_long_one_only_the_margin() {
    // regression (issue 81): a smoke run's 0.25 s window failed on one hiccup (8,096/s of 10,000/s).
    let schedule = Schedule::per_second(10_000.0).unwrap();
    let run_of = |ops: u64, elapsed_ms: u64| {
        let mut run = schedule.drive(0, |_| Ok(())).unwrap();
        (run.ops, run.elapsed) = (ops, Duration::from_millis(elapsed_ms));
        run
    };
    assert!(run_of(2_500, 309).sustained().is_ok(), "0.25 s at 8,096/s: one stall of 59 ms");
    assert!(run_of(2_500, 500).sustained().is_err(), "0.25 s at 5,000/s is not a stall");
    assert!(run_of(20_000, 2_060).sustained().is_ok(), "2 s at 9,709/s: within 5%");
    assert!(run_of(20_000, 2_200).sustained().is_err(), "2 s at 9,091/s: past the margin");
    assert!(run_of(10, 40).sustained().is_err(), "a run shorter than a stall loses at most a quarter of its rate");
}
