//! Reading Rust sources for `layout_tests.rs`: the code without comments, string literals and `#[cfg(test)]`
//! items; every path rooted at `crate::`, `super::` or `self::`, grouped imports expanded; which modules of its
//! own crate or group a file uses; and the import circles among a set of modules.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// One source file, read.
pub struct Source {
    /// Its name as messages show it, e.g. `run/context.rs`.
    pub file: String,
    /// Its code: comments and the contents of string literals blanked, `#[cfg(test)]` items cut.
    pub code: String,
    /// Its module's path from the crate root, e.g. `["run", "context"]` (`mod.rs`: the folder's).
    module: Vec<String>,
}

/// A module, the names it uses of its own crate (or group: the first segment after the group), and the names
/// of the items it defines (a crate's root re-exports them: `crate::Record` is `record.rs`'s).
#[derive(Debug, Clone)]
pub struct Module {
    pub name: String,
    pub uses: BTreeSet<String>,
    pub defines: BTreeSet<String>,
}

impl Source {
    /// Every `.rs` file of `dir` but `*_tests.rs`, in name order; `group` is the folder's module path.
    pub fn read_dir(dir: &Path, group: &[&str]) -> Vec<Source> {
        let mut sources: Vec<Source> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".rs") && !name.ends_with("_tests.rs"))
            .map(|name| {
                let text = std::fs::read_to_string(dir.join(&name)).unwrap();
                let file = group.iter().map(|g| format!("{g}/")).collect::<String>() + &name;
                Source::parse(&file, &text, group)
            })
            .collect();
        sources.sort_by(|a, b| a.file.cmp(&b.file));
        sources
    }

    /// `text`, the file `file` of the folder whose module path is `group`.
    pub fn parse(file: &str, text: &str, group: &[&str]) -> Source {
        let stem = file.rsplit('/').next().unwrap_or(file).trim_end_matches(".rs");
        let mut module: Vec<String> = group.iter().map(|g| g.to_string()).collect();
        if !matches!(stem, "mod" | "lib" | "main") {
            module.push(stem.to_string());
        }
        Source { file: file.to_string(), code: without_test_items(&blanked(text)), module }
    }

    /// Every path of the code rooted at `crate::`, `super::` or `self::`, from the crate root.
    pub fn paths(&self) -> Vec<Vec<String>> {
        let tokens = tokens(&self.code);
        let mut paths = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            let starts = i == 0 || tokens[i - 1] != "::";
            if starts && matches!(tokens[i], "crate" | "super" | "self") && tokens.get(i + 1) == Some(&"::") {
                let mut prefix = match tokens[i] {
                    "crate" => Vec::new(),
                    _ => self.module.clone(),
                };
                let mut at = i;
                while tokens.get(at) == Some(&"super") && tokens.get(at + 1) == Some(&"::") {
                    prefix.pop();
                    at += 2;
                }
                if at == i {
                    at += 2;
                }
                let (found, end) = tree(&tokens, at, prefix);
                paths.extend(found);
                i = end.max(i + 1);
            } else {
                i += 1;
            }
        }
        paths
    }

    /// The modules of `group` (or, with no group, of the crate) this file names. A `mod.rs` also names its
    /// files by bare paths (`export::json`).
    pub fn module_uses(&self, group: &[&str]) -> Module {
        let mut uses = BTreeSet::new();
        for path in self.paths() {
            if path.len() < group.len() || path.iter().zip(group).any(|(a, b)| a != b) {
                continue;
            }
            uses.insert(path.get(group.len()).cloned().unwrap_or_else(|| "mod".into()));
        }
        let name = match self.module.len() > group.len() {
            true => self.module[group.len()].clone(),
            false => "mod".to_string(),
        };
        if name == "mod" {
            let tokens = tokens(&self.code);
            for (i, pair) in tokens.windows(2).enumerate() {
                let starts = i == 0 || tokens[i - 1] != "::";
                if starts && pair[1] == "::" && pair[0].starts_with(|c: char| c.is_ascii_lowercase()) {
                    uses.insert(pair[0].to_string());
                }
            }
        }
        uses.remove(&name);
        let tokens = tokens(&self.code);
        let defines = tokens
            .windows(2)
            .filter(|w| matches!(w[0], "struct" | "enum" | "fn" | "const" | "static" | "type" | "trait"))
            .filter(|w| is_ident(w[1]) && w[1] != "fn")
            .map(|w| w[1].to_string())
            .collect();
        Module { name, uses, defines }
    }
}

/// The paths of the use tree at `tokens[at..]` under `prefix`, and where the tree ends.
fn tree(tokens: &[&str], mut at: usize, mut prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    match tokens.get(at) {
        Some(&"{") => {
            let mut paths = Vec::new();
            at += 1;
            while at < tokens.len() && tokens[at] != "}" {
                if tokens[at] == "," {
                    at += 1;
                    continue;
                }
                let (found, end) = tree(tokens, at, prefix.clone());
                paths.extend(found);
                at = end.max(at + 1);
            }
            (paths, at + 1)
        }
        Some(name) if is_ident(name) => {
            if *name != "self" {
                prefix.push(name.to_string());
            }
            match tokens.get(at + 1) {
                Some(&"::") => tree(tokens, at + 2, prefix),
                _ => (vec![prefix], at + 1),
            }
        }
        _ => (vec![prefix], at),
    }
}

fn is_ident(token: &str) -> bool {
    token.starts_with(|c: char| c.is_alphabetic() || c == '_')
}

/// Identifiers, `::`, and every other character as a token of its own; whitespace dropped.
fn tokens(code: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
        } else if code[i..].starts_with("::") {
            i += 2;
        } else {
            i += code[i..].chars().next().map_or(1, char::len_utf8);
            if c.is_ascii_whitespace() {
                continue;
            }
        }
        tokens.push(&code[start..i]);
    }
    tokens
}

/// `text` with its comments and the contents of its string literals replaced by spaces (lines kept).
fn blanked(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < chars.len() {
        let (c, next) = (chars[i], chars.get(i + 1).copied());
        let after_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i..].starts_with(&['/', '*']) {
                    (depth, i) = (depth + 1, i + 2);
                } else if chars[i..].starts_with(&['*', '/']) {
                    (depth, i) = (depth - 1, i + 2);
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == 'r' && !after_ident && matches!(next, Some('"' | '#')) && raw_quote(&chars, i + 1).is_some() {
            let (hashes, open) = raw_quote(&chars, i + 1).unwrap();
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            out.push_str("\"\"");
            i = open + 1;
            while i < chars.len() && !chars[i..].iter().take(close.len()).copied().eq(close.chars()) {
                blank(&mut out, chars[i]);
                i += 1;
            }
            i += close.len();
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let width = if chars[i] == '\\' { 2 } else { 1 };
                chars[i..(i + width).min(chars.len())].iter().for_each(|&c| blank(&mut out, c));
                i += width;
            }
            out.push('"');
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A char literal ('"', '\'', '\n'), not a lifetime.
            let end = (i + 2..chars.len()).find(|&j| chars[j] == '\'' && chars[j - 1] != '\\').unwrap_or(i + 2);
            out.push_str("' '");
            i = end + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// After an `r` at `chars[at - 1]`: the number of `#` and the index of the opening quote, if it is a raw string.
fn raw_quote(chars: &[char], at: usize) -> Option<(usize, usize)> {
    let hashes = chars[at..].iter().take_while(|&&c| c == '#').count();
    (chars.get(at + hashes) == Some(&'"')).then_some((hashes, at + hashes))
}

/// `code` without the items under `#[cfg(test)]` (a module, inline or from a file, a function, an import).
fn without_test_items(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut code = code.to_string();
    while let Some(at) = code.find(MARK) {
        let bytes = code.as_bytes();
        let mut i = at + MARK.len();
        let mut depth = 0usize;
        while i < bytes.len() {
            match bytes[i] {
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 && bytes[i] == b'}' {
                        break;
                    }
                }
                b';' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        code.replace_range(at..(i + 1).min(code.len()), "");
    }
    code
}

/// Each import circle among `modules`, once, as the names around it from its first name back to it. A use of
/// a name that is no module is a use of the one module that defines it, else of `mod` (an item of the
/// folder's `mod.rs`, or one it re-exports).
pub fn circles(modules: &[Module]) -> Vec<Vec<String>> {
    let names: BTreeSet<&str> = modules.iter().map(|m| m.name.as_str()).collect();
    let fallback = names.contains("mod").then_some("mod");
    let definer = |item: &str| {
        let mut by = modules.iter().filter(|m| m.defines.contains(item));
        match (by.next(), by.next()) {
            (Some(one), None) => Some(one.name.as_str()),
            _ => fallback,
        }
    };
    let edges: BTreeMap<&str, BTreeSet<&str>> = modules
        .iter()
        .map(|m| {
            let to = m.uses.iter().filter_map(|u| names.get(u.as_str()).copied().or_else(|| definer(u)));
            (m.name.as_str(), to.filter(|t| *t != m.name).collect())
        })
        .collect();
    let mut found: Vec<Vec<String>> = Vec::new();
    let mut in_circle: BTreeSet<&str> = BTreeSet::new();
    for &start in &names {
        if in_circle.contains(start) {
            continue;
        }
        // The shortest way from `start` back to it, breadth first.
        let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        while let Some(at) = queue.pop_front() {
            if edges[at].contains(start) {
                let mut circle = vec![start.to_string()];
                let mut back = at;
                while back != start {
                    circle.insert(1, back.to_string());
                    back = parent[back];
                }
                circle.push(start.to_string());
                in_circle.extend(circle.iter().map(|n| names.get(n.as_str()).copied().unwrap()));
                found.push(circle);
                break;
            }
            for &next in &edges[at] {
                if next != start && !parent.contains_key(next) {
                    parent.insert(next, at);
                    queue.push_back(next);
                }
            }
        }
    }
    found
}
