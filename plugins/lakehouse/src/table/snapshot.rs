//! A seeded table kept and loaded into a new warehouse: the querier and the compaction rig seed their table once
//! (per library and run, or per directory) and every instance (every compaction iteration) gets its own copy of
//! the same bytes, instead of encoding and committing the files again (the querier's 60 files: 1.5 s of its ~2 s
//! set-up; a compaction table on disk: 40 ms of each 46 ms iteration).
//!
//! Iceberg metadata names its files by absolute path, so a kept table can only be placed where it was seeded:
//! - a memory warehouse's paths (`memory://warehouse/...`) are the same in every instance;
//! - a table for a directory is seeded in memory at that directory's path ([`Warehouse::seeding_at`]) and its files
//!   written there: into the kept seed's own `files` ([`place`], read in place by every instance) or, again and
//!   again, into one directory an instance empties between uses ([`Kept::load`] into a directory warehouse).

use std::path::{Path, PathBuf};

use benchhost_plugin_api::RigError;
use bytes::Bytes;
use iceberg::io::Storage;
use iceberg::table::Table;
use iceberg::{Catalog, TableIdent};

use crate::table::warehouse::Warehouse;

/// The file naming the table's current metadata; the warehouse's files are under [`FILES`].
const POINTER: &str = "metadata-location";
const FILES: &str = "files";

/// Writes every file of `warehouse` under `dir` (by its path below the warehouse's location) and the location of
/// `table`'s current metadata.
pub async fn keep(warehouse: &Warehouse, table: &Table, dir: &Path) -> Result<(), RigError> {
    Kept::of(warehouse, table).await?.write(dir)
}

/// Where the files of a table kept in `dir` are placed: a table seeded with [`Warehouse::seeding_at`] this path and
/// kept in `dir` is there, whole, on disk.
pub fn place(dir: &Path) -> PathBuf {
    dir.join(FILES)
}

/// Registers the table kept in `dir` as table `name` of `warehouse`, a directory warehouse at [`place`]`(dir)`:
/// its files are read where they lie.
pub async fn register_in_place(warehouse: &Warehouse, dir: &Path, name: &str) -> Result<TableIdent, RigError> {
    let pointer = std::fs::read_to_string(dir.join(POINTER))?;
    let ident = warehouse.ident(name);
    warehouse.catalog.register_table(&ident, pointer).await?;
    warehouse.io.take();
    Ok(ident)
}

/// A kept seed, read into memory: its files by path below the warehouse's location, and its metadata file.
pub struct Kept {
    files: Vec<(String, Bytes)>,
    pointer: String,
}

impl Kept {
    /// Every file of `warehouse` (a seeding one: it recorded what it wrote) and `table`'s current metadata.
    pub async fn of(warehouse: &Warehouse, table: &Table) -> Result<Kept, RigError> {
        let mut files = Vec::new();
        for path in warehouse.io.written() {
            if warehouse.storage.exists(&path).await? {
                let below = relative(warehouse, &path)?.to_string();
                files.push((below, warehouse.storage.read(&path).await?));
            }
        }
        let pointer =
            table.metadata_location().ok_or_else(|| RigError::new("the seeded table has no metadata file"))?;
        relative(warehouse, pointer)?;
        Ok(Kept { files, pointer: pointer.to_string() })
    }

    /// Writes the files under `dir` (by their paths below the warehouse's location) and the metadata's location.
    fn write(&self, dir: &Path) -> Result<(), RigError> {
        for (below, bytes) in &self.files {
            let file = place(dir).join(below);
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&file, bytes)?;
        }
        std::fs::write(dir.join(POINTER), &self.pointer)?;
        Ok(())
    }

    /// Reads the seed kept in `dir`.
    pub fn read(dir: &Path) -> Result<Kept, RigError> {
        let root = place(dir);
        let mut files = Vec::new();
        for file in files_under(&root)? {
            let below = file.strip_prefix(&root).map_err(|e| RigError::new(format!("{}: {e}", file.display())))?;
            files.push((below.display().to_string(), Bytes::from(std::fs::read(&file)?)));
        }
        let pointer = std::fs::read_to_string(dir.join(POINTER))?;
        Ok(Kept { files, pointer })
    }

    /// Writes a copy of every file into `warehouse` (a new one, at the location the seed was kept from: bytes of
    /// its own, shared with no other table; a directory warehouse's, files on disk) and registers them as table
    /// `name`.
    pub async fn load(&self, warehouse: &Warehouse, name: &str) -> Result<TableIdent, RigError> {
        for (below, bytes) in &self.files {
            let path = format!("{}/{below}", warehouse.location);
            warehouse.storage.write(&path, Bytes::copy_from_slice(bytes)).await?;
        }
        let ident = warehouse.ident(name);
        warehouse.catalog.register_table(&ident, self.pointer.clone()).await?;
        warehouse.io.take();
        Ok(ident)
    }
}

/// `path` below the warehouse's location, refused if it is elsewhere (or climbs out).
fn relative<'a>(warehouse: &Warehouse, path: &'a str) -> Result<&'a str, RigError> {
    path.strip_prefix(&warehouse.location)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|rest| !rest.split('/').any(|part| part.is_empty() || part == ".." || part == "."))
        .ok_or_else(|| RigError::new(format!("{path} is not a file of the warehouse at {}", warehouse.location)))
}

/// Every file below `dir`, sorted.
fn files_under(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(files_under(&path)?);
        } else {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}
