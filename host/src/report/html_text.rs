//! The text every part of the HTML report writes the same way: escaped for HTML, a date from a record's time,
//! the provenance line under each chart, and the id of a rig's section.

use std::fmt::Write;

use benchhost_record::Record;

/// `CPU · commit · date`, each distinct value once; past three, how many more.
pub fn provenance(records: &[&Record]) -> String {
    const SHOWN: usize = 3;
    let mut seen: Vec<String> = Vec::new();
    let mut more = std::collections::BTreeSet::new();
    for r in records {
        let date = date(r.run.ts_ms);
        let line = format!("{} · commit {} · {date}", r.run.cpu, r.run.commit.as_deref().unwrap_or("none"));
        if seen.contains(&line) {
            continue;
        }
        if seen.len() < SHOWN {
            seen.push(line);
        } else {
            more.insert(line);
        }
    }
    let mut text = seen.join("; ");
    if !more.is_empty() {
        let _ = write!(text, "; and {} more", more.len());
    }
    text
}

pub use benchhost_record::utc_date as date;

/// The id of a rig's section, which the forest plot's rows link to.
pub fn anchor(bench: &str) -> String {
    let id: String =
        bench.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '-' }).collect();
    format!("rig-{id}")
}

/// `text` escaped for HTML text and attribute values.
pub fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_escaping() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(1_783_679_451_911), "2026-07-10");
        assert_eq!(date(951_782_400_000), "2000-02-29");
        assert_eq!(esc("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
    }
}
