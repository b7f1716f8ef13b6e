//! `benchhost check PATH.so`: what a rig author runs before publishing a plugin. The library is probed in a
//! child like any plugin; every descriptor is validated (names, unique parameters and metrics, defaults inside
//! their own allowed sets and ranges); each rig then runs once with its defaults under `--quick` settings
//! through the real child-process path, and its declared invariants are checked. One line per rig, and one for
//! the library's layouts when `benchhost build` kept them (each loaded as a plugin, the same plugin as the library).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use benchhost_plugin_api::Descriptor;

use crate::plan::config::Config;
use crate::plan::matrix;
use crate::plan::settings::Overrides;
use crate::plugin::loader::{Loader, Plugin, Trust, probe};
use crate::run::child_executor::ChildExecutor;
use crate::run::context::{RunContext, WorkDir};
use crate::run::in_rounds;
use benchhost_record::{Kind, Record};

/// Why discovery would never load `file`, in one line: it is not a shared library, or not named as a plugin.
fn not_a_plugin(file: &Path) -> Option<String> {
    let mut magic = [0u8; 4];
    let read = std::fs::File::open(file).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic));
    if read.is_err() || &magic != b"\x7fELF" {
        return Some("not a shared library (no ELF header): give a plugin built as a cdylib".into());
    }
    (!crate::plugin::loader::named_as_plugin(file)).then(|| {
        "not named as a plugin: benchhost loads libNAME.so (cargo's name for a cdylib), not a hashed copy in deps/"
            .into()
    })
}

/// Checks the plugin at `path`; exit code 1 when any rig (or the library itself) fails.
pub fn check(path: &Path, allow_writable: bool, deadline: Duration) -> Result<ExitCode> {
    let file = path.canonicalize().with_context(|| format!("reading {}", path.display()))?;
    if !file.is_file() {
        anyhow::bail!(
            "{} is not a file: give the plugin library itself (e.g. target/release/libmy_rig.so)",
            path.display()
        );
    }
    if let Some(why) = not_a_plugin(&file) {
        say(&format!("FAIL {}: {why}", file.display()))?;
        return Ok(ExitCode::from(1));
    }
    let dir = file.parent().context("the plugin has no parent directory")?.to_path_buf();
    let exe = std::env::current_exe().context("locating the benchhost executable")?;
    let loader = Loader::discover(&[dir], &exe, &Trust { allow_writable, ..Trust::default() });
    if let Some(rejected) = loader.rejected.iter().find(|r| r.path == file) {
        say(&format!("FAIL {}: {}", file.display(), rejected.reason))?;
        return Ok(ExitCode::from(1));
    }
    let Some(plugin) = loader.plugins.iter().find(|p| p.path == file) else {
        say(&format!("FAIL {}: not loaded (another library in its directory provides the same rigs)", file.display()))?;
        return Ok(ExitCode::from(1));
    };
    let info = &plugin.info;
    say(&format!("{} {} (plugin-api {}, {})", info.name, info.version, info.api_version, info.build.profile))?;
    let mut failed = 0;
    let mut runnable = Vec::new();
    for descriptor in &plugin.info.rigs {
        let problems = problems(descriptor);
        if problems.is_empty() {
            runnable.push(descriptor.name.clone());
        } else {
            failed += 1;
            say(&format!("FAIL {}: {}", descriptor.name, problems.join("; ")))?;
        }
    }
    failed += check_layouts(plugin, &exe)?;
    let overrides = Overrides { rigs: runnable, quick: true, deadline: Some(deadline), ..Overrides::default() };
    let cells = if overrides.rigs.is_empty() {
        Vec::new()
    } else {
        matrix::expand(&Config::empty(), &loader, &overrides)?.cells
    };
    let work_dir = WorkDir::new("check")?;
    let scratch = work_dir.path().join("check.jsonl");
    let run_info = crate::run::provenance::current();
    let mut sink = benchhost_record::sink::Sink::open(&scratch)?;
    let seeds = Some(work_dir.path().join("seeds"));
    let mut executor = ChildExecutor { exe, loader: &loader, against: None, quick: true, seeds };
    let mut ctx = RunContext {
        catalog: &loader,
        executor: &mut executor,
        run_info: &run_info,
        work_dir,
        rounds: 1,
        instructions: None,
        written: 0,
        layouts: None,
    };
    let ran = in_rounds::run(&cells, &mut ctx, &mut sink);
    let _ = std::fs::remove_file(&scratch);
    for record in &ran?.records {
        let headline =
            loader.rig(&record.bench).and_then(|(_, d)| d.metrics_for(&record.variant).next()).map(|m| m.name.as_str());
        match verdict(record, headline) {
            Ok(line) => say(&format!("pass {}: {line}", record.bench))?,
            Err(why) => {
                failed += 1;
                say(&format!("FAIL {}: {why}", record.bench))?;
            }
        }
    }
    Ok(if failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The layouts kept beside the library (`benchhost build`): each is loaded in a child as any plugin is, and
/// must say of itself what the library says (its rigs, ABI and build): a layout differs in where its code lies,
/// nothing else. The number that failed.
fn check_layouts(plugin: &Plugin, exe: &Path) -> Result<u32> {
    let Some(variants) = plugin.variants() else { return Ok(0) };
    let seeds = variants.made();
    let probed = crate::in_order::map_in_order(seeds.clone(), 2, |seed| probe(exe, &variants.path(seed), None));
    let mut failed = 0;
    for (seed, info) in seeds.iter().zip(probed) {
        let why = match info {
            Ok(info) if info == plugin.info => continue,
            Ok(_) => "it says of itself other rigs or another build than the library it is a layout of".into(),
            Err(why) => why,
        };
        failed += 1;
        say(&format!("FAIL layout seed {seed}: {why} ({})", variants.path(*seed).display()))?;
    }
    if failed == 0 && !seeds.is_empty() {
        let list = seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        say(&format!("pass layouts (seeds {list}): each loads with the library's rigs"))?;
    }
    Ok(failed)
}

/// One line of the report, through the broken-pipe-safe path (`benchhost check x.so | head -1`).
fn say(line: &str) -> Result<()> {
    crate::run::output::print(&format!("{line}\n"))
}

/// What is wrong with a descriptor, before anything runs.
pub fn problems(d: &Descriptor) -> Vec<String> {
    let mut problems = Vec::new();
    let identifier = |name: &str| {
        name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.')
    };
    if !identifier(&d.name) {
        problems.push(format!("rig name `{}` is not lowercase letters, digits and `_`", d.name));
    }
    let mut seen = BTreeSet::new();
    for param in &d.params {
        if !identifier(&param.name) {
            problems.push(format!("parameter name `{}` is not lowercase letters, digits, `_` and `.`", param.name));
        }
        if !seen.insert(param.name.as_str()) {
            problems.push(format!("parameter `{}` is declared twice", param.name));
        }
        let default = toml::Value::try_from(&param.default);
        match default.map_err(|e| e.to_string()).and_then(|v| crate::plan::values::check_value(&d.name, param, &v)) {
            Ok(_) => {}
            Err(why) => {
                problems.push(format!("the default of `{}` is refused by its own declaration: {why}", param.name))
            }
        }
    }
    // A parameter or a metric that applies only where another parameter has some values: that parameter must
    // be declared, and allow them.
    let params =
        d.params.iter().filter_map(|p| Some((format!("`{}` applies", p.name), Some(&p.name), p.only_where.as_ref()?)));
    let metrics = d
        .metrics
        .iter()
        .filter_map(|m| Some((format!("metric `{}` is reported", m.name), None, m.only_where.as_ref()?)));
    for (subject, own, only) in params.chain(metrics) {
        match d.params.iter().find(|other| other.name == only.param && Some(&other.name) != own) {
            None => {
                problems.push(format!("{subject} only where `{}` ..., a parameter it does not declare", only.param))
            }
            Some(other) => {
                let refused = only.values.iter().find(|v| other.allowed.as_ref().is_some_and(|a| !a.contains(v)));
                if let Some(value) = refused {
                    problems
                        .push(format!("{subject} only where `{}` is {value}, a value it does not allow", only.param));
                }
            }
        }
    }
    let mut metrics = BTreeSet::new();
    for metric in &d.metrics {
        if !metrics.insert(metric.name.as_str()) {
            problems.push(format!("metric `{}` is declared twice", metric.name));
        }
    }
    if d.metrics.is_empty() {
        problems.push("it declares no metric".to_string());
    }
    problems
}

/// One line on a finished cell: its headline metric (the rig's first declared, which duels decide on; a record
/// keeps its metrics in alphabetical order) and invariants, or why it failed.
fn verdict(record: &Record, headline: Option<&str>) -> Result<String, String> {
    if record.kind != Kind::Measurement {
        let failure = record.failure.as_ref();
        return Err(failure.map_or("no measurement".to_string(), |f| format!("{}: {}", f.cause, f.message)));
    }
    if let Some(broken) = record.checks.iter().find(|c| !c.ok) {
        return Err(format!("invariant `{}` does not hold", broken.invariant));
    }
    let first = headline.and_then(|name| record.metrics.get_key_value(name)).or(record.metrics.iter().next());
    let metric = first.map(|(name, m)| {
        let value = if m.value.abs() >= 100.0 { format!("{:.0}", m.value) } else { format!("{:.3}", m.value) };
        format!("{name} {value} {}", m.unit)
    });
    Ok(format!("{}; {} invariants hold", metric.unwrap_or_default(), record.checks.len()))
}

#[cfg(test)]
mod tests {
    use benchhost_plugin_api::{Descriptor, Metric, Param};

    #[test]
    fn descriptor_problems_are_each_named() {
        let good = Descriptor::iterations("wal", "ok")
            .param(Param::int("rows", 10).range(1, 100))
            .metric(Metric::iter_time("t"));
        assert!(super::problems(&good).is_empty());
        let bad = Descriptor::iterations("Wal-2", "bad")
            .param(Param::int("rows", 1000).range(1, 100))
            .param(Param::choice("codec", "lz5", &["none", "zstd"]))
            .param(Param::int("rows", 10))
            .metric(Metric::iter_time("t"))
            .metric(Metric::iter_time("t"));
        let problems = super::problems(&bad);
        assert_eq!(problems.len(), 5, "{problems:#?}");
        assert!(problems[0].starts_with("rig name `Wal-2`"));
        assert!(problems[1].starts_with("the default of `rows` is refused by its own declaration"), "{}", problems[1]);
        assert!(problems[2].starts_with("the default of `codec` is refused"), "{}", problems[2]);
        assert_eq!(problems[3], "parameter `rows` is declared twice");
        assert_eq!(problems[4], "metric `t` is declared twice");
        let pointless = Descriptor::iterations("q", "")
            .param(Param::choice("shape", "a", &["a", "b"]))
            .param(Param::bool("x", false).only_where("shape", ["c"]))
            .param(Param::bool("y", false).only_where("nosuch", ["a"]))
            .metric(Metric::iter_time("t").only_where("shape", ["b", "d"]))
            .metric(Metric::iter_time("u").only_where("nosuch", ["a"]));
        assert_eq!(
            super::problems(&pointless),
            [
                "`x` applies only where `shape` is \"c\", a value it does not allow",
                "`y` applies only where `nosuch` ..., a parameter it does not declare",
                "metric `t` is reported only where `shape` is \"d\", a value it does not allow",
                "metric `u` is reported only where `nosuch` ..., a parameter it does not declare"
            ]
        );
    }
}
