//! `gc`: removes the data files no snapshot references, older than a grace period.
//!
//! A publisher that lost, failed or was killed after writing its Parquet files and before its commit landed
//! leaves them behind (a failed publish deletes its own; a killed one cannot). Every file of the table's data
//! prefix that no manifest of any snapshot names is such an orphan. A publisher still writing has files no
//! snapshot references yet, and a commit may land after `gc` read the table: so only files older than the
//! grace period are removed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use iceberg::spec::{FormatVersion, Manifest, ManifestList};
use iceberg::table::Table;

use crate::location::Location;
use crate::store::Warehouse;

/// What `gc` did.
#[derive(Debug, Default)]
pub struct Collected {
    /// Data files listed under the table's data prefix.
    pub listed: usize,
    /// Data files the snapshots reference.
    pub referenced: usize,
    /// Orphans removed, by path.
    pub removed: Vec<String>,
    /// Orphans younger than the grace period, kept.
    pub young: usize,
}

/// A listed file: its path as manifests write it, and its age.
struct Listed {
    path: String,
    age: Duration,
}

/// Removes the table's orphan data files older than `grace`.
pub async fn gc(warehouse: &Warehouse, grace: Duration) -> Result<Collected> {
    let table = warehouse.table().await?;
    let referenced = referenced(&table).await.context("reading the snapshots' manifests")?;
    let data = format!("{}/data/", table.metadata().location().trim_end_matches('/'));
    let listed = list(warehouse.location(), &data).await.with_context(|| format!("listing {data}"))?;
    let mut collected = Collected { listed: listed.len(), referenced: referenced.len(), ..Collected::default() };
    for file in listed {
        if referenced.contains(&file.path) {
            continue;
        }
        if file.age < grace {
            collected.young += 1;
            continue;
        }
        table.file_io().delete(&file.path).await.with_context(|| format!("removing {}", file.path))?;
        collected.removed.push(file.path);
    }
    Ok(collected)
}

/// Every data file that a manifest of any snapshot names.
async fn referenced(table: &Table) -> Result<HashSet<String>> {
    let (io, metadata) = (table.file_io(), table.metadata());
    let version: FormatVersion = metadata.format_version();
    let (mut manifests, mut files) = (HashSet::new(), HashSet::new());
    for snapshot in metadata.snapshots() {
        let bytes = io.new_input(snapshot.manifest_list())?.read().await?;
        for manifest in ManifestList::parse_with_version(&bytes, version)?.entries() {
            if !manifests.insert(manifest.manifest_path.clone()) {
                continue;
            }
            let manifest: Manifest = manifest.load_manifest(io).await?;
            files.extend(manifest.entries().iter().map(|entry| entry.data_file().file_path().to_string()));
        }
    }
    Ok(files)
}

/// The files under `data` (a table's data prefix, as manifests write paths), with their ages.
async fn list(location: &Location, data: &str) -> Result<Vec<Listed>> {
    let now = SystemTime::now();
    let age = |modified: SystemTime| now.duration_since(modified).unwrap_or_default();
    match location.s3() {
        None => {
            // Manifests name a local file as the table's location does, with or without `file:`.
            let dir = data.strip_prefix("file://").or_else(|| data.strip_prefix("file:")).unwrap_or(data);
            let scheme = &data[..data.len() - dir.len()];
            let mut files = Vec::new();
            walk(Path::new(dir), &mut files)?;
            let mut listed = Vec::new();
            for file in files {
                let modified = file.metadata()?.modified()?;
                listed.push(Listed { path: format!("{scheme}{}", file.display()), age: age(modified) });
            }
            Ok(listed)
        }
        Some(s3) => {
            let root = format!("s3://{}/", s3.bucket);
            let relative = data.strip_prefix(&root).unwrap_or(data);
            let entries = s3.operator()?.list_with(relative).recursive(true).await?;
            Ok(entries
                .into_iter()
                .filter(|entry| entry.metadata().is_file())
                .map(|entry| {
                    let modified = entry.metadata().last_modified().map_or(now, SystemTime::from);
                    Listed { path: format!("{root}{}", entry.path()), age: age(modified) }
                })
                .collect())
        }
    }
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        other => other?,
    };
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() { walk(&path, files)? } else { files.push(path) }
    }
    Ok(())
}
