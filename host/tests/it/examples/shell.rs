//! How a shell cuts the command lines of the guide's shell blocks: what the examples test runs.

/// The words of a shell command as the shell splits them: quotes joined (a quote may span lines), `\` escaping
/// outside single quotes, a `#` comment to the end of its line, and nothing from the first `&&`, `|`, `;` or
/// redirection on. `None` while a quote is open.
fn words(command: &str) -> Option<Vec<String>> {
    let (mut out, mut word, mut quote, mut escaped, mut comment) = (Vec::new(), String::new(), None, false, false);
    let mut quoted = false;
    for c in command.chars() {
        match (quote, c) {
            _ if comment => comment = c != '\n',
            _ if escaped => {
                word.push(c);
                escaped = false;
            }
            (Some('"') | None, '\\') => escaped = true,
            (None, '"' | '\'') => (quote, quoted) = (Some(c), true),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if word.is_empty() => comment = true,
            (None, ' ' | '\n' | '\t') => {
                if !quoted && ["&&", "|", ";", ">", ">>", "<", "2>"].contains(&word.as_str()) {
                    return Some(out);
                }
                if !word.is_empty() || quoted {
                    out.push(std::mem::take(&mut word));
                }
                quoted = false;
            }
            _ => word.push(c),
        }
    }
    if quote.is_some() {
        return None;
    }
    if !quoted && ["&&", "|", ";", ">", ">>", "<"].contains(&word.as_str()) {
        return Some(out);
    }
    out.extend((!word.is_empty() || quoted).then_some(word));
    Some(out)
}

/// The `benchhost` commands of the shell blocks of `markdown`, as the shell would cut them (see [`words`]):
/// continued lines joined, `$NAME` given its value in the block (`1` when the block does not give one).
pub(super) fn commands_of_markdown(markdown: &str) -> Vec<Vec<String>> {
    let (mut out, mut shell, mut pending) = (Vec::new(), false, String::new());
    let mut assigned: Vec<(String, String)> = Vec::new();
    let assignment = regex::Regex::new(r#"^([A-Z_]+)="([^"]*)"$"#).unwrap();
    let variable = regex::Regex::new(r"\$[A-Za-z_]+").unwrap();
    for line in markdown.lines() {
        let fence = line.trim();
        if fence.starts_with("```") {
            shell = ["```sh", "```bash", "```shell"].contains(&fence);
            (pending, assigned) = (String::new(), Vec::new());
            continue;
        }
        if !shell {
            continue;
        }
        pending.push_str(line.trim_end().trim_end_matches('\\'));
        pending.push('\n');
        if line.trim_end().ends_with('\\') || words(&pending).is_none() {
            continue;
        }
        let full = std::mem::take(&mut pending);
        if let Some(m) = assignment.captures(full.trim()) {
            assigned.push((m[1].to_string(), m[2].to_string()));
            continue;
        }
        let mut command = full;
        for (name, value) in &assigned {
            command = command.replace(&format!("${name}"), value);
        }
        let command = variable.replace_all(&command, "1");
        if let Some(w) = words(&command).filter(|w| w.first().is_some_and(|p| p.ends_with("benchhost"))) {
            out.push(w[1..].to_vec());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_example_is_cut_where_the_shell_cuts_it_and_a_quote_may_span_lines() {
        let text = "```sh\nWH=\"--warehouse wh\"\nbenchhost query \"SELECT 1\n  FROM metrics\" $WH   # one row\n\
                    benchhost run --shard $I/$N && echo done\nbenchhost report results/*.jsonl \\\n  --format md > a.md\n\
                    ```\n```text\nbenchhost not a command\n```\n";
        let got = commands_of_markdown(text);
        assert_eq!(got[0], ["query", "SELECT 1\n  FROM metrics", "--warehouse", "wh"]);
        assert_eq!(got[1], ["run", "--shard", "1/1"]);
        assert_eq!(got[2], ["report", "results/*.jsonl", "--format", "md"]);
        assert_eq!(got.len(), 3);
    }
}
