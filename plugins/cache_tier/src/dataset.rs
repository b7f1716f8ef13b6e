//! The delta tier's time-series dataset, shaped as Trickster's (`pkg/timeseries/dataset`): series keyed by
//! their tag values, each a time-ordered list of points, each point an epoch and its field values as dynamic
//! scalars. A hit crops a copy of the dataset to the request's window, as Trickster crops the dataset it read
//! from the cache, and rebuilds Arrow record batches of the response's original schema from the points: the
//! per-row work seed 001 prices at ~200 ns and ~650 bytes a row.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, TimestampNanosecondArray};
use arrow::datatypes::{DataType, SchemaRef, TimeUnit};
use arrow::error::ArrowError;
use datafusion::scalar::ScalarValue;

use crate::data::Window;

/// One point: an epoch in nanoseconds and the values of the field columns.
#[derive(Clone)]
struct Point {
    epoch: i64,
    values: Vec<ScalarValue>,
}

/// One series: the values of the tag columns, and its points in time order.
#[derive(Clone)]
struct Series {
    tags: Vec<ScalarValue>,
    points: Vec<Point>,
}

/// Which column of the response is the time, which are tags (strings: the series' identity) and which are
/// fields (the values).
#[derive(Clone)]
enum Column {
    Time,
    Tag(usize),
    Field(usize),
}

/// What the delta tier holds for one template.
#[derive(Clone)]
pub struct Dataset {
    extent: Window,
    schema: SchemaRef,
    columns: Vec<Column>,
    /// In tag order, so that a merge by time yields the answer's (time, tags) order.
    series: Vec<Series>,
}

impl Dataset {
    /// The dataset of an answer over `extent`: one series per distinct tag values.
    pub fn from_answer(extent: Window, schema: SchemaRef, batches: &[RecordBatch]) -> Result<Self, ArrowError> {
        let columns = layout(&schema)?;
        let time = schema.index_of("time")?;
        let mut index: HashMap<Vec<ScalarValue>, usize> = HashMap::new();
        let mut series: Vec<Series> = Vec::new();
        for batch in batches {
            let times =
                batch.column(time).as_any().downcast_ref::<TimestampNanosecondArray>().ok_or_else(|| {
                    ArrowError::SchemaError("the delta tier's `time` column is not ts[ns]".to_string())
                })?;
            for row in 0..batch.num_rows() {
                let mut tags = Vec::new();
                let mut values = Vec::new();
                for (i, column) in columns.iter().enumerate() {
                    match column {
                        Column::Time => {}
                        Column::Tag(_) => tags.push(scalar(batch.column(i), row)?),
                        Column::Field(_) => values.push(scalar(batch.column(i), row)?),
                    }
                }
                let at = *index.entry(tags.clone()).or_insert_with(|| {
                    series.push(Series { tags, points: Vec::new() });
                    series.len() - 1
                });
                series[at].points.push(Point { epoch: times.value(row), values });
            }
        }
        series.iter_mut().for_each(|s| s.points.sort_by_key(|p| p.epoch));
        series.sort_by(|a, b| a.tags.partial_cmp(&b.tags).unwrap_or(std::cmp::Ordering::Equal));
        Ok(Dataset { extent, schema, columns, series })
    }

    /// Whether this dataset holds every point of `window`.
    pub fn covers(&self, window: Window) -> bool {
        self.extent.covers(window)
    }

    /// A copy holding the points inside `window` only.
    pub fn crop(&self, window: Window) -> Dataset {
        let series = self
            .series
            .iter()
            .map(|s| {
                let from = s.points.partition_point(|p| p.epoch < window.start);
                let to = s.points.partition_point(|p| p.epoch < window.end);
                Series { tags: s.tags.clone(), points: s.points[from..to].to_vec() }
            })
            .collect();
        Dataset { extent: window, schema: self.schema.clone(), columns: self.columns.clone(), series }
    }

    /// Every point as one record batch of the original schema, in (time, tags) order.
    pub fn to_batch(&self) -> Result<RecordBatch, ArrowError> {
        let rows: usize = self.series.iter().map(|s| s.points.len()).sum();
        let mut order: Vec<(usize, usize)> = Vec::with_capacity(rows);
        let mut cursors = vec![0usize; self.series.len()];
        for _ in 0..rows {
            // The series whose next point is earliest; ties go to the series that comes first.
            let next = |s: usize| self.series[s].points.get(cursors[s]).map(|p| p.epoch);
            let pick = (0..self.series.len())
                .filter(|&s| next(s).is_some())
                .min_by_key(|&s| next(s))
                .expect("a point is left while rows remain");
            order.push((pick, cursors[pick]));
            cursors[pick] += 1;
        }
        let point = |&(s, p): &(usize, usize)| &self.series[s].points[p];
        let columns = self
            .schema
            .fields()
            .iter()
            .zip(&self.columns)
            .map(|(field, column)| match column {
                Column::Time => {
                    let DataType::Timestamp(_, zone) = field.data_type() else { unreachable!("checked by layout") };
                    let epochs: Vec<i64> = order.iter().map(|at| point(at).epoch).collect();
                    Ok(Arc::new(TimestampNanosecondArray::from(epochs).with_timezone_opt(zone.clone())) as ArrayRef)
                }
                Column::Tag(t) => {
                    ScalarValue::iter_to_array(order.iter().map(|&(s, _)| self.series[s].tags[*t].clone()))
                }
                Column::Field(f) => ScalarValue::iter_to_array(order.iter().map(|at| point(at).values[*f].clone())),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ArrowError::ComputeError(format!("rebuilding the delta response: {e}")))?;
        RecordBatch::try_new(self.schema.clone(), columns)
    }

    /// The schema answers of this dataset have.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }
}

fn layout(schema: &SchemaRef) -> Result<Vec<Column>, ArrowError> {
    let (mut tags, mut fields) = (0, 0);
    schema
        .fields()
        .iter()
        .map(|field| match (field.name().as_str(), field.data_type()) {
            ("time", DataType::Timestamp(TimeUnit::Nanosecond, _)) => Ok(Column::Time),
            ("time", other) => {
                Err(ArrowError::SchemaError(format!("the delta tier needs `time` as ts[ns], not {other}")))
            }
            (_, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8) => {
                tags += 1;
                Ok(Column::Tag(tags - 1))
            }
            _ => {
                fields += 1;
                Ok(Column::Field(fields - 1))
            }
        })
        .collect()
}

fn scalar(array: &ArrayRef, row: usize) -> Result<ScalarValue, ArrowError> {
    ScalarValue::try_from_array(array, row).map_err(|e| ArrowError::ComputeError(e.to_string()))
}
