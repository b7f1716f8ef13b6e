use std::path::Path;

use benchhost_plugin_api::{Descriptor, Param};
use serde_json::json;

use super::*;

struct Fake {
    rigs: Vec<Descriptor>,
}

impl Catalog for Fake {
    fn descriptor(&self, rig: &str) -> Option<&Descriptor> {
        self.rigs.iter().find(|d| d.name == rig)
    }
    fn names(&self) -> Vec<String> {
        self.rigs.iter().map(|d| d.name.clone()).chain(["compaction".to_string()]).collect()
    }
    fn build_hint(&self, rig: &str) -> Option<String> {
        (rig == "compaction").then(|| "cargo build -p rig-compaction".to_string())
    }
}

fn catalog() -> Fake {
    let kafka = Descriptor::run("kafka_topology", "")
        .param(Param::int("partitions", 16).range(1, 1024))
        .param(Param::int("threads", 4).range(1, 64))
        .param(Param::choice("mode", "perthread", &["perthread", "split"]))
        .param(Param::int("work_us", 0))
        .param(Param::float("ratio", 0.5))
        .param(Param::bool("verbose", false));
    let wal = Descriptor::iterations("wal", "").param(Param::int("rows", 1000)).param(Param::choice(
        "compression",
        "zstd",
        &["none", "lz4", "zstd"],
    ));
    let bench = Descriptor::iterations("sorting", "a bench target")
        .param(Param::choice("id", "sort/10", &["sort/10", "sort/1000", "dedup"]))
        .cell_per("id");
    Fake { rigs: vec![kafka, wal, bench] }
}

fn expand_text(text: &str, overrides: &Overrides) -> Result<Vec<Cell>, String> {
    let config = Config::parse(Path::new("rigs.toml"), text.to_string()).map_err(|e| e.to_string())?;
    expand(&config, &catalog(), overrides).map(|m| m.cells).map_err(|e| e.to_string())
}

fn err(text: &str) -> String {
    expand_text(text, &Overrides::default()).unwrap_err()
}

#[test]
fn cartesian_product_in_file_order_minus_excludes() {
    let text = r#"
[rig.kafka_topology]
params = { partitions = 8 }
matrix = { mode = ["perthread", "split"], work_us = [0, 10] }
exclude = [{ mode = "split", work_us = 10 }]
[rig.wal]
"#;
    let cells = expand_text(text, &Overrides::default()).unwrap();
    let shown: Vec<String> = cells
        .iter()
        .map(|c| {
            format!(
                "{} {} {}",
                c.rig,
                c.params.get("mode").map_or(json!(null), |v| v.clone()),
                c.params.get("work_us").map_or(json!(null), |v| v.clone())
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            "kafka_topology \"perthread\" 0",
            "kafka_topology \"perthread\" 10",
            "kafka_topology \"split\" 0",
            "wal null null"
        ]
    );
    assert_eq!(cells[0].params["partitions"], json!(8));
    assert_eq!(cells[0].params["threads"], json!(4), "defaults fill the rest");
    assert_eq!(cells.iter().map(|c| c.index).collect::<Vec<_>>(), [0, 1, 2, 3]);
}

#[test]
fn unknown_parameter_names_file_line_column_rig_and_nearest_name() {
    let e = err("[rig.kafka_topology]\nparams = { partiton = 16 }\n");
    assert_eq!(e, "rigs.toml:2:12: unknown parameter `partiton` for rig `kafka_topology` (did you mean `partitions`?)");
}

#[test]
fn unknown_rig_suggests_and_unbuilt_rig_says_how_to_build() {
    assert_eq!(err("[rig.wall]\n"), "rigs.toml:1:6: unknown rig `wall` (did you mean `wal`?)");
    assert_eq!(
        err("[rig.compaction]\n"),
        "rigs.toml: no rig of the file is built (compaction); build it with `cargo build -p rig-compaction`"
    );
    let named = Overrides { rigs: vec!["compaction".into()], ..Overrides::default() };
    assert_eq!(
        expand_text("", &named).unwrap_err(),
        "--plugin: rig `compaction` is not built; build it with `cargo build -p rig-compaction`",
        "a rig the command line names must be built"
    );
}

#[test]
fn rigs_of_the_file_that_are_not_built_are_left_out_and_named() {
    // regression: the first rig of rigs.toml that was not built stopped every command, filtered or not.
    let text = "[[rig.compaction]]\n[rig.wal]\n[rig.third_party]\n[[rig.compaction]]\n";
    let config = Config::parse(Path::new("rigs.toml"), text.to_string()).unwrap();
    let matrix = expand(&config, &catalog(), &Overrides::default()).unwrap();
    assert_eq!(matrix.cells.iter().map(|c| c.rig.as_str()).collect::<Vec<_>>(), ["wal"]);
    let unbuilt: Vec<(&str, Option<&str>)> =
        matrix.unbuilt.iter().map(|u| (u.rig.as_str(), u.build.as_deref())).collect();
    assert_eq!(
        unbuilt,
        [("compaction", Some("cargo build -p rig-compaction")), ("third_party", None)],
        "each once, in file order; a rig of no known source tree has no command"
    );
    assert_eq!(build_advice(&matrix.unbuilt), "; build it with `cargo build -p rig-compaction`");
    let two = [
        Unbuilt { rig: "a".into(), build: Some("cargo build --release -p rig-x".into()) },
        Unbuilt { rig: "b".into(), build: Some("cargo build --release -p rig-x".into()) },
        Unbuilt { rig: "c".into(), build: Some("cargo build --release -p rig-y".into()) },
    ];
    assert_eq!(build_advice(&two), "; build them with `cargo build --release -p rig-x -p rig-y`");
}

#[test]
fn type_allowed_set_range_and_empty_axis_errors() {
    assert_eq!(
        err("[rig.kafka_topology]\nparams = { partitions = \"16\" }\n"),
        "rigs.toml:2:25: parameter `partitions` of rig `kafka_topology` takes an integer, not string `\"16\"`"
    );
    assert_eq!(
        err("[rig.kafka_topology]\nmatrix = { mode = [\"perthred\"] }\n"),
        "rigs.toml:2:19: `mode = \"perthred\"` is not allowed for rig `kafka_topology` (allowed: \"perthread\", \"split\") (did you mean `perthread`?)"
    );
    assert_eq!(
        err("[rig.kafka_topology]\nparams = { partitions = 0 }\n"),
        "rigs.toml:2:25: `partitions = 0` is out of range for rig `kafka_topology` (1 ..= 1024)"
    );
    assert_eq!(
        err("[rig.kafka_topology]\nmatrix = { threads = [] }\n"),
        "rigs.toml:2:22: axis `threads` of rig `kafka_topology` has no values"
    );
    assert_eq!(
        err("[rig.kafka_topology]\nmatrix = { threads = 4 }\n"),
        "rigs.toml:2:22: axis `threads` of rig `kafka_topology` must be a list of values"
    );
    assert!(err("[rig.kafka_topology]\nparams = { verbose = 1 }\n").contains("takes a boolean, not integer `1`"));
}

#[test]
fn a_key_both_fixed_and_axis_and_a_bad_exclude_are_errors() {
    let both = err("[rig.wal]\nparams = { rows = 1 }\nmatrix = { rows = [1, 2] }\n");
    assert_eq!(both, "rigs.toml:2:12: `rows` of rig `wal` is both a fixed parameter and a matrix axis");
    let ex = err("[rig.wal]\nmatrix = { rows = [1, 2] }\nexclude = [{ compression = \"lz4\" }]\n");
    assert_eq!(
        ex,
        "rigs.toml:3:14: `exclude` names `compression`, which is not a matrix axis of rig `wal` (axes: rows)"
    );
}

#[test]
fn matrix_over_the_cell_limit_is_refused_unless_raised() {
    let text = "[rig.kafka_topology]\nmatrix = { partitions = [1,2,3,4,5,6,7,8,9,10], threads = [1,2,3,4,5,6,7,8,9,10], work_us = [1,2,3,4,5,6,7,8,9,10,11] }\n";
    let too_many = Overrides { max_cells: Some(1000), ..Overrides::default() };
    assert!(
        expand_text(text, &too_many).unwrap_err().contains("over 1000 cells (rig `kafka_topology` alone has 1100)")
    );
    assert_eq!(expand_text(text, &Overrides::default()).unwrap().len(), 1100);
    let limit = format!("[defaults]\nmax_cells = 5\n{text}");
    assert!(expand_text(&limit, &Overrides::default()).unwrap_err().contains("over 5 cells"));
}

#[test]
fn set_overrides_params_and_collapses_axes_and_plugin_narrows() {
    let text = "[rig.kafka_topology]\nmatrix = { mode = [\"perthread\", \"split\"], threads = [1, 2] }\n[rig.wal]\n";
    let overrides = Overrides {
        rigs: vec!["kafka_topology".into()],
        sets: vec![("threads".into(), "8".into()), ("mode".into(), "split".into())],
        ..Overrides::default()
    };
    let cells = expand_text(text, &overrides).unwrap();
    assert_eq!(cells.len(), 1);
    assert_eq!((cells[0].params["threads"].clone(), cells[0].params["mode"].clone()), (json!(8), json!("split")));
    let typo = Overrides { sets: vec![("thread".into(), "8".into())], ..Overrides::default() };
    assert_eq!(
        expand_text(text, &typo).unwrap_err(),
        "--set: no selected rig (kafka_topology, wal) has a parameter `thread` (did you mean `threads`?)"
    );
    let bad = Overrides { sets: vec![("threads".into(), "many".into())], ..Overrides::default() };
    assert!(
        expand_text(text, &bad)
            .unwrap_err()
            .starts_with("--set: parameter `threads` of rig `kafka_topology` takes an integer")
    );
}

#[test]
fn plugin_not_in_the_file_runs_with_defaults_and_quick_shrinks_the_plan() {
    let overrides = Overrides { rigs: vec!["wal".into()], quick: true, ..Overrides::default() };
    let cells = expand_text("", &overrides).unwrap();
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].params["compression"], json!("zstd"));
    assert_eq!((cells[0].plan.samples, cells[0].plan.warmup_ns, cells[0].plan.repetitions), (10, 100_000_000, 2));
    assert_eq!(cells[0].plan.sample_ns, 20_000_000, "200 ms over 10 samples");
    assert!(!cells[0].plan.warmup_run, "a quick run-style cell discards no first run");
    let asked = Overrides { warmup: Some(Duration::from_millis(50)), ..overrides.clone() };
    assert!(expand_text("", &asked).unwrap()[0].plan.warmup_run, "unless a warm-up is asked for");
    let full = expand_text("[rig.wal]\n", &Overrides::default()).unwrap();
    assert!(full[0].plan.warmup_run);
    assert!(!expand_text("[rig.wal]\nwarmup = \"0s\"\n", &Overrides::default()).unwrap()[0].plan.warmup_run);
    let missing = Overrides { rigs: vec!["wol".into()], ..Overrides::default() };
    assert_eq!(expand_text("", &missing).unwrap_err(), "--plugin: unknown rig `wol` (did you mean `wal`?)");
}

#[test]
fn settings_come_from_defaults_then_rig_and_bad_durations_point_at_the_spot() {
    let text = "[defaults]\nsamples = 7\ndeadline = \"5s\"\n[rig.wal]\nsamples = 3\nmeasurement = \"30ms\"\n[rig.kafka_topology]\n";
    let cells = expand_text(text, &Overrides::default()).unwrap();
    assert_eq!((cells[0].plan.samples, cells[0].plan.sample_ns), (3, 10_000_000));
    assert_eq!((cells[1].plan.samples, cells[1].deadline), (7, Duration::from_secs(5)));
    assert_eq!(
        err("[defaults]\nwarmup = \"1 fortnight\"\n[rig.wal]\n"),
        "rigs.toml:2:10: unknown duration unit `fortnight` in `1 fortnight` (use ns, us, ms, s, m or h)"
    );
}

#[test]
fn quick_table_replaces_params_only_under_quick_and_is_validated_always() {
    let text = "[rig.wal]\nmatrix = { rows = [1000, 10000] }\nquick = { rows = 50 }\n";
    let full = expand_text(text, &Overrides::default()).unwrap();
    assert_eq!(full.iter().map(|c| c.params["rows"].clone()).collect::<Vec<_>>(), [json!(1000), json!(10000)]);
    let quick = expand_text(text, &Overrides { quick: true, ..Overrides::default() }).unwrap();
    assert_eq!(quick.len(), 1);
    assert_eq!(quick[0].params["rows"], json!(50));
    assert_eq!(
        err("[rig.wal]\nquick = { rowz = 5 }\n"),
        "rigs.toml:2:11: unknown parameter `rowz` for rig `wal` (did you mean `rows`?)"
    );
}

#[test]
fn aliases_and_repeated_tables_of_one_rig() {
    let mut fake = catalog();
    fake.rigs[1].params[0] = Param::int("rows", 1000).alias("row_count");
    let text = "[[rig.wal]]\nparams = { row_count = 7 }\n[[rig.wal]]\nmatrix = { compression = [\"lz4\", \"none\"] }\n";
    let config = Config::parse(Path::new("rigs.toml"), text.to_string()).unwrap();
    let cells = expand(&config, &fake, &Overrides { rigs: vec!["wal".into()], ..Overrides::default() }).unwrap().cells;
    let shown: Vec<(Value, Value)> =
        cells.iter().map(|c| (c.params["rows"].clone(), c.params["compression"].clone())).collect();
    assert_eq!(shown, [(json!(7), json!("zstd")), (json!(1000), json!("lz4")), (json!(1000), json!("none"))]);
    assert!(!cells[0].params.contains_key("row_count"), "records use the canonical name");
}

#[test]
fn nan_and_infinity_are_config_errors_before_anything_runs() {
    // regression: `--set ratio=nan` and `ratio = inf` passed validation and showed as `ratio=null`.
    for text in ["nan", "inf", "-inf"] {
        let set = Overrides { sets: vec![("ratio".into(), text.into())], ..Overrides::default() };
        let e = expand_text("[rig.kafka_topology]\n", &set).unwrap_err();
        assert!(
            e.starts_with("--set: `ratio = ") && e.ends_with("of rig `kafka_topology` is not a finite number"),
            "{e}"
        );
    }
    assert_eq!(
        err("[rig.kafka_topology]\nparams = { ratio = inf }\n"),
        "rigs.toml:2:20: `ratio = inf` of rig `kafka_topology` is not a finite number"
    );
}

#[test]
fn an_integer_too_large_is_out_of_range_not_a_string() {
    // regression: `--set threads=99999999999999999999` said "takes an integer, not string".
    let set = Overrides { sets: vec![("threads".into(), "99999999999999999999".into())], ..Overrides::default() };
    assert_eq!(
        expand_text("[rig.kafka_topology]\n", &set).unwrap_err(),
        "--set: `threads=99999999999999999999`: 99999999999999999999 is out of range for an integer (at most \
         9223372036854775807)"
    );
}

#[test]
fn zero_durations_that_cannot_measure_are_refused_where_they_are_written() {
    // regression: `measurement = "0s"` gave samples of one iteration (the noop read 105 ns, not 26), and a zero
    // deadline failed every cell.
    assert_eq!(
        err("[defaults]\nmeasurement = \"0s\"\n[rig.wal]\n"),
        "rigs.toml:2:15: `0s` is zero: nothing can be measured in no time"
    );
    assert_eq!(
        err("[rig.wal]\ndeadline = \"0ms\"\n"),
        "rigs.toml:2:12: `0ms` is zero: nothing can be measured in no time"
    );
    assert!(err("[rig.wal]\ndeadline = \"99999999999999999999h\"\n").contains("is too long"));
    let cells = expand_text("[rig.wal]\nwarmup = \"0s\"\n", &Overrides::default()).unwrap();
    assert_eq!(cells[0].plan.warmup_ns, 0, "no warm-up is a choice, not an error");
}

#[test]
fn the_command_line_measurement_settings_override_the_file_and_quick() {
    let overrides = Overrides {
        quick: true,
        warmup: Some(Duration::from_millis(7)),
        measurement: Some(Duration::from_secs(2)),
        samples: Some(20),
        repetitions: Some(9),
        ..Overrides::default()
    };
    let cells = expand_text("[defaults]\nsamples = 50\n[rig.wal]\n", &overrides).unwrap();
    let plan = cells[0].plan;
    assert_eq!((plan.warmup_ns, plan.samples, plan.sample_ns, plan.repetitions), (7_000_000, 20, 100_000_000, 9));
}

#[test]
fn a_cell_limit_of_zero_is_refused_where_it_was_set() {
    // regression: `--max-cells 0` was reported at `rigs.toml:1:1`.
    let zero = Overrides { max_cells: Some(0), ..Overrides::default() };
    assert_eq!(expand_text("[rig.wal]\n", &zero).unwrap_err(), "--max-cells: max_cells must be at least 1");
    let one = Overrides { max_cells: Some(1), ..Overrides::default() };
    let two = "[rig.wal]\nmatrix = { rows = [1, 2] }\n";
    assert!(expand_text(two, &one).unwrap_err().starts_with("--max-cells: the matrix has over 1 cells"));
    assert!(err(&format!("[defaults]\nmax_cells = 1\n{two}")).starts_with("rigs.toml:2:13: the matrix has over 1"));
}

#[test]
fn a_parameter_set_where_it_means_nothing_is_refused_naming_both() {
    let querier = Descriptor::iterations("querier", "")
        .param(Param::choice("shape", "lookup", &["lookup", "oldest_first"]))
        .param(Param::choice("order", "unattested", &["unattested", "attested"]).only_where("shape", ["oldest_first"]));
    let catalog = Fake { rigs: vec![querier] };
    let expand_with = |text: &str, sets: Vec<(String, String)>| {
        let config = Config::parse(Path::new("rigs.toml"), text.to_string()).map_err(|e| e.to_string())?;
        expand(&config, &catalog, &Overrides { sets, ..Overrides::default() })
            .map(|m| m.cells)
            .map_err(|e| e.to_string())
    };
    let text =
        "[rig.querier]\nmatrix = { shape = [\"lookup\", \"oldest_first\"], order = [\"unattested\", \"attested\"] }\n";
    assert_eq!(
        expand_with(text, vec![]).unwrap_err(),
        "rigs.toml:2:48: `order = attested` of rig `querier` applies only where `shape` is one of oldest_first, and a \
         cell has shape = lookup (exclude that combination or narrow the matrix)"
    );
    let excluded = format!("{text}exclude = [{{ shape = \"lookup\", order = \"attested\" }}]\n");
    assert_eq!(expand_with(&excluded, vec![]).unwrap().len(), 3, "the default stays allowed everywhere");
    let set = vec![("order".to_string(), "attested".to_string())];
    let err = expand_with("[rig.querier]\n", set).unwrap_err();
    assert!(err.starts_with("--set: `order = attested` of rig `querier`"), "{err}");
}

#[test]
fn a_bench_target_without_a_table_runs_a_cell_per_id_and_a_table_or_a_set_narrows_it() {
    let ids = |text: &str, overrides: &Overrides| -> Vec<String> {
        let cells = expand_text(text, overrides).unwrap();
        cells.iter().map(|c| c.params["id"].as_str().unwrap().to_string()).collect()
    };
    let named = Overrides { rigs: vec!["sorting".into()], ..Overrides::default() };
    assert_eq!(ids("", &named), ["sort/10", "sort/1000", "dedup"], "every id, in the order listed");
    assert_eq!(ids("[rig.sorting]\nmatrix = { id = [\"dedup\"] }\n", &named), ["dedup"], "a table says which");
    let set = Overrides { sets: vec![("id".into(), "sort/10".into())], ..named };
    assert_eq!(ids("", &set), ["sort/10"], "--set picks one");
    assert_eq!(expand_text("[rig.wal]\n", &Overrides::default()).unwrap().len(), 1, "other rigs: their defaults");
}
