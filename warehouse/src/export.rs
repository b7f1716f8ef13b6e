//! Records out of the warehouse as a results stream: every record (streamed, in batches), or only the newest
//! few of each series, found from the small columns before any record text is read.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use anyhow::{Context, Result};
use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::TimestampMicrosecondType;
use benchhost_record::sink::Sink;
use futures::TryStreamExt;
use iceberg::expr::{Predicate, Reference};
use iceberg::spec::Datum;
use iceberg::table::Table;

use crate::schema::VARIANT;

const DAY_MICROS: i64 = 86_400_000_000;
/// The `kind` of an acknowledgement's row: every one is exported, whatever its series' newest.
const ACKNOWLEDGEMENT: &str = "acknowledgement";

/// Appends every record of `table` to the stream `out`; the number of records.
pub async fn all(table: &Table, out: &Path) -> Result<usize> {
    let mut batch = Sink::open(out)?.batch();
    let mut stream = table.scan().select(["record"]).build()?.to_arrow().await?;
    let mut count = 0;
    while let Some(columns) = stream.try_next().await? {
        for line in columns.column(0).as_string::<i32>().iter().flatten() {
            batch.push(line)?;
            count += 1;
        }
    }
    batch.finish()?;
    Ok(count)
}

/// Appends to `out` the `newest` newest measurement or failure records of each series of `table`, and every
/// acknowledgement (every record, where rows from before the variant column have none); the number of records.
///
/// Two scans: the first reads time, bench, kind and variant of every row and keeps the times of each series'
/// newest rows; the second reads the record text only from the days those times fall on.
pub async fn newest(table: &Table, newest: usize, out: &Path) -> Result<usize> {
    if table.metadata().current_schema().field_by_name(VARIANT).is_none() {
        return all(table, out).await;
    }
    let mut times: HashMap<(String, String), Vec<i64>> = HashMap::new();
    let mut days: BTreeSet<i64> = BTreeSet::new();
    let mut stream = table.scan().select(["ts", "bench", "kind", VARIANT]).build()?.to_arrow().await?;
    while let Some(columns) = stream.try_next().await? {
        let (ts, bench, kind, variant) = columns_of(&columns);
        if variant.null_count() > 0 {
            return all(table, out).await;
        }
        for i in 0..columns.num_rows() {
            match kind.value(i) {
                "verdict" => continue,
                ACKNOWLEDGEMENT => {
                    days.insert(ts.value(i).div_euclid(DAY_MICROS));
                    continue;
                }
                _ => {}
            }
            let kept = times.entry((bench.value(i).to_string(), variant.value(i).to_string())).or_default();
            let at = kept.partition_point(|t| *t <= ts.value(i));
            kept.insert(at, ts.value(i));
            if kept.len() > newest {
                kept.remove(0);
            }
        }
    }
    days.extend(times.values().flatten().map(|t| t.div_euclid(DAY_MICROS)));
    let wanted: HashSet<(&str, &str, i64)> =
        times.iter().flat_map(|((b, v), ts)| ts.iter().map(move |t| (b.as_str(), v.as_str(), *t))).collect();
    let mut batch = Sink::open(out)?.batch();
    let mut count = 0;
    let Some(filter) = days.iter().map(|day| on_day(*day)).reduce(Predicate::or) else {
        batch.finish()?;
        return Ok(0);
    };
    let scan = table.scan().select(["ts", "bench", "kind", VARIANT, "record"]).with_filter(filter).build()?;
    let mut stream = scan.to_arrow().await?;
    while let Some(columns) = stream.try_next().await? {
        let (ts, bench, kind, variant) = columns_of(&columns);
        let record = columns.column(4).as_string::<i32>();
        for i in 0..columns.num_rows() {
            let series_newest =
                kind.value(i) != "verdict" && wanted.contains(&(bench.value(i), variant.value(i), ts.value(i)));
            if kind.value(i) == ACKNOWLEDGEMENT || series_newest {
                batch.push(record.value(i))?;
                count += 1;
            }
        }
    }
    batch.finish().context("writing the export")?;
    Ok(count)
}

type Columns<'a> = (
    &'a arrow::array::PrimitiveArray<TimestampMicrosecondType>,
    &'a arrow::array::StringArray,
    &'a arrow::array::StringArray,
    &'a arrow::array::StringArray,
);

/// The first four columns of a scan of (ts, bench, kind, variant).
fn columns_of(batch: &RecordBatch) -> Columns<'_> {
    (
        batch.column(0).as_primitive::<TimestampMicrosecondType>(),
        batch.column(1).as_string::<i32>(),
        batch.column(2).as_string::<i32>(),
        batch.column(3).as_string::<i32>(),
    )
}

/// `ts` within UTC day `day` (days since the epoch): a scan reads only the files whose `ts` bounds meet it.
fn on_day(day: i64) -> Predicate {
    let ts = || Reference::new("ts");
    ts().greater_than_or_equal_to(Datum::timestamptz_micros(day * DAY_MICROS))
        .and(ts().less_than(Datum::timestamptz_micros((day + 1) * DAY_MICROS)))
}
