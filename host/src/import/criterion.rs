//! `benchhost import criterion DIR`: turns a Criterion output directory (`target/criterion`) into schema-1
//! records, so a project's existing `cargo bench` suite joins the same results stream.
//!
//! Each `<…>/new/` directory holding `benchmark.json` and `estimates.json` is one benchmark: `bench` is its
//! group, `variant` its function and parameter; metrics are the mean, median and (linear sampling) slope of
//! the time per iteration with Criterion's own CI95, plus throughput where Criterion had one (its CI from the
//! mean's, inverted). `n` is the number of Criterion samples.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::Value;

use benchhost_record::{Kind, MetricValue, Record, RunInfo};

#[derive(Deserialize)]
struct Benchmark {
    group_id: String,
    function_id: Option<String>,
    value_str: Option<String>,
    throughput: Option<BTreeMap<String, u64>>,
}

#[derive(Deserialize)]
struct Estimate {
    point_estimate: f64,
    confidence_interval: Interval,
}

#[derive(Deserialize)]
struct Interval {
    lower_bound: f64,
    upper_bound: f64,
}

#[derive(Deserialize)]
struct Estimates {
    mean: Estimate,
    median: Estimate,
    slope: Option<Estimate>,
}

#[derive(Deserialize)]
struct Samples {
    iters: Vec<f64>,
}

/// Records for every benchmark under `dir`, in path order, stamped with `run`.
pub fn import(dir: &Path, run: &RunInfo) -> Result<Vec<Record>> {
    let mut found = Vec::new();
    collect(dir, &mut found).with_context(|| format!("reading {}", dir.display()))?;
    found.sort();
    found.iter().map(|new| record(new, run).with_context(|| format!("importing {}", new.display()))).collect()
}

/// Every `new/` directory below `dir` with a `benchmark.json` (Criterion's own `report/` pages are skipped).
fn collect(dir: &Path, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if !path.is_dir() {
            continue;
        }
        if path.file_name().is_some_and(|n| n == "new") && path.join("benchmark.json").is_file() {
            found.push(path);
        } else if path.file_name().is_none_or(|n| n != "report") {
            collect(&path, found)?;
        }
    }
    Ok(())
}

fn read<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

fn record(new: &Path, run: &RunInfo) -> Result<Record> {
    let benchmark: Benchmark = read(&new.join("benchmark.json"))?;
    let estimates: Estimates = read(&new.join("estimates.json"))?;
    let n = read::<Samples>(&new.join("sample.json")).ok().map(|s| s.iters.len() as u64);
    let time = |e: &Estimate| MetricValue {
        value: e.point_estimate,
        unit: "ns".into(),
        higher_is_better: false,
        ci95: Some([e.confidence_interval.lower_bound, e.confidence_interval.upper_bound]),
        n,
    };
    let mut metrics = BTreeMap::from([
        ("time_mean".to_string(), time(&estimates.mean)),
        ("time_median".to_string(), time(&estimates.median)),
    ]);
    if let Some(slope) = &estimates.slope {
        metrics.insert("time_slope".into(), time(slope));
    }
    // Throughput per iteration over the mean time; Criterion's Bytes and BytesDecimal are both bytes.
    for (kind, amount) in benchmark.throughput.iter().flatten() {
        let (name, unit, per_second) = match kind.as_str() {
            "Bytes" | "BytesDecimal" => ("mb_per_s", "MB/s", 1e9 / 1e6),
            "Elements" => ("elements_per_s", "ops/s", 1e9),
            _ => continue,
        };
        let scale = *amount as f64 * per_second;
        let [lo, hi] = [estimates.mean.confidence_interval.lower_bound, estimates.mean.confidence_interval.upper_bound];
        let value = MetricValue {
            value: scale / estimates.mean.point_estimate,
            unit: unit.into(),
            higher_is_better: true,
            ci95: Some([scale / hi, scale / lo]),
            n,
        };
        metrics.insert(name.into(), value);
    }
    let mut variant = BTreeMap::new();
    if let Some(function) = benchmark.function_id {
        variant.insert("function".to_string(), Value::from(function));
    }
    if let Some(value) = benchmark.value_str {
        variant.insert("value".to_string(), Value::from(value));
    }
    Ok(Record {
        metrics,
        note: Some(format!("imported from Criterion: {}", new.display())),
        ..Record::new(benchmark.group_id, Kind::Measurement, run.clone(), variant)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, file: &str, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(file), text).unwrap();
    }

    fn estimate(value: f64) -> String {
        format!(
            r#"{{"confidence_interval":{{"confidence_level":0.95,"lower_bound":{},"upper_bound":{}}},"point_estimate":{value},"standard_error":1.0}}"#,
            value - 1.0,
            value + 1.0
        )
    }

    #[test]
    fn a_criterion_tree_becomes_one_record_per_benchmark() {
        let root = tempfile::tempdir().unwrap();
        let sort = root.path().join("sort/10000/new");
        write(
            &sort,
            "benchmark.json",
            r#"{"group_id":"sort","function_id":null,"value_str":"10000","throughput":{"Elements":10000},"full_id":"sort/10000","directory_name":"sort/10000","title":"sort/10000"}"#,
        );
        let est = format!(
            r#"{{"mean":{},"median":{},"median_abs_dev":{},"slope":{},"std_dev":{}}}"#,
            estimate(75_700.0),
            estimate(75_600.0),
            estimate(10.0),
            estimate(75_650.0),
            estimate(20.0)
        );
        write(&sort, "estimates.json", &est);
        write(&sort, "sample.json", r#"{"sampling_mode":"Linear","iters":[1,2,3],"times":[75700,151400,227100]}"#);
        let noop = root.path().join("noop/new");
        write(
            &noop,
            "benchmark.json",
            r#"{"group_id":"noop","function_id":"empty","value_str":null,"throughput":null,"full_id":"noop","directory_name":"noop","title":"noop"}"#,
        );
        let est = format!(
            r#"{{"mean":{},"median":{},"median_abs_dev":{},"slope":null,"std_dev":{}}}"#,
            estimate(2.0),
            estimate(2.0),
            estimate(0.1),
            estimate(0.1)
        );
        write(&noop, "estimates.json", &est);
        std::fs::create_dir_all(root.path().join("report")).unwrap();

        let run = crate::run::provenance::current();
        let records = import(root.path(), &run).unwrap();
        assert_eq!(records.iter().map(|r| r.bench.as_str()).collect::<Vec<_>>(), ["noop", "sort"]);
        let noop = &records[0];
        assert_eq!(noop.variant["function"], "empty");
        assert_eq!(noop.metrics.keys().collect::<Vec<_>>(), ["time_mean", "time_median"]);
        assert_eq!(noop.metrics["time_mean"].n, None, "no sample.json, no n");
        let sort = &records[1];
        assert_eq!(sort.variant["value"], "10000");
        assert_eq!(sort.metrics["time_slope"].value, 75_650.0);
        assert_eq!(sort.metrics["time_mean"].ci95, Some([75_699.0, 75_701.0]));
        assert_eq!(sort.metrics["time_mean"].n, Some(3));
        let rate = &sort.metrics["elements_per_s"];
        assert!((rate.value - 10_000.0 * 1e9 / 75_700.0).abs() < 1e-6 && rate.higher_is_better);
        assert!(rate.ci95.unwrap()[0] < rate.value && rate.value < rate.ci95.unwrap()[1]);
    }
}
