//! Property-based fuzzing of the decoders that read what others wrote: the results-stream reader, the
//! `rigs.toml` parser and validator, the child -> parent protocol decoder, and every duration, size, fraction
//! and number the command line or `rigs.toml` takes. Arbitrary and mutated inputs
//! must give a value or an error, never a panic. CI runs proptest's default 256 cases per target; the long run:
//! `PROPTEST_CASES=200000 cargo test -p benchhost --release --lib fuzz`. A crash found becomes a named test.

use std::path::Path;

use benchhost_record::reader;

use crate::plan::config::{Config, MAX_DURATION, parse_duration, parse_fraction, parse_size};
use crate::plan::matrix::{self, Catalog};
use crate::plan::settings::Overrides;
use crate::proc::protocol;
use benchhost_plugin_api::{Descriptor, Metric, Param};
use clap::Parser;
use proptest::prelude::*;

const STREAM: &str = include_str!("../tests/fixtures/streams/seed003.jsonl");
const RIGS_TOML: &str = include_str!("../../rigs.toml");
const MESSAGES: &[&str] = &[
    r#"{"type":"hello","magic":"benchhost-cell","protocol":1}"#,
    r#"{"type":"phase","phase":"measure"}"#,
    r#"{"type":"sample","iterations":100,"ns":123456}"#,
    r#"{"type":"outcome","counters":{"rows_in":1000,"rows_out":1000}}"#,
    r#"{"type":"page_faults","minor":12}"#,
    r#"{"type":"done"}"#,
];

/// `text` with a few random byte edits: flips, insertions, deletions.
fn mutated(text: &'static str) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8).prop_map(move |edits| {
        let mut bytes = text.as_bytes().to_vec();
        for (at, byte, kind) in edits {
            let i = at.index(bytes.len().max(1));
            match kind {
                0 if i < bytes.len() => bytes[i] = byte,
                1 => bytes.insert(i.min(bytes.len()), byte),
                _ if i < bytes.len() => {
                    bytes.remove(i);
                }
                _ => {}
            }
        }
        bytes
    })
}

struct OneRig(Descriptor);

impl Catalog for OneRig {
    fn descriptor(&self, rig: &str) -> Option<&Descriptor> {
        (rig == self.0.name).then_some(&self.0)
    }
    fn names(&self) -> Vec<String> {
        vec![self.0.name.clone()]
    }
    fn build_hint(&self, _: &str) -> Option<String> {
        None
    }
}

fn wal() -> OneRig {
    OneRig(
        Descriptor::iterations("wal", "fuzz stand-in")
            .param(Param::int("rows", 1000).range(1, 10_000_000))
            .param(Param::choice("compression", "zstd", &["none", "lz4", "zstd"]))
            .metric(Metric::iter_time("roundtrip_time")),
    )
}

/// Text shaped like a number with a unit, often absurd: digits (up to 40), maybe a fraction, an exponent, a
/// sign, spaces, and a unit that may or may not exist.
fn number_like() -> impl Strategy<Value = String> {
    let unit = prop::sample::select(vec![
        "", "ns", "us", "µs", "ms", "s", "m", "min", "h", "d", "%", "KiB", "MiB", "GiB", "KB", "GB", "B", "x",
    ]);
    ("[-+ ]?", "[0-9]{0,40}", "(\\.[0-9]{0,20})?", "(e[-+]?[0-9]{1,4})?", " ?", unit)
        .prop_map(|(sign, int, frac, exp, space, unit)| format!("{sign}{int}{frac}{exp}{space}{unit}"))
}

proptest! {
    #[test]
    fn durations_sizes_and_fractions_give_a_value_or_an_error(text in prop_oneof![number_like(), "\\PC{0,30}"]) {
        // regression: `99999999999999999999h` panicked in Duration::from_secs_f64 (exit 101).
        if let Ok(d) = parse_duration(&text) {
            prop_assert!(d <= MAX_DURATION);
        }
        if let Ok(bytes) = parse_size(&text) {
            prop_assert!(bytes > 0);
        }
        if let Ok(f) = parse_fraction(&text) {
            prop_assert!(f > 0.0 && f < 1.0);
        }
    }

    #[test]
    fn every_number_argument_of_run_parses_or_is_refused_by_clap(
        flag in prop::sample::select(vec![
            "--deadline", "--budget", "--warmup", "--measurement", "--samples", "--repetitions", "--resamples",
            "--max-cells", "--rounds", "--target-ci", "--threshold", "--shard",
        ]),
        value in prop_oneof![number_like(), "\\PC{0,20}"],
    ) {
        let _ = crate::cli::Cli::try_parse_from(["benchhost", "run", flag, value.as_str()]);
    }

    #[test]
    fn every_set_value_expands_or_is_a_config_error(value in prop_oneof![number_like(), "\\PC{0,20}"]) {
        let config = Config::parse(Path::new("rigs.toml"), "[rig.wal]\n".into()).unwrap();
        for key in ["rows", "compression"] {
            let overrides = Overrides { sets: vec![(key.into(), value.clone())], ..Overrides::default() };
            if let Ok(matrix::Matrix { cells, .. }) = matrix::expand(&config, &wal(), &overrides) {
                prop_assert!(cells.iter().all(|c| c.params.values().all(|v| !v.is_null())), "no NaN became null");
            }
        }
    }

    #[test]
    fn the_reader_survives_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        let _ = reader::parse(Path::new("fuzz.jsonl"), &bytes);
    }

    #[test]
    fn the_reader_survives_mutated_streams_and_never_invents_records(bytes in mutated(STREAM)) {
        if let Ok(stream) = reader::parse(Path::new("fuzz.jsonl"), &bytes) {
            prop_assert!(stream.records.len() <= bytes.split(|&b| b == b'\n').count());
        }
    }

    #[test]
    fn the_config_survives_any_text(text in "\\PC{0,400}") {
        if let Ok(config) = Config::parse(Path::new("rigs.toml"), text) {
            let _ = matrix::expand(&config, &wal(), &Overrides::default());
        }
    }

    #[test]
    fn the_config_survives_mutated_files(bytes in mutated(RIGS_TOML)) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Ok(config) = Config::parse(Path::new("rigs.toml"), text) {
            let overrides = Overrides { rigs: vec!["wal".into()], ..Overrides::default() };
            let _ = matrix::expand(&config, &wal(), &overrides);
        }
    }

    #[test]
    fn the_protocol_decoder_survives_any_line(line in "\\PC{0,300}") {
        let _ = protocol::decode(&line);
        let _ = protocol::decode_hello(&line);
    }

    #[test]
    fn the_protocol_decoder_survives_mutated_messages(
        bytes in (0..MESSAGES.len()).prop_flat_map(|i| mutated(MESSAGES[i]))
    ) {
        let line = String::from_utf8_lossy(&bytes).into_owned();
        let _ = protocol::decode(&line);
        let _ = protocol::decode_hello(&line);
    }
}

#[test]
fn the_seed_inputs_are_valid_so_mutations_start_from_something_real() {
    assert_eq!(reader::parse(Path::new("s.jsonl"), STREAM.as_bytes()).unwrap().records.len(), 3);
    assert!(Config::parse(Path::new("rigs.toml"), RIGS_TOML.into()).is_ok());
    for line in MESSAGES.iter().skip(1) {
        assert!(protocol::decode(line).is_ok(), "{line}");
    }
    assert!(protocol::decode_hello(MESSAGES[0]).is_ok());
}
