//! A results stream's lines, parsed: each line becomes a record with where it is ([`Entry`]), a skipped line's
//! message, or the error that ends the read ([`parse_line`]). The one parser under every way of reading a
//! stream: [`reader`](crate::reader) (a stream held whole), [`scan`](crate::scan) (a pass in line order) and
//! [`fold`](crate::fold) (a pass in any order).

use anyhow::{Result, bail};

use crate::{Record, SCHEMA};

/// What a pass yields, in line order: a record (as the caller mapped it) or a skipped line's message.
#[derive(Debug)]
pub enum Scanned<T> {
    /// A readable record.
    Record(T),
    /// A skipped line, `FILE:LINE: why`.
    Problem(String),
}

/// One readable record of a stream and where it is: its 1-based line, and the byte offset and length of its
/// JSON text in the file (without the newline), so a tool can read it again without holding it.
#[derive(Debug, Clone)]
pub struct Entry {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the record's text in the file.
    pub offset: u64,
    /// Length of the record's text in bytes.
    pub len: usize,
    /// The record.
    pub record: Record,
}

/// Whole lines of a stream: where they start, and whether they end the file.
pub(crate) struct Block<'a> {
    /// Line number of the first line.
    pub first_line: usize,
    /// Byte offset of the first line in the file.
    pub offset: u64,
    /// The lines, each ended by a newline except perhaps the file's last.
    pub bytes: &'a [u8],
    /// Whether the block ends the file (so a last line without a newline is a torn one).
    pub last: bool,
}

/// One line of a block: its number, where its text starts, its text (without the newline), and whether it is
/// the torn last line of the file.
#[derive(Clone, Copy)]
pub(crate) struct RawLine<'a> {
    pub line: usize,
    pub offset: u64,
    pub raw: &'a [u8],
    pub torn: bool,
}

/// The lines of `block`, in order.
pub(crate) fn raw_lines<'a>(block: &Block<'a>) -> impl Iterator<Item = RawLine<'a>> + use<'a> {
    let (mut offset, mut rest, mut line, last) = (block.offset, block.bytes, block.first_line, block.last);
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (raw, terminated) = match memchr::memchr(b'\n', rest) {
            Some(end) => (&rest[..end], true),
            None => (rest, false),
        };
        let item = RawLine { line, offset, raw, torn: last && !terminated };
        let step = raw.len() + usize::from(terminated);
        rest = &rest[step..];
        offset += step as u64;
        line += 1;
        Some(item)
    })
}

/// Parses the lines of `block` into `out`, in order, each record as `map` makes it; stops at, and returns, a
/// line that ends the read (another schema version, not a benchhost record).
pub(crate) fn parse_block<T>(
    name: &str,
    block: Block<'_>,
    map: &impl Fn(Entry, &str) -> T,
    out: &mut Vec<Scanned<T>>,
) -> Option<anyhow::Error> {
    for line in raw_lines(&block) {
        if let Err(fatal) = parse_line(name, &line, map, out) {
            return Some(fatal);
        }
    }
    None
}

/// The start of every record this build writes: where a complete record glued to a torn one begins.
const RECORD_START: &[u8] = b"{\"schema\":";

/// Parses one line into `out`: a record (as `map` makes it), or the problem that skips it, or the error that
/// ends the read.
pub(crate) fn parse_line<T>(
    name: &str,
    at: &RawLine<'_>,
    map: &impl Fn(Entry, &str) -> T,
    out: &mut Vec<Scanned<T>>,
) -> Result<()> {
    let RawLine { line, offset, raw, torn } = *at;
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    // Text that parses as JSON is UTF-8: `text` is the line's whole text wherever a record is made.
    let text = std::str::from_utf8(raw).unwrap_or_default();
    let entry = |record| Scanned::Record(map(Entry { line, offset, len: raw.len(), record }, text));
    // The common case in one typed parse (of text checked as UTF-8 once, not string by string); everything
    // else takes the path that names what is wrong.
    if let Ok(record) = serde_json::from_str::<Record>(text)
        && record.schema == SCHEMA
    {
        out.push(entry(record));
        return Ok(());
    }
    let value: serde_json::Value = match serde_json::from_slice(raw) {
        Ok(value) => value,
        Err(e) => {
            if let Some(start) = glued_record(raw) {
                let mut recovered = Vec::new();
                let tail = &raw[start..];
                let rest = RawLine { line, offset: offset + start as u64, raw: tail, torn };
                if parse_line(name, &rest, map, &mut recovered).is_ok()
                    && matches!(recovered.as_slice(), [Scanned::Record(_)])
                {
                    out.push(Scanned::Problem(format!(
                        "{name}:{line}: torn record skipped ({start} bytes) before a complete one at column {}; kept that one",
                        start + 1
                    )));
                    out.extend(recovered);
                    return Ok(());
                }
            }
            let what = if torn { "torn last line" } else { "corrupt line" };
            out.push(Scanned::Problem(format!("{name}:{line}: {what} skipped ({} bytes, {e})", raw.len())));
            return Ok(());
        }
    };
    match value.get("schema").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(SCHEMA) => {}
        Some(v) => bail!("{name}:{line}: schema version {v} is not supported (this benchhost reads schema {SCHEMA})"),
        None => bail!("{name}:{line}: not a benchhost record (no numeric `schema` field)"),
    }
    // A schema-1 line this build cannot take (a field of the wrong type, such as the `null` an older
    // benchhost wrote for a NaN ratio) costs that line only: one warning, the rest of the stream is read.
    match serde_json::from_value::<Record>(value) {
        Ok(record) => out.push(entry(record)),
        Err(e) => out.push(Scanned::Problem(format!("{name}:{line}: invalid schema-1 record skipped ({e})"))),
    }
    Ok(())
}

/// Where a later record starts in a line that is not JSON: a writer killed mid-line, then another writer that
/// did not start a fresh line, leave a torn prefix glued to a whole record.
fn glued_record(raw: &[u8]) -> Option<usize> {
    raw.windows(RECORD_START.len()).skip(1).position(|w| w == RECORD_START).map(|i| i + 1)
}
