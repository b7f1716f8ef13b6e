//! Named baselines: a run's records saved under `<results dir>/baselines/NAME.jsonl`, and the gate that turns
//! verdicts into an exit code.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::Record;
use crate::history::{History, Needs};

/// Where baseline `name` lives next to the results stream `out`.
pub fn path(out: &Path, name: &str) -> Result<PathBuf> {
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        bail!("`{name}` is not a baseline name (use letters, digits, `-`, `_`, `.`)");
    }
    let dir = out.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Ok(dir.join("baselines").join(format!("{name}.jsonl")))
}

/// Replaces baseline `path` with `records`: written to a temporary file, made durable, then renamed over it,
/// and the directory synced, so a crash leaves the old baseline or the new one, never half of one (a rename
/// before the data reached the disk could leave an empty file under the baseline's name).
pub fn save(path: &Path, records: &[Record]) -> Result<()> {
    use std::io::Write;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let text: String = records.iter().map(|r| r.to_line() + "\n").collect();
    let staged = path.with_extension("jsonl.tmp");
    let mut file = std::fs::File::create(&staged).with_context(|| format!("writing {}", staged.display()))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", staged.display()))?;
    std::fs::rename(&staged, path).with_context(|| format!("renaming {} to {}", staged.display(), path.display()))?;
    std::fs::File::open(dir).and_then(|d| d.sync_all()).with_context(|| format!("syncing {}", dir.display()))
}

/// Where `file_or_name` is read from: a results file (anything that names a path: it has a `/` or ends in
/// `.jsonl`, or exists as a file), or the baseline of that name next to `out`. Checked before a run starts,
/// so a typo costs nothing; the error lists the baselines there are.
pub fn locate(file_or_name: &str, out: &Path) -> Result<PathBuf> {
    let as_file = Path::new(file_or_name);
    if as_file.is_file() {
        return Ok(as_file.to_owned());
    }
    if file_or_name.contains(['/', '\\']) || file_or_name.ends_with(".jsonl") {
        bail!("no such results file: {file_or_name}");
    }
    let path = path(out, file_or_name)?;
    if !path.is_file() {
        let dir = path.parent().unwrap_or(Path::new("."));
        let names = saved(dir);
        let known = if names.is_empty() {
            format!("there are none in {} (save one with `run --save-baseline NAME`)", dir.display())
        } else {
            format!("baselines in {}: {}", dir.display(), names.join(", "))
        };
        bail!("no results file or baseline named `{file_or_name}`{}; {known}", suggest(file_or_name, &names));
    }
    Ok(path)
}

/// `" (did you mean `x`?)"` when a saved name is a few edits from `name`.
fn suggest(name: &str, names: &[String]) -> String {
    let distance = |n: &String| strsim::damerau_levenshtein(name, n);
    let close =
        names.iter().filter(|n| distance(n) <= (n.len().max(name.len()) / 3).max(1)).min_by_key(|n| distance(n));
    close.map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default()
}

/// The names of the baselines saved in `dir`.
fn saved(dir: &Path) -> Vec<String> {
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    let mut names: Vec<String> =
        entries.filter_map(|e| e.file_name().to_str()?.strip_suffix(".jsonl").map(str::to_owned)).collect();
    names.sort();
    names
}

/// The newest record of each series (and the newest verdict per series and metric) of a results file, or of
/// the baseline of that name (looked up next to `out`): what a comparison reads of its new side, in memory
/// bounded by the series. A side with no readable record is an error: comparing against nothing would call every series
/// `added` and pass a gate.
pub fn load(file_or_name: &str, out: &Path) -> Result<Vec<Record>> {
    load_newest(file_or_name, out, 1)
}

/// As [`load`], with the newest `newest` records of each series: what it reads for how far the series' runs
/// differ, besides the newest.
pub fn load_newest(file_or_name: &str, out: &Path, newest: usize) -> Result<Vec<Record>> {
    let mut history = History::new(Needs::newest(newest));
    history.read(&locate(file_or_name, out)?)?;
    Ok(history.into_records())
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

    #[test]
    fn a_missing_side_is_named_plainly_with_the_baselines_there_are() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("results.jsonl");
        // regression: `compare nosuch.jsonl` looked for `nosuch.jsonl.jsonl`.
        assert_eq!(locate("nosuch.jsonl", &out).unwrap_err().to_string(), "no such results file: nosuch.jsonl");
        std::fs::create_dir(dir.path().join("baselines")).unwrap();
        std::fs::write(dir.path().join("baselines/main.jsonl"), "").unwrap();
        let err = locate("mian", &out).unwrap_err().to_string();
        assert!(
            err.starts_with("no results file or baseline named `mian` (did you mean `main`?); baselines in "),
            "{err}"
        );
        assert!(err.ends_with("baselines: main"), "{err}");
        // regression: `compare garbage.jsonl real.jsonl` called everything `added` and passed the gate.
        std::fs::write(dir.path().join("garbage.jsonl"), "not json\n").unwrap();
        let garbage = dir.path().join("garbage.jsonl").display().to_string();
        assert!(load(&garbage, &out).unwrap_err().to_string().ends_with("holds no readable record (1 lines skipped)"));
    }
}
