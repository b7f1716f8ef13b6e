//! The two cache tiers of seed 001. The object tier keeps a response's IPC bytes under its exact statement and
//! serves them verbatim. The delta tier keeps the dataset behind a statement template (the statement with its
//! time range taken out) as one time-ordered series per host, and serves any window inside the extent it
//! holds by cropping the series and rebuilding Arrow batches to the response's original schema.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::Float64Array;
use arrow::array::{ArrayRef, RecordBatch, StringBuilder, StringViewBuilder, TimestampNanosecondArray};
use arrow::datatypes::{DataType, SchemaRef, TimeUnit};
use arrow::error::ArrowError;

use crate::data::{self, Window};

/// Response bytes by exact statement.
#[derive(Default)]
pub struct ObjectTier {
    entries: HashMap<String, Vec<u8>>,
}

impl ObjectTier {
    /// The stored bytes of `statement`.
    pub fn get(&self, statement: &str) -> Option<&[u8]> {
        self.entries.get(statement).map(Vec::as_slice)
    }
    /// Stores `bytes` as the answer to `statement`.
    pub fn put(&mut self, statement: &str, bytes: Vec<u8>) {
        self.entries.insert(statement.to_string(), bytes);
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
    /// The dataset of `template` if it covers `window`.
    pub fn get(&self, template: &str, window: Window) -> Option<&Dataset> {
        self.entries.get(template).filter(|d| d.extent.covers(window))
    }
    /// Stores the upstream's answer for `extent` (an IPC stream) as the dataset of `template`, replacing
    /// what was there. (Merging a fetched sub-range into a partly covering dataset is Trickster's next step;
    /// no arm exercises it, so it is not built.)
    pub fn put(&mut self, template: &str, extent: Window, answer: &[u8]) -> Result<&Dataset, ArrowError> {
        let dataset = Dataset::from_answer(extent, answer)?;
        self.entries.insert(template.to_string(), dataset);
        Ok(&self.entries[template])
    }
    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

/// One host's points, in time order.
struct Series {
    host: String,
    times: Vec<i64>,
    values: Vec<f64>,
}

/// What the delta tier holds for one template.
pub struct Dataset {
    extent: Window,
    schema: SchemaRef,
    /// Sorted by host, so that a merge by time yields the answer's (time, host) order.
    series: Vec<Series>,
}

impl Dataset {
    fn from_answer(extent: Window, answer: &[u8]) -> Result<Self, ArrowError> {
        let (schema, batches) = data::decode(answer)?;
        let rows = data::rows(&batches).map_err(ArrowError::InvalidArgumentError)?;
        let mut series: Vec<Series> = Vec::new();
        for row in rows {
            let index = match series.iter().position(|s| s.host == row.host) {
                Some(index) => index,
                None => {
                    series.push(Series { host: row.host.clone(), times: Vec::new(), values: Vec::new() });
                    series.len() - 1
                }
            };
            series[index].times.push(row.time);
            series[index].values.push(row.v);
        }
        series.sort_by(|a, b| a.host.cmp(&b.host));
        Ok(Dataset { extent, schema, series })
    }

    /// The rows inside `window` as one record batch of the original schema, in (time, host) order.
    pub fn rebuild(&self, window: Window) -> Result<RecordBatch, ArrowError> {
        let crops: Vec<(&[i64], &[f64])> = self
            .series
            .iter()
            .map(|s| {
                let from = s.times.partition_point(|&t| t < window.start);
                let to = s.times.partition_point(|&t| t < window.end);
                (&s.times[from..to], &s.values[from..to])
            })
            .collect();
        let rows: usize = crops.iter().map(|(t, _)| t.len()).sum();
        let mut times = Vec::with_capacity(rows);
        let mut values = Vec::with_capacity(rows);
        let mut hosts = Vec::with_capacity(rows);
        let mut cursors = vec![0usize; crops.len()];
        for _ in 0..rows {
            // The series whose next point is earliest; ties go to the lower host, which comes first.
            let mut pick = usize::MAX;
            for (i, (t, _)) in crops.iter().enumerate() {
                if cursors[i] < t.len() && (pick == usize::MAX || t[cursors[i]] < crops[pick].0[cursors[pick]]) {
                    pick = i;
                }
            }
            times.push(crops[pick].0[cursors[pick]]);
            values.push(crops[pick].1[cursors[pick]]);
            hosts.push(pick);
            cursors[pick] += 1;
        }
        let columns = self
            .schema
            .fields()
            .iter()
            .map(|field| match (field.name().as_str(), field.data_type()) {
                ("time", DataType::Timestamp(TimeUnit::Nanosecond, zone)) => Ok(Arc::new(
                    TimestampNanosecondArray::from(std::mem::take(&mut times)).with_timezone_opt(zone.clone()),
                ) as ArrayRef),
                ("host", DataType::Utf8) => {
                    let bytes = hosts.iter().map(|&i| self.series[i].host.len()).sum();
                    let mut builder = StringBuilder::with_capacity(rows, bytes);
                    hosts.iter().for_each(|&i| builder.append_value(&self.series[i].host));
                    Ok(Arc::new(builder.finish()) as ArrayRef)
                }
                ("host", DataType::Utf8View) => {
                    let mut builder = StringViewBuilder::with_capacity(rows);
                    hosts.iter().for_each(|&i| builder.append_value(&self.series[i].host));
                    Ok(Arc::new(builder.finish()) as ArrayRef)
                }
                ("v", DataType::Float64) => Ok(Arc::new(Float64Array::from(std::mem::take(&mut values))) as ArrayRef),
                (name, kind) => Err(ArrowError::SchemaError(format!(
                    "the delta tier cannot rebuild column `{name}` of type {kind}"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        RecordBatch::try_new(self.schema.clone(), columns)
    }

    /// The schema answers of this dataset have.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }
}
