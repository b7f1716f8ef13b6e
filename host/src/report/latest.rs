//! `benchhost show`'s table of a long stream: one row per series, its newest record, how many records it has
//! and the trend of its last values. Where every series has one record, the table is the one of every record.

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

use benchhost_record::history::{History, Point};
use benchhost_record::{Kind, Record};

/// Ticks of a sparkline, lowest to highest.
const TICKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The newest record of each series of `history`, in first-seen order, with the number of records behind it
/// and, per metric, a sparkline of its last values and the change of the newest from the one before.
pub fn latest_table(history: &History) -> String {
    let groups = history.groups();
    let latest: Vec<&Record> = groups.iter().map(|(_, g)| g.latest()).collect();
    if groups.iter().all(|(_, g)| g.count == 1) {
        return crate::report::records_table(&latest);
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    table.set_header(["#", "bench", "variant", "newest", "records", "trend (last runs)"]);
    let shown = crate::report::export::shown_variants(&latest);
    for (i, ((_, group), variant)) in groups.iter().zip(shown).enumerate() {
        let record = group.latest();
        let trend = match record.kind {
            // One sparkline per metric line of the result: an uncorrected twin shares its metric's line.
            Kind::Measurement => crate::report::format::metrics_shown(record)
                .into_iter()
                .map(|(m, _, _)| group.trend.get(m).map_or(String::new(), |p| trend(p)))
                .collect(),
            Kind::Failure | Kind::Verdict | Kind::Acknowledgement => Vec::new(),
        };
        let cells = [
            (i + 1).to_string(),
            record.bench.clone(),
            variant,
            crate::report::result(record),
            group.count.to_string(),
        ];
        table.add_row(cells.into_iter().chain([trend.join("\n")]));
    }
    table.to_string()
}

/// `▁▃▇█ +4.1%`: the values scaled to their own range, and the newest against the one before.
fn trend(points: &[Point]) -> String {
    let values: Vec<f64> = points.iter().map(|p| p.2).collect();
    let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    let tick = |v: f64| match hi > lo {
        true => TICKS[(((v - lo) / (hi - lo)) * 7.0).round() as usize],
        false => TICKS[3],
    };
    let line: String = values.iter().map(|v| tick(*v)).collect();
    match values.as_slice() {
        [.., before, newest] if *before != 0.0 => format!("{line} {:+.1}%", (newest / before - 1.0) * 100.0),
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchhost_record::history::Needs;

    #[test]
    fn a_series_with_history_shows_its_newest_record_count_and_trend() {
        let mut history = History::new(Needs { trend: 8, ..Needs::newest(1) });
        for (ts, value) in [(1, 100.0), (2, 110.0), (3, 105.0), (4, 120.0)] {
            history.push(History::arrival(Record::point_for_tests(ts, 10, value)));
        }
        history.push(History::arrival(Record::point_for_tests(5, 20, 7.0)));
        let table = latest_table(&history);
        assert!(table.contains("records") && table.contains("trend"), "{table}");
        assert!(table.contains("t 120.0 ns"), "the newest value: {table}");
        assert!(table.contains("▁▅▃█ +14.3%"), "{table}");
        assert_eq!(table.matches("wal").count(), 2, "one row per series: {table}");
    }

    #[test]
    fn one_record_per_series_is_the_table_of_every_record() {
        let mut history = History::new(Needs { trend: 8, ..Needs::newest(1) });
        let records = [Record::point_for_tests(1, 10, 1.0), Record::point_for_tests(2, 20, 2.0)];
        for r in &records {
            history.push(History::arrival(r.clone()));
        }
        assert_eq!(latest_table(&history), crate::report::records_table(&records.iter().collect::<Vec<_>>()));
    }

    #[test]
    fn an_uncorrected_twin_shares_its_metric_line_and_has_no_sparkline_of_its_own() {
        // regression: wal_log's rate rows had 10 metric lines but 14 sparklines, so p999's line showed p90's change.
        let mut history = History::new(Needs { trend: 8, ..Needs::newest(1) });
        for (ts, value) in [(1, 100.0), (2, 150.0)] {
            let mut record = Record::point_for_tests(ts, 10, value);
            let mut twin = record.metrics["t"].clone();
            twin.value = value * 2.0;
            record.metrics.insert("t_uncorrected".into(), twin);
            history.push(History::arrival(record));
        }
        let table = latest_table(&history);
        assert_eq!(table.matches('%').count(), 1, "one sparkline, for `t` only: {table}");
        assert!(table.contains("+50.0%"), "{table}");
    }
}
