use std::path::Path;

use super::*;
use benchhost_record::reader;

fn stream() -> Vec<Record> {
    let line = |ts: u64, id: &str, mode: &str, rate: f64| {
        format!(
            r#"{{"schema":1,"bench":"kafka_topology","kind":"measurement","run":{{"ts_ms":{ts},"id":"{id}","commit":"{id:0>12}","host":"h","cpu":"Xeon, 2 GHz","cores":2,"os":"linux/x86_64","profile":"release"}},"variant":{{"mode":"{mode}","threads":4}},"metrics":{{"records_per_s":{{"value":{rate},"unit":"records/s","higher_is_better":true,"ci95":[{},{}],"n":5}},"p99_gap_us":{{"value":12.5,"unit":"us","higher_is_better":false}}}}}}"#,
            rate - 1000.0,
            rate + 1000.0
        )
    };
    let text = [
        line(1, "a", "perthread", 100_000.0),
        line(2, "b", "perthread", 80_000.0),
        line(1, "a", "split", 50_000.0),
        r#"{"schema":1,"bench":"kafka_topology","kind":"failure","run":{"ts_ms":3,"host":"h","cpu":"c","cores":2,"os":"o","profile":"p"},"variant":{"mode":"split","threads":4},"metrics":{},"failure":{"cause":"panic","message":"x"}}"#.to_string(),
    ]
    .join("\n");
    reader::parse(Path::new("s.jsonl"), text.as_bytes()).unwrap().records.into_iter().map(|(_, r)| r).collect()
}

#[test]
fn series_names_are_stable_and_hold_every_variant_key() {
    let records = stream();
    assert_eq!(series_name(&records[0]), "kafka_topology/mode=perthread/threads=4");
}

#[test]
fn csv_has_one_row_per_measurement_and_metric_and_one_per_failure() {
    let text = csv(&stream());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 6 + 1, "three measurements x two metrics, and the failure");
    assert_eq!(
        lines[1],
        "kafka_topology,kafka_topology/mode=perthread/threads=4,p99_gap_us,12.5,us,false,,,,a,00000000000a,1,"
    );
    assert_eq!(lines[7], "kafka_topology,kafka_topology/mode=split/threads=4,,,,,,,,,,3,panic: x");
    // regression: a `\r` in a field was not quoted.
    let mut records = stream();
    records[3].failure.as_mut().unwrap().message = "line one\rline \"two\"".into();
    assert!(csv(&records).contains("\"panic: line one\rline \"\"two\"\"\"\n"), "{}", csv(&records));
}

#[test]
fn gab_splits_by_direction_and_bmf_nests_measures() {
    let (smaller, bigger) = gab(&stream());
    let smaller: Vec<serde_json::Value> = serde_json::from_str(&smaller).unwrap();
    let bigger: Vec<serde_json::Value> = serde_json::from_str(&bigger).unwrap();
    assert!(smaller.iter().all(|e| e["name"].as_str().unwrap().ends_with("/p99_gap_us")));
    assert_eq!(smaller.len(), 1, "the split series' newest run failed: left out, not its older number");
    assert_eq!(bigger.len(), 1);
    let perthread =
        bigger.iter().find(|e| e["name"] == "kafka_topology/mode=perthread/threads=4/records_per_s").unwrap();
    assert_eq!((perthread["value"].as_f64(), perthread["range"].as_str()), (Some(80_000.0), Some("±1000")));
    let bmf: serde_json::Value = serde_json::from_str(&bmf(&stream())).unwrap();
    let m = &bmf["kafka_topology/mode=perthread/threads=4"]["records_per_s"];
    assert_eq!(
        (m["value"].as_f64(), m["lower_value"].as_f64(), m["upper_value"].as_f64()),
        (Some(80_000.0), Some(79_000.0), Some(81_000.0))
    );
    assert!(bmf["kafka_topology/mode=perthread/threads=4"]["p99_gap_us"]["lower_value"].is_null(), "no CI, no bounds");
    assert!(bmf.get("kafka_topology/mode=split/threads=4").is_none(), "a failed newest run is not published");
    assert_eq!(failed_series(&stream()), ["kafka_topology/mode=split/threads=4"]);
}

#[test]
fn json_written_one_record_at_a_time_is_the_array() {
    let records = stream();
    let elements: Vec<String> = records.iter().map(json_element).collect();
    assert_eq!(format!("[\n{}\n]", elements.join(",\n")), json(&records));
}
