//! `rigs.toml`: the matrix file, parsed with spans so every error can point at file, line and column.
//! Validation against the rigs' descriptors lives in `matrix`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indexmap::IndexMap;
use serde::Deserialize;
use toml::Spanned;

/// A parsed `rigs.toml`, not yet validated against any descriptor.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file it came from.
    pub path: PathBuf,
    /// Its text, for turning spans into line and column.
    pub text: String,
    /// `[defaults]`.
    pub defaults: Settings,
    /// `[rig.NAME]` tables (or each table of a `[[rig.NAME]]` array) in file order.
    pub rigs: Vec<(Spanned<String>, RigEntry)>,
    /// `[sha256]`: plugin file name (`librig_wal.so`) → the SHA-256 it must have, lowercase hex.
    pub pins: BTreeMap<String, String>,
}

/// Measurement settings, in `[defaults]` and overridable per rig.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Warm-up time, e.g. `"1s"`.
    pub warmup: Option<Spanned<String>>,
    /// Total sampling time of an iterations-style cell, spread over `samples`.
    pub measurement: Option<Spanned<String>>,
    /// Samples per iterations-style cell.
    pub samples: Option<Spanned<u32>>,
    /// Runs per run-style cell.
    pub repetitions: Option<Spanned<u32>>,
    /// Per-cell deadline, after which the child is killed.
    pub deadline: Option<Spanned<String>>,
    /// Largest matrix accepted (defaults only).
    pub max_cells: Option<Spanned<u64>>,
    /// `flat` or `linear` iterations per sample.
    pub sampling: Option<Spanned<String>>,
    /// Stop sampling once the CI95 half-width is within this share of the estimate, e.g. `"1%"`.
    pub target_ci: Option<Spanned<String>>,
    /// Sampling time allowed when `target_ci` is set.
    pub budget: Option<Spanned<String>>,
    /// Bootstrap resamples for the CI95.
    pub resamples: Option<Spanned<u32>>,
    /// Cap on the child's data memory (`RLIMIT_DATA`), e.g. `"512MiB"`; reaching it is an `out_of_memory` failure.
    pub memory_limit: Option<Spanned<String>>,
}

/// One `[rig.NAME]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RigEntry {
    /// Fixed parameters.
    #[serde(default)]
    pub params: IndexMap<Spanned<String>, Spanned<toml::Value>>,
    /// Axes: parameter → list of values; the cells are their cartesian product.
    #[serde(default)]
    pub matrix: IndexMap<Spanned<String>, Spanned<toml::Value>>,
    /// Partial assignments of axes to skip.
    #[serde(default)]
    pub exclude: Vec<Spanned<IndexMap<Spanned<String>, Spanned<toml::Value>>>>,
    /// Parameters that replace the file's (fixed or axis) under `--quick`, so a smoke run is short and its
    /// records still state what ran.
    #[serde(default)]
    pub quick: IndexMap<Spanned<String>, Spanned<toml::Value>>,
    /// Settings for this rig's cells.
    pub warmup: Option<Spanned<String>>,
    /// See [`Settings::measurement`].
    pub measurement: Option<Spanned<String>>,
    /// See [`Settings::samples`].
    pub samples: Option<Spanned<u32>>,
    /// See [`Settings::repetitions`].
    pub repetitions: Option<Spanned<u32>>,
    /// See [`Settings::deadline`].
    pub deadline: Option<Spanned<String>>,
    /// `flat` or `linear` iterations per sample.
    pub sampling: Option<Spanned<String>>,
    /// Stop sampling once the CI95 half-width is within this share of the estimate, e.g. `"1%"`.
    pub target_ci: Option<Spanned<String>>,
    /// Sampling time allowed when `target_ci` is set.
    pub budget: Option<Spanned<String>>,
    /// Bootstrap resamples for the CI95.
    pub resamples: Option<Spanned<u32>>,
    /// Cap on the child's data memory (`RLIMIT_DATA`), e.g. `"512MiB"`; reaching it is an `out_of_memory` failure.
    pub memory_limit: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    defaults: Settings,
    #[serde(default)]
    rig: IndexMap<Spanned<String>, Entries>,
    #[serde(default)]
    sha256: IndexMap<Spanned<String>, Spanned<String>>,
}

/// `[rig.NAME]` (one matrix) or `[[rig.NAME]]` (several matrices of one rig, e.g. arms that need different
/// fixed parameters).
struct Entries(Vec<RigEntry>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OneOrMany;
        impl<'de> serde::de::Visitor<'de> for OneOrMany {
            type Value = Entries;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a [rig.NAME] table or a [[rig.NAME]] array of tables")
            }
            // Both forward the original access, so the spans inside the tables survive.
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Entries, A::Error> {
                RigEntry::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(|e| Entries(vec![e]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Entries, A::Error> {
                Vec::<RigEntry>::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(Entries)
            }
        }
        deserializer.deserialize_any(OneOrMany)
    }
}

/// An error in a config file, pointing at the spot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// `path:line:column`, or just the path.
    pub location: String,
    /// What is wrong, in one line.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Reads and parses `path`.
    pub fn load(path: &Path) -> anyhow::Result<Config> {
        let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        Ok(Config::parse(path, text)?)
    }

    /// Parses `text`; `path` names it in errors.
    pub fn parse(path: &Path, text: String) -> Result<Config, ConfigError> {
        let file: File = toml::from_str(&text).map_err(|e| {
            let location = match e.span() {
                Some(span) => location(path, &text, span.start),
                None => path.display().to_string(),
            };
            // toml's message is several lines with a source excerpt; the first line says it all.
            let message = e.message().lines().next().unwrap_or("invalid TOML").to_string();
            let message = match e.span() {
                Some(span) => explained(message, &text, span),
                None => message,
            };
            ConfigError { location, message }
        })?;
        let rigs = file
            .rig
            .into_iter()
            .flat_map(|(name, entries)| entries.0.into_iter().map(move |e| (name.clone(), e)))
            .collect();
        let mut pins = BTreeMap::new();
        for (name, hash) in file.sha256 {
            let hex = hash.get_ref().to_ascii_lowercase();
            if hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                let message = format!("sha256 of `{}` is not 64 hex digits", name.get_ref());
                return Err(ConfigError { location: location(path, &text, hash.span().start), message });
            }
            pins.insert(name.into_inner(), hex);
        }
        Ok(Config { path: path.to_owned(), text, defaults: file.defaults, rigs, pins })
    }

    /// A config with no file behind it (no `rigs.toml`; rigs run with their defaults).
    pub fn empty() -> Config {
        let path = PathBuf::from("rigs.toml");
        Config { path, text: String::new(), defaults: Settings::default(), rigs: vec![], pins: BTreeMap::new() }
    }

    /// An error at byte `offset` of the file.
    pub fn error_at(&self, offset: usize, message: impl Into<String>) -> ConfigError {
        ConfigError { location: location(&self.path, &self.text, offset), message: message.into() }
    }
}

/// toml's message, said of what the user wrote where it does not: an integer too large for TOML's 64 bits
/// reads "expected any valid TOML value", and a duration written as a number "expected a string".
fn explained(message: String, text: &str, span: std::ops::Range<usize>) -> String {
    let at = text.get(span.clone()).unwrap_or("").trim();
    let digits = at.trim_start_matches(['+', '-']).replace('_', "");
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && at.replace('_', "").parse::<i64>().is_err() {
        return format!("`{at}` is too large for a TOML integer (at most {})", i64::MAX);
    }
    if !message.ends_with("expected a string") {
        return message;
    }
    let line_start = text[..span.start.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let key = text[line_start..span.start.min(text.len())].split('=').next().unwrap_or("").trim();
    let example = match key {
        "warmup" | "measurement" | "deadline" | "budget" => format!("\"{at}s\""),
        "target_ci" => "\"1%\"".into(),
        "memory_limit" => "\"512MiB\"".into(),
        "sampling" => "\"flat\"".into(),
        _ => return message,
    };
    format!("{message}: `{key}` is written with its unit, as a string, e.g. {key} = {example}")
}

fn location(path: &Path, text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{}:{line}:{column}", path.display())
}

/// Parses `"1%"` (or `"0.01"`) into a fraction.
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let (number, scale) = match text.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (text, 1.0),
    };
    match number.parse::<f64>() {
        Ok(v) if v > 0.0 && v * scale < 1.0 => Ok(v * scale),
        _ => Err(format!("`{text}` is not a precision between 0 and 100% (try \"1%\")")),
    }
}

/// `--threshold`: a fraction as [`parse_fraction`] reads it, refused in words about thresholds.
pub fn parse_threshold_fraction(text: &str) -> Result<f64, String> {
    parse_fraction(text)
        .map_err(|_| format!("`{}` is not a threshold: give a change between 0 and 100%, e.g. \"3%\"", text.trim()))
}

/// Parses `"512MiB"`, `"2GiB"`, `"64KiB"`, `"1GB"`, `"1000000"` (bytes).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        other => return Err(format!("`{text}`: unknown size unit `{other}` (B, KiB, MiB, GiB, KB, MB, GB)")),
    };
    let number: u64 = number.parse().map_err(|_| format!("`{text}` is not a size like \"512MiB\""))?;
    number.checked_mul(scale).filter(|&n| n > 0).ok_or_else(|| format!("`{text}` is not a usable size"))
}

/// The longest duration accepted anywhere: what nanoseconds in a `u64` can hold (about 584 years). Plans
/// carry durations as nanoseconds, and a longer one would wrap.
pub const MAX_DURATION: Duration = Duration::from_nanos(u64::MAX);

/// Parses `"1s"`, `"500ms"`, `"2m"`, `"1.5s"`, `"250us"`, `"100ns"`, `"1h"`; `"0s"` is zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| format!("`{text}` is not a duration (try \"500ms\" or \"2s\")"))?;
    let seconds = match unit.trim() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "" => return Err(format!("`{text}` has no unit (write `{text}s`, `{text}ms`, ...: ns, us, ms, s, m or h)")),
        other => return Err(format!("unknown duration unit `{other}` in `{text}` (use ns, us, ms, s, m or h)")),
    };
    match Duration::try_from_secs_f64(value * seconds) {
        Ok(d) if d <= MAX_DURATION => Ok(d),
        _ => Err(format!("`{text}` is too long (at most {} hours)", MAX_DURATION.as_secs() / 3600)),
    }
}

/// [`parse_duration`], refusing zero: for a deadline, a measurement time or a budget, where zero cannot measure.
pub fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        Duration::ZERO => Err(format!("`{text}` is zero: nothing can be measured in no time")),
        d => Ok(d),
    }
}

/// Nanoseconds of a duration no longer than [`MAX_DURATION`].
pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5m"), Ok(Duration::from_secs(90)));
        assert!(parse_duration("5 parsecs").unwrap_err().contains("unknown duration unit"));
        // regression: a number without a unit read "unknown duration unit `` in `5`".
        assert_eq!(parse_duration("5").unwrap_err(), "`5` has no unit (write `5s`, `5ms`, ...: ns, us, ms, s, m or h)");
        assert!(parse_duration("fast").unwrap_err().contains("not a duration"));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        assert!(parse_positive_duration("0s").unwrap_err().contains("is zero"));
    }

    #[test]
    fn an_absurd_duration_is_an_error_not_a_panic() {
        // regression: `--deadline 99999999999999999999h` panicked in `Duration::from_secs_f64` (exit 101).
        for text in ["99999999999999999999h", "600000000000h", "18446744074s"] {
            assert!(parse_duration(text).unwrap_err().contains("too long"), "{text}");
        }
        assert_eq!(parse_duration("18446744073s").map(nanos), Ok(18_446_744_073_000_000_000));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("2 GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("5XB").unwrap_err().contains("unknown size unit `XB`"));
        assert!(parse_size("0MiB").unwrap_err().contains("not a usable size"));
        assert!(parse_size("MiB").unwrap_err().contains("not a size"));
    }

    #[test]
    fn syntax_errors_point_at_line_and_column() {
        let err = Config::parse(Path::new("rigs.toml"), "[rig.wal]\nparams = { rows = }\n".into()).unwrap_err();
        assert!(err.location.starts_with("rigs.toml:2:"), "{err}");
    }

    #[test]
    fn a_number_where_a_duration_goes_and_an_integer_past_64_bits_are_said_in_their_own_words() {
        // regression: "expected a string" with no hint, and "expected any valid TOML value".
        let err = Config::parse(Path::new("rigs.toml"), "[defaults]\nmeasurement = 5\n".into()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "rigs.toml:2:15: invalid type: integer `5`, expected a string: `measurement` is written with its unit, \
             as a string, e.g. measurement = \"5s\""
        );
        let text = "[rig.wal]\nparams = { rows = 99999999999999999999 }\n";
        let err = Config::parse(Path::new("rigs.toml"), text.into()).unwrap_err();
        assert_eq!(
            err.message, "`99999999999999999999` is too large for a TOML integer (at most 9223372036854775807)",
            "{err}"
        );
    }

    #[test]
    fn unknown_keys_are_rejected_with_their_position() {
        let err = Config::parse(Path::new("r.toml"), "[rig.wal]\nparmas = {}\n".into()).unwrap_err();
        assert_eq!(err.location, "r.toml:2:1");
        assert!(err.message.contains("unknown field `parmas`"), "{err}");
    }

    #[test]
    fn rigs_keep_file_order() {
        let text = "[rig.zeta]\n[rig.alpha]\n[rig.mid]\n".to_string();
        let config = Config::parse(Path::new("r.toml"), text).unwrap();
        let names: Vec<&str> = config.rigs.iter().map(|(k, _)| k.get_ref().as_str()).collect();
        assert_eq!(names, ["zeta", "alpha", "mid"]);
    }

    #[test]
    fn an_array_of_tables_gives_one_entry_each_with_spans_intact() {
        let text = "[[rig.k]]\nparams = { a = 1 }\n[[rig.k]]\nparams = { a = 2 }\n[rig.w]\n".to_string();
        let config = Config::parse(Path::new("r.toml"), text).unwrap();
        let names: Vec<&str> = config.rigs.iter().map(|(k, _)| k.get_ref().as_str()).collect();
        assert_eq!(names, ["k", "k", "w"]);
        let (key, _) = config.rigs[1].1.params.first().unwrap();
        assert_eq!(config.error_at(key.span().start, "x").location, "r.toml:4:12");
        let err = Config::parse(Path::new("r.toml"), "[[rig.k]]\nparmas = 1\n".into()).unwrap_err();
        assert_eq!(err.location, "r.toml:2:1");
        assert!(err.message.contains("unknown field `parmas`"), "{err}");
    }
}
