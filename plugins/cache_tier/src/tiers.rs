//! The two cache tiers of seed 001. The object tier keeps a response's Flight data (the IPC messages a `DoGet`
//! streams) under its exact statement and streams them verbatim. The delta tier keeps the dataset behind a
//! statement template and serves any window inside the extent it holds.

use std::collections::HashMap;

use arrow_flight::FlightData;

use crate::data::Window;
use crate::dataset::Dataset;

/// Response messages by exact statement.
#[derive(Default)]
pub struct ObjectTier {
    entries: HashMap<String, Vec<FlightData>>,
}

impl ObjectTier {
    /// The stored messages of `statement`: a copy of the list, sharing the messages' bytes.
    pub fn get(&self, statement: &str) -> Option<Vec<FlightData>> {
        self.entries.get(statement).cloned()
    }
    /// Stores `messages` as the answer to `statement`.
    pub fn put(&mut self, statement: &str, messages: Vec<FlightData>) {
        self.entries.insert(statement.to_string(), messages);
    }
    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

/// Datasets by statement template.
#[derive(Default)]
pub struct DeltaTier {
    entries: HashMap<String, Dataset>,
}

impl DeltaTier {
    /// The points of `window`, if the dataset of `template` holds them all.
    pub fn crop(&self, template: &str, window: Window) -> Option<Dataset> {
        self.entries.get(template).filter(|d| d.covers(window)).map(|d| d.crop(window))
    }
    /// Stores `dataset` as the dataset of `template`, replacing what was there. (Merging a fetched sub-range
    /// into a partly covering dataset is Trickster's next step; no arm exercises it, so it is not built.)
    pub fn put(&mut self, template: &str, dataset: Dataset) {
        self.entries.insert(template.to_string(), dataset);
    }
    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}
