//! The outputs that hold every record (`report --format json|csv`, `show --all`), written as the stream is
//! read: memory is bounded by what one row needs, not by the stream.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde_json::Value;

use crate::report::{self, export};
use benchhost_record::scan::{self, Scanned};
use benchhost_record::{Kind, Record, reader};

/// Where a streamed output goes: stdout, or a file written under a temporary name beside it and renamed
/// once whole, so a failed report never leaves a partial file behind.
pub(crate) struct Output {
    writer: BufWriter<Box<dyn Write>>,
    file: Option<(tempfile::TempPath, PathBuf)>,
}

impl Output {
    /// `path`, or stdout.
    pub(crate) fn to(path: Option<&Path>) -> Result<Output> {
        let Some(path) = path else {
            return Ok(Output { writer: BufWriter::with_capacity(1 << 16, Box::new(std::io::stdout())), file: None });
        };
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let temp = tempfile::NamedTempFile::new_in(dir).with_context(|| format!("writing {}", path.display()))?;
        let (file, temp) = temp.into_parts();
        Ok(Output { writer: BufWriter::with_capacity(1 << 16, Box::new(file)), file: Some((temp, path.to_owned())) })
    }

    /// Flushes, and puts a file in its place.
    pub(crate) fn finish(mut self) -> Result<()> {
        self.writer.flush()?;
        if let Some((temp, path)) = self.file {
            // A temporary file is private (0600); the report gets the mode a plain write would give it.
            let mode = 0o666 & !umask();
            std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(mode))
                .with_context(|| format!("writing {}", path.display()))?;
            temp.persist(&path).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    }
}

/// The process's file mode creation mask (from /proc, which reads it without changing it; 022 if unreadable).
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mask = status.lines().find_map(|l| l.strip_prefix("Umask:")).map(str::trim);
    mask.and_then(|m| u32::from_str_radix(m, 8).ok()).unwrap_or(0o022)
}

impl Write for Output {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.writer.write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.writer.flush()
    }
}

/// One pass over `file` with `map` on the workers and `each` in line order: as every command reads (skipped
/// lines reported, a file without a readable record an error), or for a second pass, silently.
fn each_record<T: Send>(
    file: &Path,
    map: impl Fn(Record) -> T + Sync,
    mut each: impl FnMut(T) -> Result<()>,
    first_pass: bool,
) -> Result<()> {
    if first_pass {
        return scan::each_record(file, |entry| map(entry.record), each);
    }
    scan::scan(
        file,
        |entry| map(entry.record),
        |item| match item {
            Scanned::Record(mapped) => each(mapped),
            Scanned::Problem(_) => Ok(()),
        },
    )
}

/// `report --format json`: every record, one JSON array, as [`export::json`] writes it.
pub(crate) fn json(files: &[PathBuf], out: &mut Output) -> Result<()> {
    let mut first = true;
    for file in files {
        each_record(
            file,
            |record| export::json_element(&record),
            |text| {
                out.write_all(if first { b"[\n" } else { b",\n" })?;
                first = false;
                Ok(out.write_all(text.as_bytes())?)
            },
            true,
        )?;
    }
    out.write_all(b"\n]")?;
    Ok(())
}

/// `report --format csv`, as [`export::csv`] writes it: oldest run first (a stable order for equal times).
/// Streams already in time order are written in a second pass; others are sorted by (time, place), and each
/// record read again from its place.
pub(crate) fn csv(files: &[PathBuf], out: &mut Output) -> Result<()> {
    let mut places: Vec<(u64, u32, u64, u32)> = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let map = |entry: reader::Entry| {
            matches!(entry.record.kind, Kind::Measurement | Kind::Failure).then_some((
                entry.record.run.ts_ms,
                entry.offset,
                entry.len as u32,
            ))
        };
        scan::each_record(file, map, |place| {
            places.extend(place.map(|(ts, offset, len)| (ts, index as u32, offset, len)));
            Ok(())
        })?;
    }
    out.write_all(export::CSV_HEADER.as_bytes())?;
    if places.is_sorted_by_key(|p| p.0) {
        for file in files {
            each_record(file, |record| export::csv_rows(&record), |rows| Ok(out.write_all(rows.as_bytes())?), false)?;
        }
        return Ok(());
    }
    places.sort_by_key(|p| p.0);
    let opened: Vec<File> = files
        .iter()
        .map(|f| File::open(f).with_context(|| format!("reading {}", f.display())))
        .collect::<Result<_>>()?;
    let mut bytes = Vec::new();
    for (_, index, offset, len) in places {
        bytes.resize(len as usize, 0);
        let file = &files[index as usize];
        opened[index as usize]
            .read_exact_at(&mut bytes, offset)
            .with_context(|| format!("reading {}", file.display()))?;
        let record: Record =
            serde_json::from_slice(&bytes).with_context(|| format!("{} changed while it was read", file.display()))?;
        out.write_all(export::csv_rows(&record).as_bytes())?;
    }
    Ok(())
}

/// Rows of `show --all` per table: each block is drawn on its own, so memory stays bounded.
const BLOCK_ROWS: usize = 1000;

/// `show --all`: every record, one row each, named as [`report::records_table`] names them (of each rig, the
/// variant keys that differ between its records). Two passes: the first finds those keys.
pub(crate) fn show_all(files: &[PathBuf], out: &mut Output) -> Result<()> {
    let mut rigs: BTreeMap<String, (BTreeMap<String, Value>, BTreeSet<String>)> = BTreeMap::new();
    for file in files {
        each_record(
            file,
            |record| (record.bench, record.variant),
            |(bench, variant)| {
                match rigs.get_mut(&bench) {
                    None => {
                        rigs.insert(bench, (variant, BTreeSet::new()));
                    }
                    Some((first, varying)) => {
                        let keys = first.keys().chain(variant.keys());
                        let differ: Vec<String> = keys.filter(|k| first.get(*k) != variant.get(*k)).cloned().collect();
                        varying.extend(differ);
                    }
                }
                Ok(())
            },
            true,
        )?;
    }
    let mut rows = Vec::with_capacity(BLOCK_ROWS);
    let mut number = 0;
    let draw = |rows: &mut Vec<[String; 4]>, out: &mut Output, first: bool| -> Result<()> {
        let mut table = Table::new();
        table.load_style(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
        if first {
            table.set_header(["#", "bench", "variant", "result"]);
        }
        for row in rows.drain(..) {
            table.add_row(row);
        }
        Ok(writeln!(out, "{table}")?)
    };
    let mut first = true;
    for file in files {
        let map = |record: Record| {
            let (fixed, varying) = &rigs[&record.bench];
            [record.bench.clone(), shown_variant(&record.variant, fixed, varying), report::result(&record)]
        };
        each_record(
            file,
            map,
            |[bench, variant, result]| {
                number += 1;
                rows.push([number.to_string(), bench, variant, result]);
                if rows.len() == BLOCK_ROWS {
                    draw(&mut rows, out, first)?;
                    first = false;
                }
                Ok(())
            },
            false,
        )?;
    }
    if !rows.is_empty() {
        draw(&mut rows, out, first)?;
    }
    Ok(())
}

/// A record's variant as [`report::records_table`] shows it: the `varying` keys of its rig, or when none
/// varies, every key of the rig's `first` variant.
fn shown_variant(
    variant: &BTreeMap<String, Value>,
    first: &BTreeMap<String, Value>,
    varying: &BTreeSet<String>,
) -> String {
    let pair = |(k, v): (&String, &Value)| format!("{k}={}", report::format::plain(v));
    let name: Vec<String> = variant.iter().filter(|(k, _)| varying.contains(*k)).map(pair).collect();
    if name.is_empty() {
        return first.iter().filter(|(k, _)| !varying.contains(*k)).map(pair).collect::<Vec<_>>().join(" ");
    }
    name.join("/").replace('/', " ")
}
