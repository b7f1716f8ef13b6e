//! The cache's own routing, as seed 001's Flight SQL cache decides it from the statement text alone: a
//! nondeterministic statement (it calls `now()`, `random()`, ...) passes through; a deterministic time-series
//! statement (it groups by a `date_bin` time bucket and bounds `time` from both sides) goes to the delta tier,
//! keyed by its template (the statement with the bounds taken out) and asking for the window between them;
//! any other statement the parser accepts goes to the object tier under its exact text.

use std::ops::ControlFlow;

use datafusion::sql::parser::{DFParser, Statement as DfStatement};
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, SetExpr, Statement, Value,
    ValueWithSpan, visit_expressions, visit_expressions_mut,
};

use crate::data::Window;

/// Functions whose answer changes from one call to the next, so their statements are never cached.
const NONDETERMINISTIC: [&str; 8] =
    ["now", "current_timestamp", "current_date", "current_time", "localtime", "localtimestamp", "random", "uuid"];

/// The placeholders a delta template has where the statement had its bounds.
const START: &str = "$start";
const END: &str = "$end";

/// Which tier a statement goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Deterministic and bounded in time: served from the dataset of `template`, cropped to `window`.
    Delta { template: String, window: Window },
    /// Deterministic, not delta-cacheable: served from the bytes stored under its exact text.
    Object,
    /// Nondeterministic: fetched from the upstream on every request.
    Passthrough,
}

/// Routes `sql`; an error says why it is not one query the cache can analyse.
pub fn route(sql: &str) -> Result<Route, String> {
    let mut statements = DFParser::parse_sql(sql).map_err(|e| format!("not SQL: {e}"))?;
    let mut statement = match (statements.pop_front(), statements.is_empty()) {
        (Some(DfStatement::Statement(statement)), true) => *statement,
        _ => return Err("not a single statement".to_string()),
    };
    if !matches!(statement, Statement::Query(_)) {
        return Err("not a query".to_string());
    }
    if calls_nondeterministic(&statement) {
        return Ok(Route::Passthrough);
    }
    match take_time_bounds(&mut statement) {
        Some(window) if groups_by_time_bucket(&statement) => {
            Ok(Route::Delta { template: statement.to_string(), window })
        }
        _ => Ok(Route::Object),
    }
}

fn calls_nondeterministic(statement: &Statement) -> bool {
    visit_expressions(statement, |expr| match expr {
        Expr::Function(f) if NONDETERMINISTIC.contains(&function_name(&f.name.to_string()).as_str()) => {
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

fn function_name(qualified: &str) -> String {
    qualified.rsplit('.').next().unwrap_or(qualified).to_ascii_lowercase()
}

/// Whether the query's GROUP BY has a `date_bin` bucket, directly or as a position in the select list.
fn groups_by_time_bucket(statement: &Statement) -> bool {
    let Some(select) = select_of(statement) else { return false };
    let GroupByExpr::Expressions(keys, _) = &select.group_by else { return false };
    keys.iter().any(|key| {
        visit_expressions(key, |e| match e {
            Expr::Function(f) if function_name(&f.name.to_string()) == "date_bin" => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        })
        .is_break()
            || position(key)
                .and_then(|p| select.projection.get(p))
                .is_some_and(|item| item.to_string().to_ascii_lowercase().starts_with("date_bin("))
    })
}

fn select_of(statement: &Statement) -> Option<&datafusion::sql::sqlparser::ast::Select> {
    let Statement::Query(query) = statement else { return None };
    match query.body.as_ref() {
        SetExpr::Select(select) => Some(select),
        _ => None,
    }
}

/// A GROUP BY position (`GROUP BY 1`), zero-based.
fn position(key: &Expr) -> Option<usize> {
    match key {
        Expr::Value(ValueWithSpan { value: Value::Number(n, _), .. }) => n.parse::<usize>().ok()?.checked_sub(1),
        _ => None,
    }
}

/// Finds `time >= A` and `time < B` (A and B nanoseconds, bare or in `to_timestamp_nanos(..)`) in the WHERE
/// clause, puts the placeholders in their place, and returns `[A, B)`.
fn take_time_bounds(statement: &mut Statement) -> Option<Window> {
    let (mut start, mut end) = (None, None);
    let _ = visit_expressions_mut(statement, |expr| {
        if let Expr::BinaryOp { left, op, right } = expr
            && is_time(left)
        {
            let slot = match op {
                BinaryOperator::GtEq if start.is_none() => Some((&mut start, START)),
                BinaryOperator::Lt if end.is_none() => Some((&mut end, END)),
                _ => None,
            };
            if let Some((slot, placeholder)) = slot
                && let Some(literal) = nanos_literal(right)
            {
                *slot = literal.parse::<i64>().ok();
                *literal = placeholder.to_string();
            }
        }
        ControlFlow::<()>::Continue(())
    });
    match (start, end) {
        (Some(start), Some(end)) if start < end => Some(Window { start, end }),
        _ => None,
    }
}

fn is_time(expr: &Expr) -> bool {
    matches!(expr, Expr::Identifier(ident) if ident.value.eq_ignore_ascii_case("time"))
}

/// The number literal of `N` or `to_timestamp_nanos(N)`, as mutable text.
fn nanos_literal(expr: &mut Expr) -> Option<&mut String> {
    match expr {
        Expr::Value(ValueWithSpan { value: Value::Number(value, _), .. }) => Some(value),
        Expr::Function(f) if function_name(&f.name.to_string()) == "to_timestamp_nanos" => {
            let FunctionArguments::List(list) = &mut f.args else { return None };
            match list.args.as_mut_slice() {
                [FunctionArg::Unnamed(FunctionArgExpr::Expr(inner))] => nanos_literal(inner),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream;

    #[test]
    fn the_seeds_three_statements_go_to_their_tiers() {
        let (window, extent) = (Window::minutes(25, 50), Window::minutes(0, 100));
        let Route::Delta { template, window: asked } = route(&upstream::delta_statement(window)).unwrap() else {
            panic!("the date_bin statement is not routed to the delta tier")
        };
        assert_eq!(asked, window);
        assert!(template.contains("to_timestamp_nanos($start)") && template.contains("$end"), "{template}");
        let other = route(&upstream::delta_statement(extent)).unwrap();
        assert_eq!(other, Route::Delta { template, window: extent }, "one template for every window");
        assert_eq!(route(&upstream::object_statement(100)).unwrap(), Route::Object);
        assert_eq!(route(&upstream::passthrough_statement()).unwrap(), Route::Passthrough);
    }

    #[test]
    fn a_bounded_statement_without_a_time_bucket_is_an_object_and_garbage_is_refused() {
        assert_eq!(route("SELECT * FROM m WHERE time >= 0 AND time < 10").unwrap(), Route::Object);
        assert_eq!(route("SELECT random() FROM m").unwrap(), Route::Passthrough);
        assert!(route("SELEC * FROM m").unwrap_err().starts_with("not SQL"));
        assert_eq!(route("SELECT 1; SELECT 2").unwrap_err(), "not a single statement");
        assert_eq!(route("DROP TABLE m").unwrap_err(), "not a query");
    }
}
