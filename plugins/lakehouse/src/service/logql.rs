//! LogQL log queries of the form the seed times: a stream selector of label equalities, then line filters,
//! `{service_name="checkout"} |= "timeout" != "retry"`. Parsed here, not by the `logql` crate (0.2.7): that
//! crate parses this form, but its parsers print to stdout on every call (`println!("PipelineStage {}", ...)`
//! and 19 others), which a service cannot do inside a request, and the plugin's stdout is not its to write. A
//! test checks that both parses agree on the forms used here. Regular expressions (`=~`, `!~`, `|~`) and
//! pipeline stages (`| json`, ...) are refused, naming what was found: the service answers what it can check.

/// A parsed log query: the stream's labels and the line filters, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogQuery {
    pub matchers: Vec<(String, String)>,
    pub filters: Vec<LineFilter>,
}

/// `|= "text"` keeps lines containing the text; `!= "text"` drops them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineFilter {
    pub contains: bool,
    pub text: String,
}

impl LogQuery {
    /// Whether a line with these labels passes the query: the direct reading a scan checks answers against.
    pub fn keeps(&self, label: impl Fn(&str) -> Option<String>, line: &str) -> bool {
        self.matchers.iter().all(|(name, value)| label(name).as_deref() == Some(value.as_str()))
            && self.filters.iter().all(|f| line.contains(&f.text) == f.contains)
    }
}

impl LogQuery {
    /// The query as SQL over the logs table `table`, within `[start_us, end_us)`: the newest `limit` matching
    /// lines, columns `timestamp`, `service_name`, `body`, newest first. A label is a column (`service_name`;
    /// `level` is `severity_text`); another label is refused by name.
    pub fn sql(&self, table: &str, start_us: i64, end_us: i64, limit: usize) -> Result<String, String> {
        let quote = crate::service::promql::quote;
        let mut wheres = Vec::new();
        for (label, value) in &self.matchers {
            let column = match label.as_str() {
                "service_name" => "service_name",
                "level" => "severity_text",
                other => return Err(format!("the logs have no label `{other}` (service_name, level)")),
            };
            wheres.push(format!("{column} = {}", quote(value)));
        }
        for filter in &self.filters {
            let op = if filter.contains { ">" } else { "=" };
            wheres.push(format!("strpos(body, {}) {op} 0", quote(&filter.text)));
        }
        Ok(format!(
            "SELECT timestamp, service_name, body FROM {table} WHERE {} \
             AND timestamp >= to_timestamp_micros({start_us}) AND timestamp < to_timestamp_micros({end_us}) \
             ORDER BY timestamp DESC LIMIT {limit}",
            wheres.join(" AND ")
        ))
    }
}

/// Parses `query`, or says where and why it is not of the supported form.
pub fn parse(query: &str) -> Result<LogQuery, String> {
    let mut p = Cursor { text: query, at: 0 };
    p.expect('{')?;
    let mut matchers = Vec::new();
    loop {
        let name = p.ident()?;
        match p.op(&["=~", "!~", "!=", "="]) {
            Some("=") => matchers.push((name, p.string()?)),
            Some(other) => return Err(p.error(&format!("label matcher `{other}` is not supported (only `=`)"))),
            None => return Err(p.error("expected `=` after a label name")),
        }
        match p.op(&[",", "}"]) {
            Some(",") => continue,
            Some(_) => break,
            None => return Err(p.error("expected `,` or `}` in the stream selector")),
        }
    }
    let mut filters = Vec::new();
    while !p.done() {
        match p.op(&["|=", "!=", "|~", "!~", "|"]) {
            Some("|=") => filters.push(LineFilter { contains: true, text: p.string()? }),
            Some("!=") => filters.push(LineFilter { contains: false, text: p.string()? }),
            Some(other) => {
                return Err(p.error(&format!("`{other}` is not supported (only the line filters `|=` and `!=`)")));
            }
            None => return Err(p.error("expected a line filter")),
        }
    }
    Ok(LogQuery { matchers, filters })
}

/// A position in the query text.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl Cursor<'_> {
    fn rest(&mut self) -> &str {
        let trimmed = self.text[self.at..].trim_start();
        self.at = self.text.len() - trimmed.len();
        trimmed
    }

    fn done(&mut self) -> bool {
        self.rest().is_empty()
    }

    fn error(&self, why: &str) -> String {
        format!("{why} at column {} of `{}`", self.at + 1, self.text)
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        match self.rest().starts_with(c) {
            true => {
                self.at += c.len_utf8();
                Ok(())
            }
            false => Err(self.error(&format!("expected `{c}`"))),
        }
    }

    /// The first of `ops` the text continues with (longest listed first).
    fn op(&mut self, ops: &[&'static str]) -> Option<&'static str> {
        let rest = self.rest();
        let found = ops.iter().find(|op| rest.starts_with(*op)).copied();
        self.at += found.map_or(0, str::len);
        found
    }

    fn ident(&mut self) -> Result<String, String> {
        let rest = self.rest();
        let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        if len == 0 || rest.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(self.error("expected a label name"));
        }
        let name = rest[..len].to_string();
        self.at += len;
        Ok(name)
    }

    /// A double-quoted string with `\"` and `\\` escapes, or a backquoted raw one.
    fn string(&mut self) -> Result<String, String> {
        let rest = self.rest();
        let quote = match rest.chars().next() {
            Some(q @ ('"' | '`')) => q,
            _ => return Err(self.error("expected a quoted string")),
        };
        let mut value = String::new();
        let mut chars = rest.char_indices().skip(1);
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' if quote == '"' => match chars.next() {
                    Some((_, e @ ('"' | '\\'))) => value.push(e),
                    _ => return Err(self.error("only `\\\"` and `\\\\` escapes are supported")),
                },
                c if c == quote => {
                    self.at += i + 1;
                    return Ok(value);
                }
                c => value.push(c),
            }
        }
        Err(self.error("unterminated string"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_form_parses_to_its_labels_and_filters() {
        let q = parse(r#"{service_name="checkout", level="INFO"} |= "completed" != "request 7 ""#).unwrap();
        assert_eq!(q.matchers, [("service_name".into(), "checkout".into()), ("level".into(), "INFO".into())]);
        let filters = [(true, "completed"), (false, "request 7 ")]
            .map(|(contains, text)| LineFilter { contains, text: text.into() });
        assert_eq!(q.filters, filters);
        assert_eq!(parse(r#"{a="\"q\" \\"}|=`raw \d`"#).unwrap().filters[0].text, r"raw \d");
        assert_eq!(parse(r#"{a="\"q\" \\"}"#).unwrap().matchers[0].1, r#""q" \"#);
    }

    #[test]
    fn what_it_does_not_answer_is_refused_saying_where() {
        let refused = |q: &str| parse(q).unwrap_err();
        assert!(refused(r#"{a=~"x.*"}"#).contains("`=~` is not supported"), "{}", refused(r#"{a=~"x.*"}"#));
        assert!(refused(r#"{a="x"} |~ "e.+r""#).contains("`|~` is not supported"));
        assert!(refused(r#"{a="x"} | json"#).contains("`|` is not supported"));
        assert!(refused(r#"{a="x""#).contains("expected `,` or `}`"));
        assert!(refused(r#"{a="x} |= "y""#).contains("expected `,` or `}`"));
        assert!(refused(r#"a="x""#).contains("expected `{` at column 1"));
        assert!(refused(r#"{a="x"} |= "y"#).contains("unterminated string"));
    }

    #[test]
    fn a_line_passes_only_with_every_label_and_filter() {
        let q = parse(r#"{service_name="api"} |= "request 1" != "request 12""#).unwrap();
        let api = |name: &str| (name == "service_name").then(|| "api".to_string());
        assert!(q.keeps(api, "request 1 completed"));
        assert!(!q.keeps(api, "request 12 completed"));
        assert!(!q.keeps(api, "request 2 completed"));
        assert!(!q.keeps(|_| Some("web".into()), "request 1 completed"));
    }

    /// The `logql` crate reads the same labels and filters from the forms used here.
    #[test]
    fn the_logql_crate_agrees_with_this_parse() {
        use logql::Parser as _;
        for query in [r#"{service_name="api"} |= "completed""#, r#"{service_name="api", level="INFO"} |= "a" != "b""#] {
            let ours = parse(query).unwrap();
            let (rest, logql::LogExpr(selector, pipeline)) = logql::LogExpr::parse(query).unwrap();
            assert!(rest.trim().is_empty(), "{rest}");
            let labels: Vec<(String, String)> = selector.0.unwrap().0.into_iter().map(|m| (m.key.0, m.val.0)).collect();
            assert_eq!(labels, ours.matchers);
            let filters: Vec<LineFilter> = pipeline
                .into_iter()
                .flat_map(|p| p.0)
                .flat_map(|stage| match stage {
                    logql::PipelineStage::LineFilters(f) => f.0,
                    other => panic!("{other:?}"),
                })
                .map(|f| LineFilter {
                    contains: f.filter == logql::Filter::PipeExact,
                    text: match f.val {
                        logql::LineFilterValue::Normal(v) => v.0,
                        other => panic!("{other:?}"),
                    },
                })
                .collect();
            assert_eq!(filters, ours.filters);
        }
    }
}
