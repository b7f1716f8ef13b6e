//! A library's link, kept so it can be made again with another code layout: the linker command line rustc
//! printed (`--print link-args=FILE`) while `-C save-temps` kept the objects it names. Relinking it with
//! `-Wl,--randomize-section-padding=SEED` (lld 20 and later; rustc links x86_64 Linux with rust-lld) moves
//! every function, each in a section of its own, by seeded padding: another draw of the same code's layout,
//! in the linker's time alone (no crate is compiled again).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Set in the environment of a cargo build whose `RUSTC_WORKSPACE_WRAPPER` is benchhost (`benchhost build`, a
/// bisection's builds): the executable then wraps rustc, keeping each plugin library's link.
pub const WRAPPER_ENV: &str = "BENCHHOST_RUSTC_WRAPPER";

/// The bench targets' source files, one per line, in the environment of the wrapped rustc: each is compiled
/// again as a plugin library (`benchhost build --benches`, and a bisection's builds of a bench target's rig).
pub const BENCHES_ENV: &str = "BENCHHOST_BENCH_SOURCES";

/// Where a build's bench plugins go, under its profile's directory (`release/benches/lib<target>.so`).
pub const BENCH_DIR: &str = "benches";

/// The linker flag that makes a seed's layout.
pub const SEED_FLAG: &str = "-Wl,--randomize-section-padding=";

/// A linker invocation as rustc printed it: the environment it set, the program and its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    env: Vec<(String, String)>,
    program: String,
    args: Vec<String>,
    /// The index in `args` of the output path (after `-o`).
    output: usize,
}

impl Recipe {
    /// Parses rustc's `--print link-args` text: `NAME="value"` assignments, then the program and its
    /// arguments, each in double quotes with `\"` and `\\` escaped.
    pub fn parse(text: &str) -> Result<Recipe> {
        let words = quoted_words(text.trim())?;
        let mut env = Vec::new();
        let mut rest = words.into_iter().peekable();
        while let Some(assignment) = rest.next_if(|w| w.0.is_some()) {
            env.push((assignment.0.unwrap_or_default(), assignment.1));
        }
        let program = rest.next().map(|w| w.1).context("the link line names no linker")?;
        let args: Vec<String> = rest.map(|w| w.1).collect();
        let output = args.iter().position(|a| a == "-o").map(|i| i + 1).filter(|&i| i < args.len());
        let Some(output) = output else { bail!("the link line has no `-o OUTPUT`") };
        if args.iter().any(|a| a.starts_with(SEED_FLAG)) {
            bail!("the link line already sets a layout seed");
        }
        Ok(Recipe { env, program, args, output })
    }

    /// The library the link made.
    pub fn output(&self) -> PathBuf {
        PathBuf::from(&self.args[self.output])
    }

    /// The link of the same objects into `out` with the layout of `seed`.
    pub fn command(&self, out: &Path, seed: u64) -> Command {
        let mut args = self.args.clone();
        args[self.output] = out.display().to_string();
        args.push(format!("{SEED_FLAG}{seed}"));
        let mut command = Command::new(&self.program);
        command.args(args).envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    /// Links the layout of `seed` into `out`, through a temporary file renamed into place (a link cut short
    /// leaves no half library at `out`).
    pub fn relink(&self, out: &Path, seed: u64) -> Result<()> {
        let partial = out.with_extension("so.partial");
        let output = self
            .command(&partial, seed)
            .output()
            .with_context(|| format!("running the linker `{}` for layout seed {seed}", self.program))?;
        if !output.status.success() {
            let _ = std::fs::remove_file(&partial);
            let stderr = String::from_utf8_lossy(&output.stderr);
            let why = stderr.lines().find(|l| l.contains("error")).unwrap_or(stderr.trim()).trim();
            bail!("relinking {} with layout seed {seed}: {why} (its objects are gone: build it again)", out.display());
        }
        std::fs::rename(&partial, out).with_context(|| format!("renaming {} into place", partial.display()))
    }
}

/// The words of a printed command: each either `NAME="value"` (an assignment: `Some(NAME)`) or `"value"`.
fn quoted_words(text: &str) -> Result<Vec<(Option<String>, String)>> {
    let mut words = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&first) = chars.peek() else { break };
        let mut name = None;
        if first != '"' {
            let mut prefix = String::new();
            while let Some(c) = chars.next_if(|&c| c != '=' && !c.is_whitespace()) {
                prefix.push(c);
            }
            if chars.next_if_eq(&'=').is_none() {
                bail!("unquoted word `{prefix}` in the link line");
            }
            name = Some(prefix);
        }
        if chars.next() != Some('"') {
            bail!("expected a quoted word in the link line");
        }
        let mut value = String::new();
        loop {
            match chars.next() {
                Some('\\') => value.push(chars.next().context("a `\\` ends the link line")?),
                Some('"') => break,
                Some(c) => value.push(c),
                None => bail!("an unterminated quote in the link line"),
            }
        }
        words.push((name, value));
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRINTED: &str = r#"LC_ALL="C" PATH="/rust/bin:/usr/bin" VSLANG="1033" "cc" "-m64" "/t/deps/a.a-cgu.0.rcgu.o" "-Wl,--as-needed" "-Wl,-soname=\"x\"" "-fuse-ld=lld" "-o" "/t/deps/liba.so" "-Wl,--gc-sections" "-shared""#;

    #[test]
    fn a_printed_link_line_is_read_back_and_made_again_with_a_seed_into_another_file() {
        let recipe = Recipe::parse(PRINTED).unwrap();
        assert_eq!(recipe.output(), Path::new("/t/deps/liba.so"));
        assert_eq!(recipe.env.len(), 3);
        let command = recipe.command(Path::new("/t/layouts/liba.so/seed-7.so"), 7);
        assert_eq!(command.get_program(), "cc");
        let args: Vec<&str> = command.get_args().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(args[3], "-Wl,-soname=\"x\"", "escapes undone");
        assert_eq!(args[6], "/t/layouts/liba.so/seed-7.so");
        assert_eq!(args.last().unwrap(), &"-Wl,--randomize-section-padding=7");
        assert!(command.get_envs().any(|(k, v)| k == "LC_ALL" && v == Some("C".as_ref())));
    }

    #[test]
    fn a_line_without_an_output_or_with_a_seed_already_is_refused() {
        assert!(Recipe::parse(r#""cc" "-shared""#).unwrap_err().to_string().contains("no `-o OUTPUT`"));
        let seeded = format!("{PRINTED} \"{SEED_FLAG}3\"");
        assert!(Recipe::parse(&seeded).unwrap_err().to_string().contains("already sets a layout seed"));
        assert!(Recipe::parse(r#"cc -o x"#).is_err(), "unquoted words are not rustc's");
    }
}
