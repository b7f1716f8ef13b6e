//! `benchhost accept` as a team meets it: a pull request that is slower on purpose fails the gate, its author
//! accepts the change with a reason in a file committed with the code, the gate passes and says why; a later,
//! larger regression still fails; the acknowledgement can be listed, revoked, verified and merged; bad input
//! is refused in one line with nothing written.

use crate::support::Sandbox;
use benchhost_record::{Decision, Kind};

/// A kafka_topology measurement of `mode` at `rate` records/s (±0.5%), from run `id` at `ts`.
fn line(ts: u64, id: &str, mode: &str, rate: f64) -> String {
    format!(
        r#"{{"schema":1,"bench":"kafka_topology","kind":"measurement","run":{{"ts_ms":{ts},"id":"{id}","commit":"{id:0>12}","host":"h","cpu":"c","cores":2,"os":"linux/x86_64","profile":"release"}},"variant":{{"mode":"{mode}"}},"metrics":{{"records_per_s":{{"value":{rate},"unit":"records/s","higher_is_better":true,"ci95":[{},{}],"n":5}}}}}}"#,
        rate * 0.995,
        rate * 1.005
    ) + "\n"
}

/// The base (`old.jsonl`, with nineteen earlier runs at the same rates: how far the series' runs differ), a pull
/// request 10% slower on `perthread` (`new.jsonl`), and a later one 20% slower (`newer.jsonl`); `split`
/// unchanged in each.
fn streams(sandbox: &Sandbox) {
    let runs =
        |ts: u64, id: &str, perthread: f64| line(ts, id, "perthread", perthread) + &line(ts, id, "split", 380_000.0);
    let earlier: String = (1..=19).map(|ts| runs(ts, &format!("h{ts}"), 400_000.0)).collect();
    sandbox.write("old.jsonl", &(earlier + &runs(100, "a", 400_000.0)));
    sandbox.write("new.jsonl", &runs(200, "b", 360_000.0));
    sandbox.write("newer.jsonl", &runs(300, "c", 320_000.0));
}

fn stderr(output: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&output.get_output().stderr).into_owned()
}

const GATE: [&str; 4] = ["--fail-on", "regressed", "--accepted", "accepted.jsonl"];

#[test]
fn a_pull_request_that_regresses_fails_is_accepted_and_passes_and_a_larger_regression_still_fails() {
    let sandbox = Sandbox::new();
    streams(&sandbox);
    // The pull request's comparison fails the gate (no acknowledgement file yet: none accepted).
    let failed = sandbox.cmd().args(["compare", "old.jsonl", "new.jsonl", "--out", "pr.jsonl"]).args(GATE).assert();
    assert!(stderr(&failed.code(1)).contains("gate: 1 verdicts are regressed"));

    // Its author accepts it, from the verdict the job wrote, into a file committed with the code.
    let reason = "the rebalance check of #412 costs 10%";
    let accept = ["accept", "^kafka_topology mode=perthread$", "--results", "pr.jsonl", "--out", "accepted.jsonl"];
    sandbox.cmd().args(accept).args(["--reason", reason, "--by", "ann"]).assert().success();
    let (acks, problems) = sandbox.records("accepted.jsonl");
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(acks.len(), 1, "one series and metric accepted: {acks:?}");
    let a = acks[0].acknowledgement.as_ref().unwrap();
    assert_eq!((acks[0].kind, acks[0].variant["mode"].as_str()), (Kind::Acknowledgement, Some("perthread")));
    assert_eq!(
        (a.metric.as_str(), a.decision, a.reason.as_str(), a.by.as_str()),
        ("records_per_s", Decision::Regressed, reason, "ann")
    );
    assert!((a.ratio - 0.9).abs() < 1e-9 && a.ci95[0] < 0.9 && 0.9 < a.ci95[1], "{a:?}");

    // The job again: the verdict is still `regressed`, says who accepted it and why, and the gate passes.
    let passed = sandbox.cmd().args(["compare", "old.jsonl", "new.jsonl", "--out", "pr2.jsonl"]).args(GATE).assert();
    assert!(stderr(&passed.success()).contains("gate: 1 verdicts are accepted"));
    let (verdicts, _) = sandbox.records("pr2.jsonl");
    let perthread = verdicts.iter().find(|r| r.variant["mode"] == "perthread").unwrap();
    let v = perthread.verdict.as_ref().unwrap();
    assert_eq!((v.decision, v.accepted.as_ref().map(|x| x.id.as_str())), (Decision::Regressed, Some(a.id.as_str())));
    let note = perthread.note.as_deref().unwrap();
    assert!(note.contains(&format!("accepted: {reason} (ann, ")), "{note}");

    // A later regression of the same series, twice the size, is not what was accepted: it fails, and says by how much.
    let larger = sandbox.cmd().args(["compare", "old.jsonl", "newer.jsonl", "--out", "pr3.jsonl"]).args(GATE).assert();
    assert!(stderr(&larger.code(1)).contains("gate: 1 verdicts are regressed"));
    let (verdicts, _) = sandbox.records("pr3.jsonl");
    let perthread = verdicts.iter().find(|r| r.variant["mode"] == "perthread").unwrap();
    assert!(perthread.verdict.as_ref().unwrap().accepted.is_none());
    let note = perthread.note.as_deref().unwrap();
    assert!(note.contains("exceeds the accepted x0.900 [") && note.contains("%"), "{note}");
}

#[test]
fn an_acknowledgement_is_listed_revoked_verified_and_merged_once() {
    let sandbox = Sandbox::new();
    streams(&sandbox);
    sandbox.cmd().args(["compare", "old.jsonl", "new.jsonl", "--out", "pr.jsonl"]).assert().success();
    let accept = ["accept", "perthread", "--results", "pr.jsonl", "--out", "accepted.jsonl", "--by", "ann"];
    sandbox.cmd().args(accept).args(["--reason", "expected"]).assert().success();
    let id = sandbox.records("accepted.jsonl").0[0].acknowledgement.as_ref().unwrap().id.clone();
    let list = ["accept", "--list", "--results", "accepted.jsonl"];
    let listed = sandbox.cmd().args(list).assert().success();
    let text = String::from_utf8_lossy(&listed.get_output().stdout).into_owned();
    assert!(
        text.starts_with("kafka_topology mode=perthread: accepted: expected (ann, ") && !text.contains("revoked"),
        "{text}"
    );

    // Revoked, it no longer lets the gate through.
    let revoke = ["accept", "--revoke", &id, "--results", "accepted.jsonl", "--by", "bob", "--reason", "reverted"];
    sandbox.cmd().args(revoke).assert().success();
    let text = String::from_utf8_lossy(&sandbox.cmd().args(list).assert().success().get_output().stdout).into_owned();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.lines().next().unwrap().contains("(revoked)") && text.contains(&format!("revokes {id}")), "{text}");
    sandbox.cmd().args(["compare", "old.jsonl", "new.jsonl"]).args(GATE).assert().code(1);
    let again = ["accept", "--revoke", &id, "--results", "accepted.jsonl", "--by", "bob", "--reason", "twice"];
    let refused = sandbox.refused(sandbox.cmd().args(again), "none.jsonl");
    assert!(refused.contains(&format!("no standing acknowledgement has id `{id}`")), "{refused}");

    // verify finds it sound; merge keeps each record once, however often it is merged.
    sandbox.cmd().args(["verify", "accepted.jsonl"]).assert().success();
    for _ in 0..2 {
        sandbox.cmd().args(["merge", "all.jsonl", "accepted.jsonl", "pr.jsonl"]).assert().success();
    }
    let (all, _) = sandbox.records("all.jsonl");
    assert_eq!(all.iter().filter(|r| r.kind == Kind::Acknowledgement).count(), 2);
    // An acknowledgement without a reason (written by hand) is a problem verify names.
    let text = std::fs::read_to_string(sandbox.path().join("accepted.jsonl")).unwrap();
    let first = text.lines().next().unwrap().replace(r#""reason":"expected""#, r#""reason":"""#);
    sandbox.write("bad.jsonl", &(first + "\n"));
    let bad = sandbox.cmd().args(["verify", "bad.jsonl"]).assert().code(1);
    let said = String::from_utf8_lossy(&bad.get_output().stdout).into_owned() + &stderr(&bad);
    assert!(said.contains("bad.jsonl:1: acknowledgement without a reason"), "{said}");
}

#[test]
fn accept_refuses_bad_input_in_one_line_and_writes_nothing() {
    let sandbox = Sandbox::new();
    streams(&sandbox);
    sandbox.cmd().args(["compare", "old.jsonl", "new.jsonl", "--out", "pr.jsonl"]).assert().success();
    let accept = |extra: &[&str]| {
        let mut cmd = sandbox.cmd();
        cmd.args(["accept", "--results", "pr.jsonl", "--out", "acks.jsonl", "--by", "ann"]).args(extra);
        cmd
    };
    let said = sandbox.refused(&mut accept(&["perthread"]), "acks.jsonl");
    assert!(said.contains("accept needs --reason"), "{said}");
    let said = sandbox.refused(&mut accept(&["perthread", "--reason", "  "]), "acks.jsonl");
    assert!(said.contains("accept needs --reason"), "{said}");
    let said = sandbox.refused(&mut accept(&["^nosuch", "--reason", "r"]), "acks.jsonl");
    assert!(said.contains("PATTERN `^nosuch` names no series of pr.jsonl"), "{said}");
    let said = sandbox.refused(&mut accept(&["split", "--reason", "r"]), "acks.jsonl");
    assert!(said.contains("the newest of none is regressed or improved: nothing to accept"), "{said}");

    // --from must name a commit of the checkout.
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git").args(args).current_dir(sandbox.path()).output().unwrap();
        assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
        String::from_utf8_lossy(&ok.stdout).trim().to_string()
    };
    git(&["init", "-q"]);
    git(&["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "base"]);
    let said = sandbox.refused(&mut accept(&["perthread", "--reason", "r", "--from", "nosuch"]), "acks.jsonl");
    assert!(said.contains("--from `nosuch` is not a commit of"), "{said}");
    accept(&["perthread", "--reason", "r", "--from", "HEAD"]).assert().success();
    let (acks, _) = sandbox.records("acks.jsonl");
    assert_eq!(acks[0].acknowledgement.as_ref().unwrap().from_commit, Some(git(&["rev-parse", "HEAD"])));
}

/// A wal measurement of `compression=zstd rows=1000` at `ns` a round trip (±0.5%), from run `id` at `ts`.
fn wal_line(ts: u64, id: &str, ns: f64) -> String {
    format!(
        r#"{{"schema":1,"bench":"wal","kind":"measurement","run":{{"ts_ms":{ts},"id":"{id}","host":"h","cpu":"c","cores":2,"os":"linux/x86_64","profile":"release"}},"variant":{{"compression":"zstd","rows":1000}},"metrics":{{"roundtrip_time":{{"value":{ns},"unit":"ns","higher_is_better":false,"ci95":[{},{}],"n":30}}}}}}"#,
        ns * 0.995,
        ns * 1.005
    ) + "\n"
}

#[test]
fn the_ci_recipes_acceptance_turns_its_failing_gate_into_a_passing_one() {
    // The recipe's own `accept` line (docs/src/ci.md), run as a user runs it on the job's artifact.
    let recipe = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src/ci.md"));
    let recipe = recipe.unwrap();
    let line = recipe.lines().find(|l| l.contains("benchhost accept")).expect("ci.md accepts a change");
    let mut words: Vec<String> = Vec::new();
    for (i, part) in line.split('\'').enumerate() {
        match i % 2 {
            1 => words.push(part.to_string()),
            _ => words.extend(part.split_whitespace().map(str::to_owned)),
        }
    }
    assert!(words[0].ends_with("benchhost") && words[1] == "accept", "{words:?}");
    let sandbox = Sandbox::new();
    let earlier: String = (1..=19).map(|ts| wal_line(ts, &format!("h{ts}"), 1_000_000.0)).collect();
    sandbox.write("base.jsonl", &(earlier + &wal_line(100, "a", 1_000_000.0)));
    sandbox.write("branch.jsonl", &wal_line(200, "b", 1_050_000.0));
    std::fs::create_dir(sandbox.path().join("bench-results")).unwrap();
    // The job: its gate (which names the committed acknowledgements) fails on the 5% regression.
    let job = ["compare", "base.jsonl", "branch.jsonl", "--out", "bench-results/pr.jsonl"];
    sandbox.cmd().args(job).args(GATE).assert().code(1);
    // The author accepts it with the recipe's line, and the job passes: the verdict says why.
    sandbox.cmd().args(&words[1..]).args(["--by", "ann"]).assert().success();
    let again = ["compare", "base.jsonl", "branch.jsonl", "--out", "pr2.jsonl"];
    let passed = sandbox.cmd().args(again).args(GATE).assert().success();
    assert!(stderr(&passed).contains("gate: 1 verdicts are accepted"));
    let (verdicts, _) = sandbox.records("pr2.jsonl");
    let v = verdicts[0].verdict.as_ref().unwrap();
    assert_eq!(
        (v.decision, v.accepted.as_ref().map(|a| a.reason.as_str())),
        (Decision::Regressed, Some("a CRC check on every record (#412)"))
    );
}
