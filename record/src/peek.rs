//! What the history readers take of a line without parsing the rest of it (the per-sample statistics, logs and
//! stacks are only skipped over). One struct for every reader, so a report that needs both the newest records
//! and every value of every series parses each line once.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::lines::RawLine;
use crate::{Conditions, Kind, SCHEMA};

/// The fields of a record that place it in a history and give its values; a field every record has is
/// required here too, so a line without it is parsed whole and named as the full parse names it.
#[derive(serde::Deserialize)]
pub(crate) struct Peek<'a> {
    schema: u32,
    #[serde(borrow)]
    pub bench: Cow<'a, str>,
    pub kind: Kind,
    #[serde(borrow)]
    pub run: PeekRun<'a>,
    #[serde(default)]
    pub variant: BTreeMap<String, serde_json::Value>,
    #[serde(default, borrow)]
    pub metrics: BTreeMap<Cow<'a, str>, PeekMetric>,
    #[serde(default)]
    pub verdict: Option<PeekVerdict>,
    #[serde(default)]
    pub cell: Option<PeekCell>,
}

#[derive(serde::Deserialize)]
pub(crate) struct PeekRun<'a> {
    pub ts_ms: u64,
    #[serde(default, borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub commit: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub host: Cow<'a, str>,
    #[serde(borrow)]
    pub cpu: Cow<'a, str>,
    #[serde(borrow)]
    pub profile: Cow<'a, str>,
}

#[derive(serde::Deserialize)]
pub(crate) struct PeekMetric {
    pub value: f64,
    pub higher_is_better: bool,
    #[serde(default)]
    pub ci95: Option<[f64; 2]>,
}

#[derive(serde::Deserialize)]
pub(crate) struct PeekVerdict {
    #[serde(default)]
    pub metric: Option<String>,
}

#[derive(serde::Deserialize)]
pub(crate) struct PeekCell {
    #[serde(default)]
    pub conditions: Option<Conditions>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub rounds: Option<u32>,
}

impl<'a> Peek<'a> {
    /// The line's peek and its text, or `None` when it must be parsed whole (not UTF-8, not a record of this
    /// schema, or not readable so): the full parse then says what is wrong with it.
    pub fn of(line: &'a RawLine<'_>) -> Option<(Peek<'a>, &'a str)> {
        let text = std::str::from_utf8(line.raw).ok()?;
        let peek = serde_json::from_str::<Peek>(text).ok()?;
        (peek.schema == SCHEMA).then_some((peek, text))
    }

    /// The variant as canonical JSON (keys sorted).
    pub fn variant_json(&self) -> String {
        serde_json::to_string(&self.variant).expect("variants serialize")
    }

    /// How the record was measured (`crate::method`).
    pub fn method(&self) -> String {
        let cell = self.cell.as_ref();
        crate::series::method_of(self.kind, cell.and_then(|c| c.method.as_deref()), cell.and_then(|c| c.rounds))
    }
}
