use super::*;

struct OneRig(benchhost_plugin_api::Descriptor);

impl matrix::Catalog for OneRig {
    fn descriptor(&self, rig: &str) -> Option<&benchhost_plugin_api::Descriptor> {
        (rig == self.0.name).then_some(&self.0)
    }
    fn names(&self) -> Vec<String> {
        vec![self.0.name.clone()]
    }
    fn build_hint(&self, _rig: &str) -> Option<String> {
        None
    }
}

#[test]
fn a_metric_the_cells_design_fixes_gets_no_verdict() {
    // regression (issue 81): kafka_topology's drain was judged on `consumed` (160,000 by design) and its open
    // loop on `records_per_s` (the rate it was asked for).
    use benchhost_plugin_api::{Descriptor, Metric, OnlyWhere, Unit};
    let rate =
        Metric::observed("records_per_s", Unit::RecordsPerSec, true).fixed_where(OnlyWhere::except("rate", [0.0]));
    let catalog = OneRig(Descriptor::run("wal", "").metric(rate));
    let verdict = |rate: f64| {
        let mut record = Record::point_for_tests(1, 10, 1.0);
        record.kind = Kind::Verdict;
        record.variant.insert("rate".into(), rate.into());
        let mut verdict = benchhost_record::Verdict::for_tests();
        verdict.metric = Some("records_per_s".into());
        record.verdict = Some(verdict);
        record
    };
    assert!(fixed_by_design(&verdict(10_000.0), &catalog), "the open loop's rate is its design");
    assert!(!fixed_by_design(&verdict(0.0), &catalog), "a closed loop's rate is measured");
}

#[test]
fn a_missed_target_names_the_variant_as_tables_do_and_a_single_sample_has_no_interval() {
    // regression: one sample read `±0.0% after 1 samples`, and the variant printed as JSON.
    let mut record = Record::point_for_tests(1, 10, 100.0);
    record.metrics.get_mut("t").unwrap().ci95 = Some([100.0, 100.0]);
    let cell = benchhost_record::CellInfo {
        samples: 1,
        stop: Some(benchhost_record::Stop::Budget),
        target_ci: Some(0.01),
        ..benchhost_record::CellInfo::default()
    };
    record.cell = Some(cell);
    let line = missed_target(&record).unwrap();
    assert_eq!(
        line,
        "warning: wal rows=10: CI95 target ±1% not reached within the budget (no interval after 1 sample)"
    );
    record.cell.as_mut().unwrap().samples = 7;
    record.metrics.get_mut("t").unwrap().ci95 = Some([98.0, 102.0]);
    assert!(missed_target(&record).unwrap().ends_with("(±2.0% after 7 samples)"));
    record.cell.as_mut().unwrap().stop = Some(benchhost_record::Stop::Target);
    assert_eq!(missed_target(&record), None);
}
