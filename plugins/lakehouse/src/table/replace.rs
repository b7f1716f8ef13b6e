//! Commits a `replace` snapshot: the rewritten files are marked deleted and the new files added, in one
//! snapshot, with the rows unchanged.
//!
//! Why by hand: iceberg-rust 0.10.1 can only `fast_append` (no rewrite, overwrite or delete action: upstream
//! issue #1607), and appending the merged file would double every row. Its action trait and `TableCommit`
//! builder are crate-private, so this module builds what a rewrite action would — one manifest with the new
//! files ADDED and the old ones DELETED, a manifest list, a `Replace` snapshot with spec-conformant summary
//! totals, and the next metadata file — with the crate's public writers, and installs the metadata through the
//! catalog (drop the pointer, register the new metadata file; files are untouched). pyiceberg, a separate
//! implementation of the spec, reads the result back in `tests/pyiceberg.rs`.
//!
//! The install is not atomic: the memory catalog has no compare-and-swap for a foreign commit. The rigs run one
//! writer per table, so nothing can interleave; a shared catalog would need the upstream action.

use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use iceberg::spec::{
    DataFile, MAIN_BRANCH, ManifestEntryRef, ManifestListWriter, ManifestWriterBuilder, Operation, Snapshot,
    SnapshotSummaryCollector, Summary,
};
use iceberg::table::Table;
use iceberg::{Catalog, Error, ErrorKind, MetadataLocation};

/// The live data-file entries of the table's current snapshot: what a rewrite of the whole table replaces.
pub async fn live_entries(table: &Table) -> iceberg::Result<Vec<ManifestEntryRef>> {
    let Some(snapshot) = table.metadata().current_snapshot() else { return Ok(Vec::new()) };
    let list = table.manifest_list_reader(snapshot).load().await?;
    let mut entries = Vec::new();
    for manifest in list.entries() {
        let manifest = manifest.load_manifest(table.file_io()).await?;
        entries.extend(manifest.entries().iter().filter(|e| e.is_alive()).cloned());
    }
    Ok(entries)
}

/// Replaces `old` (live entries of the current snapshot) with `new` in one snapshot and returns the table at
/// it.
pub async fn commit(
    catalog: &dyn Catalog,
    table: &Table,
    old: &[ManifestEntryRef],
    new: Vec<DataFile>,
) -> iceberg::Result<Table> {
    let metadata = table.metadata();
    let io = table.file_io();
    let parent = metadata
        .current_snapshot()
        .ok_or_else(|| Error::new(ErrorKind::DataInvalid, "a table without a snapshot has nothing to replace"))?;
    let sequence = metadata.next_sequence_number();
    let snapshot_id = new_snapshot_id(table);
    let commit = uuid::Uuid::new_v4();
    let (schema, spec) = (metadata.current_schema().clone(), metadata.default_partition_spec().clone());

    let manifest_path = format!("{}/metadata/{commit}-m0.avro", metadata.location());
    let mut manifest =
        ManifestWriterBuilder::new(io.new_output(manifest_path)?, Some(snapshot_id), schema.clone(), (*spec).clone())
            .build_v2_data();
    let mut summary = SnapshotSummaryCollector::default();
    for file in &new {
        summary.add_file(file, schema.clone(), spec.clone());
        manifest.add_file(file.clone(), sequence)?;
    }
    for entry in old {
        summary.remove_file(entry.data_file(), schema.clone(), spec.clone());
        let sequence = entry.sequence_number().ok_or_else(|| missing("sequence number"))?;
        manifest.add_delete_file(entry.data_file().clone(), sequence, entry.file_sequence_number)?;
    }
    let manifest = manifest.write_manifest_file().await?;

    let list_path = format!("{}/metadata/snap-{snapshot_id}-0-{commit}.avro", metadata.location());
    let mut list = ManifestListWriter::v2(
        io.new_output(&list_path)?.writer().await?,
        snapshot_id,
        Some(parent.snapshot_id()),
        sequence,
    );
    list.add_manifests(std::iter::once(manifest))?;
    list.close().await?;

    let mut properties = summary.build();
    add_totals(&mut properties, &parent.summary().additional_properties);
    let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    let snapshot = Snapshot::builder()
        .with_snapshot_id(snapshot_id)
        .with_parent_snapshot_id(Some(parent.snapshot_id()))
        .with_sequence_number(sequence)
        .with_timestamp_ms(now_ms.max(metadata.last_updated_ms()))
        .with_manifest_list(list_path)
        .with_summary(Summary { operation: Operation::Replace, additional_properties: properties })
        .with_schema_id(metadata.current_schema_id())
        .build();

    let previous = table.metadata_location_result()?.to_string();
    let next = metadata
        .clone()
        .into_builder(Some(previous.clone()))
        .set_branch_snapshot(snapshot, MAIN_BRANCH)?
        .build()?
        .metadata;
    let location = MetadataLocation::from_str(&previous)?.with_next_version().with_new_metadata(&next);
    next.write_to(io, &location).await?;
    catalog.drop_table(table.identifier()).await?;
    catalog.register_table(table.identifier(), location.to_string()).await
}

/// The spec's `total-*` summary fields: the parent's totals plus this snapshot's changes.
fn add_totals(
    properties: &mut std::collections::HashMap<String, String>,
    parent: &std::collections::HashMap<String, String>,
) {
    let number = |map: &std::collections::HashMap<String, String>, key: &str| {
        map.get(key).and_then(|v| v.parse::<i64>().ok()).unwrap_or(0)
    };
    let totals = [
        ("total-data-files", "added-data-files", "deleted-data-files"),
        ("total-records", "added-records", "deleted-records"),
        ("total-files-size", "added-files-size", "removed-files-size"),
    ];
    let computed: Vec<(String, String)> = totals
        .iter()
        .map(|(total, added, removed)| {
            let value = number(parent, total) + number(properties, added) - number(properties, removed);
            (total.to_string(), value.to_string())
        })
        .collect();
    properties.extend(computed);
    for key in ["total-delete-files", "total-position-deletes", "total-equality-deletes"] {
        properties.insert(key.to_string(), number(parent, key).to_string());
    }
}

/// A positive id no snapshot of the table has (the crate's own scheme: a random UUID folded to 63 bits).
fn new_snapshot_id(table: &Table) -> i64 {
    loop {
        let (a, b) = uuid::Uuid::new_v4().as_u64_pair();
        let id = ((a ^ b) as i64) & i64::MAX;
        if table.metadata().snapshot_by_id(id).is_none() {
            return id;
        }
    }
}

fn missing(what: &str) -> Error {
    Error::new(ErrorKind::DataInvalid, format!("a live manifest entry has no {what}"))
}
