//! `query` only reads: its tables are results, which only `run` appends to (and `publish` to the warehouse).
//! A statement that writes (DML: INSERT, UPDATE, DELETE, COPY), changes the schema (DDL: CREATE, DROP, ALTER)
//! or sets something (SET, RESET, transactions) is refused before it runs, with its kind named; a `DELETE`
//! answered `count | 6` read as six records deleted. Two checks: the parsed statement's kind names the
//! refusal, and DataFusion's own [`SQLOptions`] checks the plan, whatever the statement looked like.

use anyhow::bail;
use datafusion::execution::SessionState;
use datafusion::execution::context::SQLOptions;
use datafusion::sql::parser::Statement as DfStatement;
use datafusion::sql::sqlparser::ast::Statement;

/// The options every statement of `query` is planned under: no DDL, no DML, no SET-style statement.
pub fn options() -> SQLOptions {
    SQLOptions::new().with_allow_ddl(false).with_allow_dml(false).with_allow_statements(false)
}

/// An error in one line when `sql` is not a statement that only reads (SELECT, WITH, EXPLAIN, SHOW,
/// DESCRIBE); a statement that does not parse is left to the planner's own error.
pub fn check(state: &SessionState, sql: &str) -> anyhow::Result<()> {
    let dialect = state.config().options().sql_parser.dialect;
    let Ok(statement) = state.sql_to_statement(sql, &dialect) else { return Ok(()) };
    if let Some((name, kind)) = writes(&statement) {
        bail!(
            "query only reads: {name} is {kind}, refused before it runs (ask with SELECT, WITH, EXPLAIN, SHOW or \
             DESCRIBE)"
        );
    }
    Ok(())
}

/// The name and kind of a statement that does more than read, or `None`.
fn writes(statement: &DfStatement) -> Option<(String, &'static str)> {
    match statement {
        DfStatement::Statement(statement) => writes_sql(statement),
        DfStatement::CreateExternalTable(_) => Some(("CREATE EXTERNAL TABLE".into(), DDL)),
        DfStatement::CopyTo(_) => Some(("COPY".into(), DML)),
        // EXPLAIN ANALYZE runs its statement; a plain EXPLAIN would not, but an EXPLAIN of a write asks for one.
        DfStatement::Explain(explain) => writes(&explain.statement),
        DfStatement::Reset(_) => Some(("RESET".into(), SETS)),
    }
}

const DML: &str = "DML (it writes)";
const DDL: &str = "DDL (it changes the tables)";
const SETS: &str = "a statement that sets or controls the session";

fn writes_sql(statement: &Statement) -> Option<(String, &'static str)> {
    use Statement::*;
    match statement {
        Query(_)
        | ExplainTable { .. }
        | ShowFunctions { .. }
        | ShowVariable { .. }
        | ShowStatus { .. }
        | ShowVariables { .. }
        | ShowCreate { .. }
        | ShowColumns { .. }
        | ShowDatabases { .. }
        | ShowSchemas { .. }
        | ShowCharset(_)
        | ShowObjects(_)
        | ShowTables { .. }
        | ShowViews { .. }
        | ShowCollation { .. } => None,
        Explain { statement, .. } => writes_sql(statement),
        Insert(_) | Update(_) | Delete(_) | Copy { .. } | Merge(_) | Truncate(_) => Some((name(statement), DML)),
        other => {
            let name = name(other);
            let ddl = ["CREATE", "DROP", "ALTER"].iter().any(|k| name.starts_with(k));
            Some((name, if ddl { DDL } else { SETS }))
        }
    }
}

/// A statement's kind in SQL's words, from its variant in the parsed tree: `CreateTable` is `CREATE TABLE`.
fn name(statement: &Statement) -> String {
    let debug = format!("{statement:?}");
    let variant = debug.split(['(', ' ', '{']).next().unwrap_or("");
    let mut words = String::new();
    for (i, c) in variant.char_indices() {
        if c.is_uppercase() && i > 0 {
            words.push(' ');
        }
        words.push(c.to_ascii_uppercase());
    }
    words
}

#[cfg(test)]
mod tests {
    use datafusion::prelude::SessionContext;

    use super::*;

    #[test]
    fn statements_that_write_drop_or_set_are_named_and_queries_pass() {
        let state = SessionContext::new().state();
        let refused = |sql: &str| check(&state, sql).unwrap_err().to_string();
        for (sql, named) in [
            ("DELETE FROM records", "DELETE is DML (it writes)"),
            ("INSERT INTO records VALUES (1)", "INSERT is DML (it writes)"),
            ("UPDATE records SET bench = 'x'", "UPDATE is DML (it writes)"),
            ("COPY records TO 'out.csv'", "COPY is DML (it writes)"),
            ("CREATE TABLE t AS SELECT 1", "CREATE TABLE is DDL (it changes the tables)"),
            ("DROP TABLE records", "DROP is DDL (it changes the tables)"),
            ("ALTER TABLE records RENAME TO r", "ALTER TABLE is DDL (it changes the tables)"),
            ("SET datafusion.execution.batch_size = 1", "SET is a statement that sets or controls the session"),
            ("EXPLAIN ANALYZE DELETE FROM records", "DELETE is DML (it writes)"),
        ] {
            assert_eq!(
                refused(sql),
                format!(
                    "query only reads: {named}, refused before it runs (ask with SELECT, WITH, EXPLAIN, SHOW or \
                     DESCRIBE)"
                ),
                "{sql}"
            );
        }
        for sql in
            ["SELECT 1", "WITH a AS (SELECT 1) SELECT * FROM a", "EXPLAIN SELECT 1", "SHOW TABLES", "DESCRIBE records"]
        {
            assert!(check(&state, sql).is_ok(), "{sql}");
        }
    }
}
