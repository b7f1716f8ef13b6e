//! PromQL range queries of the form the seed times, `avg by (service_name) (benchmark_metric_2)`: an aggregation
//! (`avg`, `sum`, `min`, `max`, `count`) by some labels of one metric selector with equality matchers. Parsed by
//! GreptimeDB's `promql-parser`; evaluated as one DataFusion plan over `metrics_gauge` in which each step has its
//! window: every step `t` of the range joins the samples in `(t - 5 min, t]`, each series keeps its latest
//! sample there (Prometheus' instant-vector lookback), and the aggregation runs per step over the kept ones.
//!
//! A label is a column (`service_name`) or a key of the `attributes` map (`host`). A series is the metric, the
//! service and the attributes map. What the plan cannot answer faithfully (regular-expression matchers,
//! `without`, offsets, `@`, functions, binary operators) is refused, naming what was found.

use promql_parser::label::MatchOp;
use promql_parser::parser::{Expr, LabelModifier};

/// Prometheus' default lookback: a series' latest sample counts at a step if it is at most this old.
pub const LOOKBACK_US: i64 = 300_000_000;

/// The aggregations a range query may apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregation {
    Avg,
    Sum,
    Min,
    Max,
    Count,
}

/// A parsed range query: `op by (by...) (metric{matchers...})`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeQuery {
    pub op: Aggregation,
    pub by: Vec<String>,
    pub metric: String,
    pub matchers: Vec<(String, String)>,
}

/// Parses `query`, or says why the service cannot answer it.
pub fn parse(query: &str) -> Result<RangeQuery, String> {
    let refuse = |what: &str| Err(format!("`{query}`: {what}"));
    let expr = promql_parser::parser::parse(query).map_err(|e| format!("`{query}` does not parse as PromQL: {e}"))?;
    let Expr::Aggregate(aggregate) = expr else {
        return refuse("only an aggregation of one metric is supported, as `avg by (service_name) (metric)`");
    };
    let op = match aggregate.op.to_string().as_str() {
        "avg" => Aggregation::Avg,
        "sum" => Aggregation::Sum,
        "min" => Aggregation::Min,
        "max" => Aggregation::Max,
        "count" => Aggregation::Count,
        other => return refuse(&format!("the aggregation `{other}` is not supported")),
    };
    let by = match aggregate.modifier {
        None => Vec::new(),
        Some(LabelModifier::Include(labels)) => labels.labels,
        Some(LabelModifier::Exclude(_)) => return refuse("`without` is not supported (only `by`)"),
    };
    let Expr::VectorSelector(selector) = *aggregate.expr else {
        return refuse("the aggregation's argument is not a metric selector");
    };
    if selector.offset.is_some() || selector.at.is_some() {
        return refuse("`offset` and `@` are not supported");
    }
    if !selector.matchers.or_matchers.is_empty() {
        return refuse("`or` matchers are not supported");
    }
    let mut metric = selector.name;
    let mut matchers = Vec::new();
    for matcher in selector.matchers.matchers {
        if !matches!(matcher.op, MatchOp::Equal) {
            return refuse(&format!("the matcher `{}` is not supported (only `=`)", matcher.op));
        }
        match matcher.name.as_str() {
            "__name__" => metric = Some(matcher.value),
            _ => matchers.push((matcher.name, matcher.value)),
        }
    }
    let Some(metric) = metric else { return refuse("the selector names no metric") };
    Ok(RangeQuery { op, by, metric, matchers })
}

impl RangeQuery {
    /// The one plan of the range `start_us..=end_us` in steps of `step_us`, over table `table`: columns `step_us`
    /// (Int64), then each `by` label (Utf8) in order, then `value` (Float64); ordered by step, then labels.
    pub fn sql(&self, table: &str, start_us: i64, end_us: i64, step_us: i64) -> String {
        let labels: Vec<String> = self.by.iter().enumerate().map(|(i, l)| format!("{} AS l{i}", column(l))).collect();
        let keep: String = labels.iter().map(|l| format!("{l}, ")).collect();
        let grouped: String = (0..self.by.len()).map(|i| format!(", l{i}")).collect();
        let named: String = self.by.iter().enumerate().map(|(i, l)| format!(", l{i} AS \"{l}\"")).collect();
        let matched: String =
            self.matchers.iter().map(|(label, value)| format!(" AND {} = {}", column(label), quote(value))).collect();
        let op = match self.op {
            Aggregation::Avg => "avg",
            Aggregation::Sum => "sum",
            Aggregation::Min => "min",
            Aggregation::Max => "max",
            Aggregation::Count => "count",
        };
        let value = match self.op {
            Aggregation::Count => "CAST(count(value) AS DOUBLE)".to_string(),
            _ => format!("{op}(value)"),
        };
        format!(
            "WITH steps AS (SELECT value AS t FROM generate_series({start_us}, {end_us}, {step_us})), \
             samples AS (SELECT {keep}concat_ws('|', service_name, array_to_string(map_keys(attributes), ','), \
             array_to_string(map_values(attributes), ',')) AS series, CAST(timestamp AS BIGINT) AS ts, value \
             FROM {table} WHERE metric_name = {metric}{matched} \
             AND timestamp > to_timestamp_micros({from}) AND timestamp <= to_timestamp_micros({end_us})), \
             latest AS (SELECT steps.t, samples.*, row_number() OVER (PARTITION BY steps.t, samples.series \
             ORDER BY samples.ts DESC) AS rank FROM steps JOIN samples \
             ON samples.ts > steps.t - {LOOKBACK_US} AND samples.ts <= steps.t) \
             SELECT t AS step_us{named}, {value} AS value FROM latest WHERE rank = 1 \
             GROUP BY t{grouped} ORDER BY t{grouped}",
            metric = quote(&self.metric),
            from = start_us - LOOKBACK_US,
        )
    }

    /// The aggregation of one group at one step, from the values of its series' latest samples in the window:
    /// the direct reading the service's answers are checked against.
    pub fn aggregate(&self, values: &[f64]) -> f64 {
        let sum: f64 = values.iter().sum();
        match self.op {
            Aggregation::Avg => sum / values.len() as f64,
            Aggregation::Sum => sum,
            Aggregation::Min => values.iter().copied().fold(f64::INFINITY, f64::min),
            Aggregation::Max => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            Aggregation::Count => values.len() as f64,
        }
    }
}

/// The SQL of a label: a column of the table, or a key of its `attributes` map.
fn column(label: &str) -> String {
    match label {
        "service_name" | "metric_name" => label.to_string(),
        other => format!("attributes[{}]", quote(other)),
    }
}

/// A SQL string literal.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_form_parses_into_its_aggregation_labels_and_metric() {
        let q = parse("avg by (service_name) (benchmark_metric_2)").unwrap();
        assert_eq!(
            q,
            RangeQuery {
                op: Aggregation::Avg,
                by: vec!["service_name".into()],
                metric: "benchmark_metric_2".into(),
                matchers: vec![],
            }
        );
        let q = parse(r#"max by (host, service_name) ({__name__="m", service_name="service-1"})"#).unwrap();
        assert_eq!((q.op, q.by.len(), q.metric.as_str()), (Aggregation::Max, 2, "m"));
        assert_eq!(q.matchers, vec![("service_name".to_string(), "service-1".to_string())]);
    }

    #[test]
    fn what_the_plan_cannot_answer_is_refused_by_name() {
        assert!(parse("rate(m[5m])").unwrap_err().contains("only an aggregation"));
        assert!(parse("avg without (host) (m)").unwrap_err().contains("`without`"));
        assert!(parse(r#"avg by (host) (m{service_name=~"a.*"})"#).unwrap_err().contains("only `=`"));
        assert!(parse("avg by (host) (m offset 5m)").unwrap_err().contains("`offset`"));
        assert!(parse("topk(3, m)").unwrap_err().contains("`topk`"));
        assert!(parse("avg by (").unwrap_err().contains("does not parse"));
    }
}
