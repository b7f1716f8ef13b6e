//! The querier service's metrics: gauge points in seed 000's `metrics_gauge` table, as its writer appends them.
//! Four services x three hosts x five metrics make 60 series (a series: the metric's name, `service_name` and the
//! `host` attribute); each has a point every 15 s over two hours from [`DAY0_US`], 28,800 rows. Values are whole
//! and half numbers below 128, so any sum of a few of them is exact in `f64` and an average has one right answer
//! whatever the order it was summed in: a PromQL answer is checked for equality, not within a tolerance.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, Date32Array, Float64Array, Int32Array, RecordBatch, StringArray, TimestampNanosecondArray, new_null_array,
};
use benchhost_plugin_api::RigError;
use iceberg::Catalog;
use iceberg::table::Table;

use crate::table::corpus::DAY0_US;
use crate::table::gauge;
use crate::table::tenant::Tenant;
use crate::table::warehouse::Warehouse;

pub const SERVICES: usize = 4;
pub const HOSTS: usize = 3;
pub const METRICS: usize = 5;
/// Seconds between a series' points, and points per series.
pub const INTERVAL_S: i64 = 15;
pub const POINTS: usize = 480;

/// One gauge point.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub timestamp_us: i64,
    pub metric: String,
    pub service: String,
    pub host: String,
    pub value: f64,
}

/// Every point, series by series.
pub fn points() -> Vec<Point> {
    let mut all = Vec::with_capacity(SERVICES * HOSTS * METRICS * POINTS);
    for s in 0..SERVICES {
        for h in 0..HOSTS {
            for m in 0..METRICS {
                for k in 0..POINTS {
                    all.push(Point {
                        timestamp_us: DAY0_US + k as i64 * INTERVAL_S * 1_000_000,
                        metric: format!("benchmark_metric_{m}"),
                        service: format!("service-{s}"),
                        host: format!("host-{h}"),
                        value: ((k * 7 + s * 13 + h * 5 + m * 3) % 101) as f64 + 0.5 * h as f64,
                    });
                }
            }
        }
    }
    all
}

/// The points as the writer's input (seed 000's 19 columns, attributes as JSON text, times in nanoseconds).
fn input(points: &[Point]) -> Result<RecordBatch, RigError> {
    let n = points.len();
    let schema = gauge::input_schema();
    let null = |i: usize| new_null_array(schema.field(i).data_type(), n);
    let same = |text: &str| Arc::new(StringArray::from_iter_values((0..n).map(|_| text))) as ArrayRef;
    let hour_of_day = |p: &Point| (p.timestamp_us.rem_euclid(86_400_000_000) / 3_600_000_000) as i32;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampNanosecondArray::from_iter_values(points.iter().map(|p| p.timestamp_us * 1_000))),
        null(1),
        Arc::new(StringArray::from_iter_values(points.iter().map(|p| p.service.as_str()))),
        Arc::new(StringArray::from_iter_values(points.iter().map(|p| p.metric.as_str()))),
        same("Benchmark metric for the querier service"),
        same("count"),
        Arc::new(Float64Array::from_iter_values(points.iter().map(|p| p.value))),
        null(7),
        null(8),
        same(r#"{"service.version":"1.0"}"#),
        null(10),
        null(11),
        null(12),
        null(13),
        null(14),
        Arc::new(StringArray::from_iter_values(points.iter().map(|p| format!(r#"{{"host":"{}"}}"#, p.host)))),
        null(16),
        Arc::new(Date32Array::from_iter_values(
            points.iter().map(|p| p.timestamp_us.div_euclid(86_400_000_000) as i32),
        )),
        Arc::new(Int32Array::from_iter_values(points.iter().map(hour_of_day))),
    ];
    Ok(RecordBatch::try_new(schema, columns)?)
}

/// Creates `metrics_gauge` in `warehouse` and appends [`points`] in one commit, as the writer rig's tenant does.
/// Returns the table as committed.
pub async fn seed(warehouse: Warehouse) -> Result<(Warehouse, Table), RigError> {
    let tenant = Tenant::create_in(warehouse, None).await?;
    tenant.append(&[input(&points())?], "metrics".to_string()).await?;
    let table = tenant.warehouse.catalog.load_table(tenant.table.identifier()).await?;
    Ok((tenant.warehouse, table))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixty_series_of_points_fifteen_seconds_apart_whose_values_sum_exactly() {
        let all = points();
        assert_eq!(all.len(), 60 * POINTS);
        let series: std::collections::HashSet<_> = all.iter().map(|p| (&p.metric, &p.service, &p.host)).collect();
        assert_eq!(series.len(), 60);
        assert!(all.iter().all(|p| p.value >= 0.0 && p.value < 128.0 && (p.value * 2.0).fract() == 0.0));
        assert_eq!(input(&all[..10]).unwrap().num_rows(), 10);
    }
}
