//! The records table as this benchhost writes it: its namespace and name, its columns and its partitions, what
//! an existing table must have to be published to, and the columns a table made by an older benchhost gains.
//!
//! One row per record (its time, bench, kind, run id, variant, identity and the whole record as JSON text),
//! partitioned by `month(ts)` and `bench`, so a trend of one rig reads few files, and a publish of a nightly
//! stream writes few (day partitions made a file of ~10 records per day and rig: 1,024 files for 10k records,
//! which a publish over S3 then read back at ~40 ms each). Tables made with day partitions keep them.

use anyhow::{Context, Result, bail};
use iceberg::spec::{NestedField, PartitionSpec, PrimitiveType, Schema, Transform, Type};
use iceberg::transaction::{AddColumn, ApplyTransactionAction, Transaction};
use iceberg::{Catalog, ErrorKind, TableCreation, TableIdent};

/// The namespace of the records table, unless a REST catalog's URI names another.
pub const NAMESPACE: &str = "benchhost";
/// The records table's name, in the namespace of its location.
pub(crate) const TABLE: &str = "records";
/// The column of a record's variant (canonical JSON), so the newest record of each series is found without
/// reading the records; absent from tables made before it, and null in their older rows.
pub const VARIANT: &str = "variant";
/// The column of a record's identity (as `merge` counts records, 32 hex digits): publish adds no record whose
/// identity the table holds. Absent from tables made before it, and null in their older rows.
pub const IDENTITY: &str = "identity";
/// Schema changes that lose the compare-and-swap are retried this many times.
const ATTEMPTS: u32 = 20;

/// The table's columns, as this benchhost writes them.
fn schema() -> iceberg::Result<Schema> {
    let text = || Type::Primitive(PrimitiveType::String);
    Schema::builder()
        .with_fields(vec![
            NestedField::required(1, "ts", Type::Primitive(PrimitiveType::Timestamptz)).into(),
            NestedField::required(2, "bench", text()).into(),
            NestedField::required(3, "kind", text()).into(),
            NestedField::optional(4, "run_id", text()).into(),
            NestedField::required(5, "record", text()).into(),
            NestedField::optional(6, VARIANT, text()).into(),
            NestedField::optional(7, IDENTITY, text()).into(),
        ])
        .build()
}

/// The new table: its name, its columns, and its partitions (`month(ts)` and `bench`).
pub(crate) fn creation() -> iceberg::Result<TableCreation> {
    let schema = schema()?;
    let spec = PartitionSpec::builder(schema.clone())
        .add_partition_field("ts", "month", Transform::Month)?
        .add_partition_field("bench", "bench", Transform::Identity)?
        .build()?;
    Ok(TableCreation::builder().name(TABLE.to_string()).schema(schema).partition_spec(spec).build())
}

/// What is wrong with a table's schema for this benchhost, if anything: a column it does not write, or one of
/// another type or that a row may lack (columns it adds, optional ones, may be missing: `evolve` adds them).
pub(crate) fn schema_problem(table: &Schema) -> iceberg::Result<Option<String>> {
    let ours = schema()?;
    for field in table.as_struct().fields() {
        match ours.field_by_name(&field.name) {
            None => return Ok(Some(format!("a column `{}` this benchhost does not write", field.name))),
            Some(our) if our.field_type != field.field_type => {
                return Ok(Some(format!("column `{}` is {}, not {}", field.name, field.field_type, our.field_type)));
            }
            Some(our) if field.required && !our.required => {
                return Ok(Some(format!("column `{}` is required", field.name)));
            }
            Some(_) => {}
        }
    }
    let missing = ours.as_struct().fields().iter().find(|f| f.required && table.field_by_name(&f.name).is_none());
    Ok(missing.map(|f| format!("no column `{}`", f.name)))
}

/// Adds the columns a table made by an older benchhost lacks (its rows read them as null) to the table `ident`
/// of `catalog`.
pub(crate) async fn evolve(catalog: &dyn Catalog, ident: &TableIdent) -> Result<()> {
    for _ in 0..ATTEMPTS {
        let table = catalog.load_table(ident).await?;
        let schema = table.metadata().current_schema();
        let missing: Vec<_> = [VARIANT, IDENTITY].into_iter().filter(|c| schema.field_by_name(c).is_none()).collect();
        if missing.is_empty() {
            return Ok(());
        }
        let tx = Transaction::new(&table);
        let mut update = tx.update_schema();
        for column in &missing {
            update = update.add_column(AddColumn::optional(*column, Type::Primitive(PrimitiveType::String)));
        }
        let tx = update.apply(tx)?;
        match tx.commit(catalog).await {
            Ok(_) => return Ok(()),
            Err(err) if err.kind() == ErrorKind::CatalogCommitConflicts => {}
            Err(err) => return Err(err).with_context(|| format!("adding the columns {}", missing.join(", "))),
        }
    }
    bail!("adding columns lost the race {ATTEMPTS} times in a row; try again")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A schema of `fields`: name, type, and whether a row must have it.
    pub(crate) fn columns(fields: &[(&str, PrimitiveType, bool)]) -> Schema {
        let fields = fields.iter().enumerate().map(|(i, (name, kind, required))| {
            let id = i as i32 + 1;
            let kind = Type::Primitive(kind.clone());
            if *required { NestedField::required(id, *name, kind) } else { NestedField::optional(id, *name, kind) }
                .into()
        });
        Schema::builder().with_fields(fields.collect::<Vec<_>>()).build().unwrap()
    }

    #[test]
    fn a_schema_is_ours_or_an_older_one_of_ours_or_named_as_another() {
        use PrimitiveType::{Long, String as Text, Timestamptz};
        assert_eq!(schema_problem(&schema().unwrap()).unwrap(), None);
        let old = [("ts", Timestamptz, true), ("bench", Text, true), ("kind", Text, true), ("run_id", Text, false)];
        let old_with_record = [&old[..], &[("record", Text, true)]].concat();
        assert_eq!(schema_problem(&columns(&old_with_record)).unwrap(), None, "evolve adds variant and identity");
        assert_eq!(schema_problem(&columns(&old)).unwrap().unwrap(), "no column `record`");
        let extra = [&old_with_record[..], &[("owner", Text, false)]].concat();
        assert!(schema_problem(&columns(&extra)).unwrap().unwrap().contains("a column `owner`"));
        let retyped = [("ts", Long, true), ("bench", Text, true), ("kind", Text, true), ("record", Text, true)];
        assert_eq!(schema_problem(&columns(&retyped)).unwrap().unwrap(), "column `ts` is long, not timestamptz");
    }
}
