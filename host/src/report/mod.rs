//! Text for people: the tables after a run and of `benchhost show`, reports and exports. Formats only:
//! reads nothing, measures nothing.

pub(crate) mod blocks;
pub(crate) mod chart_groups;
pub(crate) mod comparison;
pub(crate) mod export;
pub(crate) mod format;
pub(crate) mod html;
pub(crate) mod html_block;
pub(crate) mod html_chart;
pub(crate) mod html_forest;
pub(crate) mod html_frame;
pub(crate) mod html_percentiles;
pub(crate) mod html_scale;
pub(crate) mod html_series;
pub(crate) mod html_text;
pub(crate) mod latest;
pub(crate) mod markdown;
pub(crate) mod order;
pub(crate) mod trend;
pub(crate) mod verdicts;

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

use crate::report::format::{metric_beside, metrics_shown};
use benchhost_record::{Kind, Record};

/// One row per record: bench, variant, result. Of each rig's variant only the keys whose values differ
/// between its rows are shown (all of them for a single row); the records keep every key.
pub fn records_table(records: &[&Record]) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    table.set_header(["#", "bench", "variant", "result"]);
    let shown = export::shown_variants(records);
    for (i, (record, variant)) in records.iter().zip(shown).enumerate() {
        table.add_row([(i + 1).to_string(), record.bench.clone(), variant, result(record)]);
    }
    table.to_string()
}

pub(crate) fn result(record: &Record) -> String {
    match record.kind {
        Kind::Failure => crate::report::export::failure_text(record),
        Kind::Acknowledgement => crate::report::export::acknowledgement_text(record),
        Kind::Verdict => verdict_text(record),
        Kind::Measurement => {
            let mut lines: Vec<String> = metrics_shown(record)
                .into_iter()
                .map(|(name, m, u)| format!("{name} {}", metric_beside(m, u)))
                .collect();
            let doubts = record.cell.as_ref().and_then(|c| c.conditions.as_ref()).map(|c| c.doubts());
            if let Some(doubts) = doubts.filter(|d| !d.is_empty()) {
                lines.push(format!("doubtful: {}", doubts.join("; ")));
            }
            lines.join("\n")
        }
    }
}

/// A verdict in one line of a table: its metric, decision, ratio and CI95 (`roundtrip_time no_change: x1.0091
/// [0.9961, 1.0223]`), or why it has no ratio, and whether an acknowledgement covers it. How it was made
/// (against what, over how many processes) is its note, in `report`: in a cell it made `show`'s table hundreds
/// of characters wide.
fn verdict_text(record: &Record) -> String {
    let Some(v) = &record.verdict else { return record.note.clone().unwrap_or_else(|| "verdict".into()) };
    let versus = compared_with(record).map_or(String::new(), |what| format!(" {what}"));
    let said = format!("{} {}{versus}", v.metric.as_deref().unwrap_or("-"), v.decision.name());
    let mut text = match (v.ratio, v.ci95, &v.reason) {
        (Some(ratio), Some([lo, hi]), _) => format!("{said}: x{ratio:.4} [{lo:.4}, {hi:.4}]"),
        (Some(ratio), None, _) => format!("{said}: x{ratio:.4}"),
        (None, _, Some(reason)) => format!("{said}: {reason}"),
        (None, _, None) => said,
    };
    if let Some(accepted) = &v.accepted {
        text += &format!(" (accepted: {})", accepted.reason);
    }
    text
}

/// What a verdict compared its record with, in a few words: `against ../base/target/release` (another build),
/// `vs mode=perthread` (the reference arm: the parameters in which it differs), or `vs 1a2b3c4d5e6f` (a baseline's
/// commit); `None` when the verdict does not say.
pub(crate) fn compared_with(record: &Record) -> Option<String> {
    let v = record.verdict.as_ref()?;
    if let Some(against) = &v.against {
        if let Some(build) = against.get("build") {
            return Some(format!("against {}", format::plain(build)));
        }
        let differing: Vec<String> = against
            .iter()
            .filter(|(k, value)| record.variant.get(*k) != Some(*value))
            .map(|(k, value)| format!("{k}={}", format::plain(value)))
            .collect();
        return (!differing.is_empty()).then(|| format!("vs {}", differing.join(" ")));
    }
    let commit = v.baseline.as_ref()?.commit.as_deref()?;
    Some(format!("vs {commit}"))
}

/// One row per verdict: bench, variant, metric, change with CI95, the smallest change it would have caught
/// (`detectable`), decision. A verdict between two arms of a rig
/// (`--interleave`) names what it held equal and what it compared instead of its variant, and a rig's such
/// verdicts are grouped by what they held equal.
pub fn verdicts_table(verdicts: &[&Record]) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    table.set_header(["bench", "variant", "metric", "change [CI95]", "detectable", "decision"]);
    let names = verdicts::verdict_names(verdicts);
    let labels = comparison::verdict_labels(verdicts);
    let mut benches: Vec<&str> = Vec::new();
    for record in verdicts {
        if !benches.contains(&record.bench.as_str()) {
            benches.push(&record.bench);
        }
    }
    let mut order: Vec<usize> = (0..verdicts.len()).collect();
    order.sort_by_key(|&i| {
        let bench = benches.iter().position(|b| *b == verdicts[i].bench).unwrap_or(0);
        (bench, labels.get(&i).map(|l| l.held.clone()).unwrap_or_default())
    });
    for i in order {
        let record = verdicts[i];
        let Some(v) = &record.verdict else { continue };
        let metric = v.metric.clone().unwrap_or_else(|| "-".into());
        let detectable = v.detectable.map_or("-".into(), crate::report::format::detectable);
        let cells = [
            record.bench.clone(),
            names[i].clone(),
            metric,
            verdicts::change(v),
            detectable,
            verdicts::decision_text(v),
        ];
        table.add_row(cells);
    }
    let mut text = table.to_string();
    for (series, line) in comparison::where_lines(verdicts) {
        text.push_str(&format!("\nwhere: {series}: {line}"));
    }
    text
}

/// The verdicts of `verdicts` as the screen shows them after a run: per what they compare against (another
/// build, arms, earlier runs), its heading, both builds' libraries, and its table.
pub fn grouped_verdicts_tables(verdicts: &[&Record]) -> String {
    let mut out = String::new();
    for group in verdicts::groups(verdicts) {
        out.push_str(&format!("{}\n", group.heading));
        for line in &group.libraries {
            out.push_str(&format!("  library {line}\n"));
        }
        out.push_str(&format!("{}\n", verdicts_table(&group.verdicts)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchhost_record::MetricValue;
    use serde_json::Value;

    #[test]
    fn tables_name_series_by_the_keys_that_differ_within_their_rig() {
        let record = |rows: i64| {
            let variant = [("codec".to_string(), Value::from("zstd")), ("rows".to_string(), Value::from(rows))];
            let run = benchhost_record::RunInfo::for_tests(1, Some("a"));
            let m = MetricValue { value: 5.0, unit: "ns".into(), higher_is_better: false, ci95: None, n: None };
            Record::measurement_for_tests("wal", run, variant.into(), [("t".to_string(), m)].into())
        };
        let (a, b) = (record(10), record(20));
        let shown = export::shown_variants(&[&a, &b]);
        assert_eq!(shown, ["rows=10", "rows=20"]);
        assert_eq!(export::shown_variants(&[&a]), ["codec=zstd rows=10"], "a single row shows everything");
        let verdicts = crate::analysis::compare::compare(
            &[a.clone(), b.clone()],
            &[a, b],
            &|_, _| 0.03,
            &crate::analysis::between_runs::Spreads::none(),
            &benchhost_record::RunInfo::for_tests(2, None),
        );
        let table = verdicts_table(&verdicts.iter().collect::<Vec<_>>());
        assert!(table.contains("rows=20") && !table.contains("codec=zstd"), "{table}");
        // regression: `show` put each verdict's whole note in its cell, 330 characters wide.
        let shown = result(&verdicts[0]);
        assert_eq!(shown, "t no_change vs 00000000000a: x1.0000 [1.0000, 1.0000]", "{:?}", verdicts[0].note);
        // regression: a verdict's line named its variant but not what it was compared with.
        let mut paired = verdicts[0].clone();
        paired.variant = [("mode".to_string(), Value::from("split")), ("rows".to_string(), Value::from(10))].into();
        let v = paired.verdict.as_mut().unwrap();
        v.baseline = None;
        v.against =
            Some([("mode".to_string(), Value::from("perthread")), ("rows".to_string(), Value::from(10))].into());
        assert_eq!(result(&paired), "t no_change vs mode=perthread: x1.0000 [1.0000, 1.0000]");
        let v = paired.verdict.as_mut().unwrap();
        v.against = Some([("build".to_string(), Value::from("../base/target/release"))].into());
        assert_eq!(result(&paired), "t no_change against ../base/target/release: x1.0000 [1.0000, 1.0000]");
        let mut undefined = verdicts[0].clone();
        let v = undefined.verdict.as_mut().unwrap();
        (v.ratio, v.reason) = (None, Some("the baseline is 0".into()));
        v.accepted = Some(benchhost_record::Accepted {
            id: "a1".into(),
            reason: "a new check".into(),
            by: "Ann".into(),
            ts_ms: 1,
        });
        assert_eq!(result(&undefined), "t no_change vs 00000000000a: the baseline is 0 (accepted: a new check)");
    }
}
