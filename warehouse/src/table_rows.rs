//! A chunk of records as rows of the table: each row's fields, the chunk grouped by partition (by the table's
//! own spec), and a partition's rows as the table's columns.
//!
//! Rows are grouped before any column is built: only the columns the spec reads (`ts`, `bench`) go through
//! iceberg's partition transforms, and each partition then builds its columns from its own rows. Splitting the
//! whole batch instead copied every record's text once more (into each partition's slice).

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use arrow::array::{ArrayRef, AsArray, RecordBatch, StringBuilder, TimestampMicrosecondArray};
use arrow::row::{RowConverter, SortField};
use benchhost_record::merge::identity_hash;
use benchhost_record::{Kind, Record};
use iceberg::arrow::{PartitionValueCalculator, arrow_struct_to_literal, schema_to_arrow_schema};
use iceberg::io::FileIO;
use iceberg::spec::{DataFile, Literal, PartitionKey, Schema};
use iceberg::table::Table;

use crate::schema::{IDENTITY, VARIANT};

/// One row of the table.
pub struct Row {
    pub ts_ms: u64,
    pub bench: String,
    kind: &'static str,
    run_id: Option<String>,
    variant: String,
    pub identity: u128,
    line: String,
}

impl Row {
    /// The row of `record`, with its text as the file holds it, `text` (no second serialization, and the
    /// fields a newer benchhost added are kept).
    pub fn of(record: &Record, text: &str) -> Row {
        let kind = match record.kind {
            Kind::Measurement => "measurement",
            Kind::Verdict => "verdict",
            Kind::Failure => "failure",
            Kind::Acknowledgement => "acknowledgement",
        };
        Row {
            ts_ms: record.run.ts_ms,
            bench: record.bench.clone(),
            kind,
            run_id: record.run.id.clone(),
            variant: serde_json::to_string(&record.variant).expect("variants serialize"),
            identity: identity_hash(record),
            line: text.to_string(),
        }
    }
}

/// `rows` grouped by their partition of `table` (its default spec), each group in the order of `rows`.
///
/// Iceberg's transforms compute each row's partition values from the spec's source columns alone; rows are
/// grouped by those values in one pass, each encoded once as bytes (arrow's row format), and a group's values
/// become a partition key once. (Iceberg's own splitter makes a literal of every row's values and filters the
/// whole batch once per partition: 3% of publish's instructions.)
pub(crate) fn partitions(table: &Table, rows: Vec<Row>) -> Result<Vec<(PartitionKey, Vec<Row>)>> {
    let metadata = table.metadata();
    let (schema, spec) = (metadata.current_schema(), metadata.default_partition_spec());
    let sources = spec.fields().iter().map(|field| field.source_id).collect::<Vec<_>>();
    let fields = schema.as_struct().fields().iter().filter(|f| sources.contains(&f.id)).cloned().collect::<Vec<_>>();
    let narrow = Schema::builder().with_fields(fields).build()?;
    let arrow_schema = Arc::new(schema_to_arrow_schema(&narrow)?);
    let columns = arrow_schema.fields().iter().map(|field| column(field.name(), &rows)).collect::<Result<Vec<_>>>()?;
    let calculator = PartitionValueCalculator::try_new(spec, &narrow)?;
    let values = calculator.calculate(&RecordBatch::try_new(arrow_schema, columns)?)?;
    let parts = values.as_struct().columns();
    let encoder = RowConverter::new(parts.iter().map(|part| SortField::new(part.data_type().clone())).collect())?;
    let encoded = encoder.convert_columns(parts)?;
    let (mut group_of, mut firsts, mut groups) = (HashMap::new(), Vec::new(), Vec::<Vec<Row>>::new());
    for (i, row) in rows.into_iter().enumerate() {
        let group = *group_of.entry(encoded.row(i)).or_insert_with(|| {
            firsts.push(i);
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[group].push(row);
    }
    firsts
        .into_iter()
        .zip(groups)
        .map(|(first, rows)| {
            let literal = arrow_struct_to_literal(&values.slice(first, 1), calculator.partition_type())?;
            let Some(Some(Literal::Struct(key))) = literal.into_iter().next() else {
                bail!("iceberg made no partition key of the values {:?}", values.slice(first, 1));
            };
            Ok((PartitionKey::new(spec.as_ref().clone(), schema.clone(), key), rows))
        })
        .collect()
}

/// The column `name` of the table for `rows`.
pub(crate) fn column(name: &str, rows: &[Row]) -> Result<ArrayRef> {
    // Sized up front: grown as it fills, the record column was copied again at each doubling.
    let text = |f: &dyn Fn(&Row) -> Option<&str>| {
        let bytes = rows.iter().map(|row| f(row).map_or(0, str::len)).sum();
        let mut column = StringBuilder::with_capacity(rows.len(), bytes);
        rows.iter().for_each(|row| column.append_option(f(row)));
        Arc::new(column.finish()) as ArrayRef
    };
    Ok(match name {
        "ts" => {
            let micros = rows.iter().map(|r| r.ts_ms as i64 * 1000).collect::<Vec<_>>();
            Arc::new(TimestampMicrosecondArray::from(micros).with_timezone("+00:00"))
        }
        "bench" => text(&|r| Some(&r.bench)),
        "kind" => text(&|r| Some(r.kind)),
        "run_id" => text(&|r| r.run_id.as_deref()),
        "record" => text(&|r| Some(&r.line)),
        VARIANT => text(&|r| Some(&r.variant)),
        IDENTITY => {
            let mut column = StringBuilder::with_capacity(rows.len(), 32 * rows.len());
            rows.iter().for_each(|row| column.append_value(format!("{:032x}", row.identity)));
            Arc::new(column.finish()) as ArrayRef
        }
        other => return Err(anyhow!("the records table has a column `{other}` this benchhost does not know")),
    })
}

/// Deletes files a failed publish wrote (best effort: what remains is found by a later cleanup).
pub(crate) async fn remove(io: &FileIO, files: &[DataFile]) {
    for file in files {
        let _ = io.delete(file.file_path()).await;
    }
}
