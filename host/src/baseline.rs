//! Named baselines: a run's records saved under `<results dir>/baselines/NAME.jsonl`, and the gate that turns
//! verdicts into an exit code.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::reader;
use crate::record::Record;

/// Where baseline `name` lives next to the results stream `out`.
pub fn path(out: &Path, name: &str) -> Result<PathBuf> {
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        bail!("`{name}` is not a baseline name (use letters, digits, `-`, `_`, `.`)");
    }
    let dir = out.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Ok(dir.join("baselines").join(format!("{name}.jsonl")))
}

/// Replaces baseline `path` with `records` (written to a temporary file, then renamed: never half a baseline).
pub fn save(path: &Path, records: &[Record]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let text: String = records.iter().map(|r| r.to_line() + "\n").collect();
    let staged = path.with_extension("jsonl.tmp");
    std::fs::write(&staged, text).with_context(|| format!("writing {}", staged.display()))?;
    std::fs::rename(&staged, path).with_context(|| format!("renaming {} to {}", staged.display(), path.display()))
}

/// Records of a results file, or of the baseline of that name (looked up next to `out`).
pub fn load(file_or_name: &str, out: &Path) -> Result<Vec<Record>> {
    let as_file = Path::new(file_or_name);
    let path = if as_file.is_file() { as_file.to_owned() } else { path(out, file_or_name)? };
    if !path.is_file() {
        bail!("no results file or baseline named `{file_or_name}` (looked for {})", path.display());
    }
    let stream = reader::read(&path)?;
    for problem in &stream.problems {
        eprintln!("warning: {problem}");
    }
    Ok(stream.records.into_iter().map(|(_, r)| r).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baselines_live_next_to_the_stream_and_names_cannot_escape() {
        assert_eq!(
            path(Path::new("results/results.jsonl"), "main").unwrap(),
            Path::new("results/baselines/main.jsonl")
        );
        assert_eq!(path(Path::new("r.jsonl"), "v1.2").unwrap(), Path::new("./baselines/v1.2.jsonl"));
        assert!(path(Path::new("r.jsonl"), "../etc/passwd").is_err());
    }
}
