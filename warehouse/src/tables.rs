//! Records as two SQL tables, so common questions need no JSON functions:
//! - `records`: one row per record (bench, kind, the run's fields, variant as JSON text, note, and for a
//!   verdict its decision, metric and ratio);
//! - `metrics`: the long form, one row per record and metric (bench, kind, variant, metric, value, unit,
//!   higher_is_better, ci_low, ci_high, n, and the run's fields).

use std::path::PathBuf;
use std::sync::Arc;

/// Records per batch of the tables.
const CHUNK: usize = 8192;

use anyhow::Context;
use arrow::array::AsArray;
use arrow::array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use benchhost_record::Record;
use benchhost_record::scan::each_record;
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::TryStreamExt;

fn run_fields() -> Vec<Field> {
    let text = |name: &str| Field::new(name, DataType::Utf8, true);
    vec![
        Field::new("ts", DataType::Timestamp(TimeUnit::Millisecond, Some("+00:00".into())), false),
        text("run_id"),
        text("commit"),
        text("host"),
        text("cpu"),
        text("profile"),
        text("shard"),
        text("trigger"),
    ]
}

fn run_columns<'a>(rows: impl Iterator<Item = &'a Record> + Clone) -> Vec<ArrayRef> {
    let text = |f: fn(&Record) -> Option<&str>| Arc::new(rows.clone().map(f).collect::<StringArray>()) as ArrayRef;
    let ts = rows.clone().map(|r| r.run.ts_ms as i64).collect::<Vec<_>>();
    vec![
        Arc::new(TimestampMillisecondArray::from(ts).with_timezone("+00:00")),
        text(|r| r.run.id.as_deref()),
        text(|r| r.run.commit.as_deref()),
        text(|r| Some(r.run.host.as_str())),
        text(|r| Some(r.run.cpu.as_str())),
        text(|r| Some(r.run.profile.as_str())),
        text(|r| r.run.shard.as_deref()),
        text(|r| r.run.trigger.as_deref()),
    ]
}

fn kind(r: &Record) -> String {
    serde_json::to_value(r.kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn variant(r: &Record) -> String {
    serde_json::to_string(&r.variant).unwrap_or_default()
}

/// The `records` table.
pub fn records_batch(records: &[Record]) -> arrow::error::Result<RecordBatch> {
    let mut fields = vec![Field::new("bench", DataType::Utf8, false), Field::new("kind", DataType::Utf8, false)];
    fields.extend(run_fields());
    fields.push(Field::new("variant", DataType::Utf8, false));
    fields.push(Field::new("note", DataType::Utf8, true));
    // A verdict's conclusion, so "what regressed" is a WHERE clause.
    fields.push(Field::new("decision", DataType::Utf8, true));
    fields.push(Field::new("verdict_metric", DataType::Utf8, true));
    fields.push(Field::new("ratio", DataType::Float64, true));
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(records.iter().map(|r| r.bench.as_str()))),
        Arc::new(StringArray::from_iter_values(records.iter().map(kind))),
    ];
    columns.extend(run_columns(records.iter()));
    columns.push(Arc::new(StringArray::from_iter_values(records.iter().map(variant))));
    columns.push(Arc::new(records.iter().map(|r| r.note.as_deref()).collect::<StringArray>()));
    let verdicts = || records.iter().map(|r| r.verdict.as_ref());
    columns.push(Arc::new(verdicts().map(|v| v.map(|v| v.decision.name())).collect::<StringArray>()));
    columns.push(Arc::new(verdicts().map(|v| v.and_then(|v| v.metric.as_deref())).collect::<StringArray>()));
    columns.push(Arc::new(verdicts().map(|v| v.and_then(|v| v.ratio)).collect::<Float64Array>()));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

/// The `metrics` table.
pub fn metrics_batch(records: &[Record]) -> arrow::error::Result<RecordBatch> {
    let rows: Vec<(&Record, &String, &benchhost_record::MetricValue)> =
        records.iter().flat_map(|r| r.metrics.iter().map(move |(name, m)| (r, name, m))).collect();
    let mut fields = vec![
        Field::new("bench", DataType::Utf8, false),
        Field::new("kind", DataType::Utf8, false),
        Field::new("variant", DataType::Utf8, false),
        Field::new("metric", DataType::Utf8, false),
        Field::new("value", DataType::Float64, false),
        Field::new("unit", DataType::Utf8, false),
        Field::new("higher_is_better", DataType::Boolean, false),
        Field::new("ci_low", DataType::Float64, true),
        Field::new("ci_high", DataType::Float64, true),
        Field::new("n", DataType::Int64, true),
    ];
    fields.extend(run_fields());
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(rows.iter().map(|(r, _, _)| r.bench.as_str()))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|(r, _, _)| kind(r)))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|(r, _, _)| variant(r)))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|(_, name, _)| name.as_str()))),
        Arc::new(Float64Array::from_iter_values(rows.iter().map(|(_, _, m)| m.value))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|(_, _, m)| m.unit.as_str()))),
        Arc::new(BooleanArray::from(rows.iter().map(|(_, _, m)| m.higher_is_better).collect::<Vec<_>>())),
        Arc::new(rows.iter().map(|(_, _, m)| m.ci95.map(|c| c[0])).collect::<Float64Array>()),
        Arc::new(rows.iter().map(|(_, _, m)| m.ci95.map(|c| c[1])).collect::<Float64Array>()),
        Arc::new(rows.iter().map(|(_, _, m)| m.n.map(|n| n as i64)).collect::<Int64Array>()),
    ];
    columns.extend(run_columns(rows.iter().map(|(r, _, _)| *r)));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

/// The two tables, built a chunk of records at a time: memory holds their Arrow columns, never the records.
#[derive(Default)]
pub struct Tables {
    records: Vec<RecordBatch>,
    metrics: Vec<RecordBatch>,
}

impl Tables {
    /// Adds `records` to both tables.
    pub fn push(&mut self, records: &[Record]) -> arrow::error::Result<()> {
        self.records.push(records_batch(records)?);
        self.metrics.push(metrics_batch(records)?);
        Ok(())
    }

    /// The tables of every record of `files`, read a chunk at a time; each file's skipped lines are reported,
    /// and a file without a readable record is an error.
    pub fn from_files(files: &[PathBuf]) -> anyhow::Result<Tables> {
        let mut tables = Tables::default();
        for file in files {
            let mut chunk = Vec::with_capacity(CHUNK);
            each_record(
                file,
                |entry| entry.record,
                |record| {
                    chunk.push(record);
                    if chunk.len() == CHUNK {
                        tables.push(&chunk)?;
                        chunk.clear();
                    }
                    Ok(())
                },
            )?;
            tables.push(&chunk)?;
        }
        Ok(tables)
    }

    /// The tables of every record of the warehouse table `table`, a stored batch at a time.
    pub async fn from_warehouse(table: &iceberg::table::Table) -> anyhow::Result<Tables> {
        let mut tables = Tables::default();
        let mut stream = table.scan().select(["record"]).build()?.to_arrow().await?;
        while let Some(batch) = stream.try_next().await? {
            let lines = batch.column(0).as_string::<i32>();
            let records = lines
                .iter()
                .flatten()
                .map(|line| serde_json::from_str(line).context("a stored record"))
                .collect::<anyhow::Result<Vec<Record>>>()?;
            tables.push(&records)?;
        }
        Ok(tables)
    }

    /// A session with `records` and `metrics` registered (and `information_schema`, for `SHOW TABLES`).
    pub fn session(self) -> anyhow::Result<SessionContext> {
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_information_schema(true));
        for (name, batches, empty) in
            [("records", self.records, records_batch(&[])?), ("metrics", self.metrics, metrics_batch(&[])?)]
        {
            let table = MemTable::try_new(empty.schema(), vec![batches])?;
            ctx.register_table(name, Arc::new(table))?;
        }
        Ok(ctx)
    }

    /// Runs `sql`, a statement that only reads ([`crate::read_only`]), and renders the answer as a text table.
    pub async fn query(self, sql: &str) -> anyhow::Result<String> {
        let session = self.session()?;
        crate::read_only::check(&session.state(), sql)?;
        let batches = session.sql_with_options(sql, crate::read_only::options()).await?.collect().await?;
        Ok(datafusion::arrow::util::pretty::pretty_format_batches(&batches)?.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_tables_carry_the_run_fields_and_metrics_has_one_row_per_metric() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../results/compaction.jsonl");
        let records: Vec<Record> =
            benchhost_record::reader::read(path.as_ref()).unwrap().records.into_iter().map(|(_, r)| r).collect();
        let (r, m) = (records_batch(&records).unwrap(), metrics_batch(&records).unwrap());
        assert_eq!(r.num_rows(), records.len());
        assert_eq!(m.num_rows(), records.iter().map(|r| r.metrics.len()).sum::<usize>());
        for name in ["ts", "run_id", "commit", "host", "cpu", "profile", "shard", "trigger"] {
            assert!(r.schema().field_with_name(name).is_ok() && m.schema().field_with_name(name).is_ok(), "{name}");
        }
    }
}
