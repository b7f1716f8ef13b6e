use serde_json::json;

use super::*;
use benchhost_record::{Kind, Method, RunInfo, Verdict};

/// A verdict on `wal rows=ROWS` of `metric`, `against` what, decided as `decision`, from a run at `ts`.
fn verdict(rows: i64, metric: &str, against: serde_json::Value, decision: Decision, ts: u64) -> Record {
    let variant = serde_json::from_value(json!({"rows": rows, "codec": "lz4"})).unwrap();
    let mut record = Record::new("wal", Kind::Verdict, RunInfo::for_tests(ts, Some("r")), variant);
    let build = against.get("build").is_some();
    record.verdict = Some(Verdict {
        metric: Some(metric.into()),
        test: "t".into(),
        baseline: None,
        against: serde_json::from_value(against).unwrap(),
        ratio: Some(1.01),
        ci95: Some([0.99, 1.03]),
        higher_is_better: Some(false),
        threshold: 0.03,
        decision,
        reason: None,
        detectable: Some(0.02),
        method: Some(Method {
            mode: "alternate".into(),
            processes: 20,
            pairs_per_process: 15,
            rule: "r".into(),
            libraries: if build { vec!["a".repeat(64), "b".repeat(64)] } else { vec![] },
            randomised: None,
            fallback: None,
            log_ratios: vec![],
            layouts: None,
        }),
        functions: vec![],
        functions_explain: None,
        accepted: None,
        between_runs: None,
    });
    record
}

#[test]
fn verdicts_group_by_what_they_compare_against_and_list_what_needs_a_look_first() {
    let build = || json!({"build": "../base-plugins"});
    let arm = || json!({"rows": 10, "codec": "none"});
    let records = [
        verdict(10, "t", build(), Decision::NoChange, 1),
        verdict(20, "t", build(), Decision::Regressed, 1),
        verdict(30, "t", build(), Decision::Improved, 1),
        verdict(10, "t", arm(), Decision::Inconclusive, 1),
    ];
    let refs: Vec<&Record> = records.iter().collect();
    let groups = groups(&refs);
    assert_eq!(groups.len(), 2, "another build, then arms");
    assert_eq!(Side::of(&records[3]), Side::Arms);
    assert_eq!(
        groups[0].heading,
        "This build against ../base-plugins, paired: both in one process, samples alternating, 20 processes per \
         comparison"
    );
    assert_eq!(groups[0].libraries, ["wal: aaaaaaaaaaaa (this build), bbbbbbbbbbbb (../base-plugins)"]);
    let decisions: Vec<Decision> = groups[0].verdicts.iter().map(|r| r.verdict.as_ref().unwrap().decision).collect();
    assert_eq!(decisions, [Decision::Regressed, Decision::Improved, Decision::NoChange]);
    assert_eq!(counts(&groups[0]), "1 regressed, 1 improved, 1 no_change");
    assert!(groups[1].heading.starts_with("Between arms of a rig, paired: "), "{}", groups[1].heading);
}

#[test]
fn of_several_runs_only_each_comparisons_newest_verdict_is_shown() {
    let build = || json!({"build": "../base-plugins"});
    let records = [verdict(10, "t", build(), Decision::Regressed, 1), verdict(10, "t", build(), Decision::NoChange, 2)];
    let refs: Vec<&Record> = records.iter().collect();
    let groups = groups(&refs);
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].verdicts.len(), 1);
    assert_eq!(groups[0].verdicts[0].run.ts_ms, 2);
}

#[test]
fn the_markdown_section_names_both_builds_and_folds_the_no_change_rows() {
    let build = || json!({"build": "../base-plugins"});
    let records = [
        verdict(10, "t", build(), Decision::NoChange, 1),
        verdict(1000, "t", build(), Decision::Regressed, 1),
        verdict(100, "t", build(), Decision::NoChange, 1),
    ];
    let refs: Vec<&Record> = records.iter().collect();
    let md = markdown(&groups(&refs));
    let expected = "## Verdicts\n\n### This build against ../base-plugins, paired: both in one process, samples \
alternating, 20 processes per comparison\n\nLibraries (SHA-256): wal: aaaaaaaaaaaa (this build), bbbbbbbbbbbb \
(../base-plugins).\n\n1 regressed, 2 no_change (threshold ±3%).\n\n| Series | Metric | Change [CI95] | Detectable | \
Decision |\n|---|---|---|---|---|\n| wal rows=1000 | t | +1.00% [-1.00%, +3.00%] | ±2.0% | regressed |\n\n<details>\
<summary>2 no_change</summary>\n\n| Series | Metric | Change [CI95] | Detectable | Decision |\n|---|---|---|---|---|\n\
| wal rows=10 | t | +1.00% [-1.00%, +3.00%] | ±2.0% | no_change |\n| wal rows=100 | t | +1.00% [-1.00%, +3.00%] | \
±2.0% | no_change |\n\n</details>\n\n";
    assert_eq!(md, expected);
    assert_eq!(markdown(&[]), "", "nothing without verdicts");
    let html = crate::report::html_forest::html(&groups(&refs));
    assert!(html.contains("<h3>This build against ../base-plugins, paired: "), "{html}");
    assert!(html.contains("1 regressed, 2 no_change (threshold ±3%)."), "{html}");
    let rows: Vec<&str> = html.split("<tr class=\"forest-row\" data-decision=\"").skip(1).collect();
    let decisions: Vec<&str> = rows.iter().map(|r| r.split('"').next().unwrap()).collect();
    assert_eq!(decisions, ["regressed", "no_change", "no_change"], "one row per verdict, what needs a look first");
    assert!(rows[0].contains("<a href=\"#rig-wal\">wal</a> rows=1000"), "linked to its rig: {}", rows[0]);
    assert!(rows.iter().all(|r| r.contains("<circle class=\"ratio\"") && r.contains("class=\"ci\"")));
    assert_eq!(html.matches("class=\"detectable\"").count(), 3 * 2, "each row's detectable change, either way");
}
