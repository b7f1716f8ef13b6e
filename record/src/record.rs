//! Schema-1 records: one JSON object per line of the results stream. The core is the record of the seed
//! Kafka/ETL suite, so its committed lines read as ours; everything past the core is optional and additive.
//! `results/README.md` documents every field.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The only schema version this build writes and reads.
pub const SCHEMA: u32 = 1;

/// One line of the results stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Record {
    /// Always [`SCHEMA`].
    pub schema: u32,
    /// The rig that produced the record.
    pub bench: String,
    /// `measurement`, `verdict`, `failure` or `acknowledgement`.
    pub kind: Kind,
    /// Provenance.
    pub run: RunInfo,
    /// The arm: parameter name → value, sorted by name.
    #[serde(default)]
    pub variant: BTreeMap<String, Value>,
    /// Metric name → value, sorted by name.
    #[serde(default)]
    pub metrics: BTreeMap<String, MetricValue>,
    /// Free text for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The plugin that ran the cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<PluginBuild>,
    /// How the cell was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<CellInfo>,
    /// Conservation checks and their results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Check>,
    /// Why the cell did not complete (kind `failure` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// The comparison behind a `verdict` record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<crate::Verdict>,
    /// A person's acceptance of an expected change (kind `acknowledgement` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acknowledgement: Option<crate::Acknowledgement>,
    /// Metrics the rig declares to read as one table (the querier's mechanism: files reached, pruned, read):
    /// the HTML report draws them as a table of the arms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<MetricTable>,
}

/// Metrics of a record that read together, as columns of one table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MetricTable {
    /// The table's title.
    pub name: String,
    /// Its columns, in order: names of the record's metrics.
    pub metrics: Vec<String>,
}

/// What a record states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Numbers of one cell.
    Measurement,
    /// A conclusion drawn across arms or against a baseline.
    Verdict,
    /// A cell that did not complete; its metrics are absent, never zero.
    Failure,
    /// A person's word that a change of a series is expected, and why (`benchhost accept`); or its revocation.
    Acknowledgement,
}

/// Provenance of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunInfo {
    /// Wall-clock start of the run, ms since the Unix epoch.
    pub ts_ms: u64,
    /// First 12 hex digits of the commit checked out where the run was started; absent outside git.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Host name.
    pub host: String,
    /// CPU model.
    pub cpu: String,
    /// Logical cores available to the run.
    pub cores: u32,
    /// `os/arch`.
    pub os: String,
    /// Build profile of the code measured.
    pub profile: String,
    /// Groups the records of one invocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Whether the work tree had uncommitted changes to tracked files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty: Option<bool>,
    /// `manual`, `ci` or `dispatched`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// Compiler of the code measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rustc: Option<String>,
    /// The slice of the matrix this invocation ran (`--shard I/N`), when it ran one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
}

/// One metric of a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricValue {
    /// The estimate.
    pub value: f64,
    /// Unit from the registry.
    pub unit: String,
    /// Direction of goodness.
    pub higher_is_better: bool,
    /// 95% confidence interval `[low, high]`, in the metric's unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
    /// Repetitions (samples or runs) behind the estimate, never inner iterations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
}

/// The plugin build that produced a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PluginBuild {
    /// Package name.
    pub name: String,
    /// Package version.
    pub version: String,
    /// plugin-api version it was built against.
    pub api: String,
    /// `debug` or `release`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// SHA-256 of the library file that ran, lowercase hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// How a cell was measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellInfo {
    /// Position of the cell in the run, from 0.
    pub index: usize,
    /// Time spent warming up, ns.
    pub warmup_ns: u64,
    /// Iterations (or runs) spent warming up.
    pub warmup_iterations: u64,
    /// Timed samples (iterations style) or repetitions (run style) taken.
    pub samples: u64,
    /// Iterations in each sample (iterations style; linear sampling: in the first, sample i runs i times it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations_per_sample: Option<u64>,
    /// `flat` or `linear` (iterations style).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<crate::Sampling>,
    /// Why sampling ended: `samples` (the planned count), `target` (the CI target was met) or `budget`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<crate::Stop>,
    /// The CI target sampled for, as a fraction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ci: Option<f64>,
    /// The time the samples took, ns (iterations style): their clock pairs' sum, to read beside `planned_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_ns: Option<u64>,
    /// The time the plan gave the samples, ns (iterations style): its sample length times its samples. A
    /// cell whose batches came out too small samples less than this, and its interval is wider for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_ns: Option<u64>,
    /// Interleaved rounds combined into this record (each a child process of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
    /// Wall time of the child process (all rounds together), ms.
    pub wall_ms: u64,
    /// Peak resident set of the child process, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_kib: Option<u64>,
    /// Minor page faults of the child while warming up and sampling. Many per iteration mean the code under
    /// test maps fresh memory every time (the child's heap is settled, see `heap.rs`, so that is the code's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_faults: Option<u64>,
    /// The machine while the cell ran: CPU steal, load, frequency governor, VM, debug builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Conditions>,
    /// Processes that left the cell's process group (`setsid`) and outlived its child, as `pid N (name)`;
    /// benchhost killed them when the cell ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub escaped: Vec<String>,
    /// Per metric: mean, stddev, min, max and median over the samples or repetitions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stats: BTreeMap<String, crate::Summary>,
    /// How the `instructions` metric was counted, or why there is none (`run --instructions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<crate::InstructionCount>,
    /// How the cell was measured, as far as it changes what its numbers mean, in words separated by spaces: a
    /// pairing mode (`alternate`, `alternate_runs`, `alternate_windows`, `concurrent`, `rounds`), a run-style
    /// rig's repetitions (`runs=5`), `quick` (`--quick`). Absent for an iterations-style cell measured plainly
    /// (and in records of older benchhosts). Records measured otherwise are another series ([`method`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
}

/// The conditions a cell ran in: what can make its numbers doubtful, recorded beside them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Conditions {
    /// Share of all CPU time the hypervisor stole while the cell ran, percent (from `/proc/stat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_percent: Option<f64>,
    /// The 1-minute load average when the cell ended (from `/proc/loadavg`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_1m: Option<f64>,
    /// The CPU frequency governor (`performance`, `powersave`, ...), where the machine has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
    /// Whether the CPU says it runs under a hypervisor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<bool>,
    /// Whether benchhost itself is a debug build.
    #[serde(default)]
    pub host_debug: bool,
    /// Whether the plugin that ran is a debug build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin_debug: Option<bool>,
    /// In a duel (two arms in one process): the CPU time this arm's own threads (a runtime's workers, a client
    /// library's) used while the other arm was timed, as a percent of that time; the worst process of the
    /// cell. Threads that should sleep and did not: the other arm's numbers paid for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_arm_cpu_percent: Option<f64>,
}

/// Steal above this share of CPU time makes a cell's numbers doubtful. Measured on the project's 2-core KVM
/// VM: 0.4% with both cores busy in a quiet phase, 6-14% in the slow phases that read ~1.5x slower.
pub const DOUBTFUL_STEAL_PERCENT: f64 = 5.0;

/// An idle arm's threads using more than this share of a core while the other arm is timed make the other
/// arm's numbers doubtful (on two cores, 1% of one is 0.5% of the machine taken from the timed arm).
pub const DOUBTFUL_IDLE_ARM_CPU_PERCENT: f64 = 1.0;

impl Conditions {
    /// Why the numbers of a cell run in these conditions are doubtful, if they are: one phrase each.
    pub fn doubts(&self) -> Vec<String> {
        let mut doubts = Vec::new();
        if let Some(steal) = self.steal_percent.filter(|s| *s > DOUBTFUL_STEAL_PERCENT) {
            doubts.push(format!("{steal:.1}% of CPU time stolen by the hypervisor"));
        }
        if self.plugin_debug == Some(true) {
            doubts.push("the plugin is a debug build".to_string());
        }
        if let Some(idle) = self.idle_arm_cpu_percent.filter(|p| *p > DOUBTFUL_IDLE_ARM_CPU_PERCENT) {
            doubts.push(format!("its threads ran {idle:.1}% of a core while the arm it duelled was timed"));
        }
        if self.host_debug {
            doubts.push("benchhost is a debug build".to_string());
        }
        doubts
    }
}

/// One conservation check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    /// The invariant, e.g. `rows_out == rows_in`.
    pub invariant: String,
    /// Whether it held.
    pub ok: bool,
    /// The violation, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The two sides compared, `[left, right]` (a constant on the right as it is): the outcome's counters, or
    /// for a run-style rig the first repetition whose sides are the smallest. A check of 0 against 0 compared
    /// no work. Absent in records before 2026-12-06.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<[u64; 2]>,
}

/// Why a cell did not complete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Failure {
    /// `rig_error`, `verification`, `panic`, `invariant`, `signal`, `exit`, `deadline`, `protocol`, `spawn`,
    /// `out_of_memory`, `stack_overflow`, `metrics`, `escaped` (a process left the cell's group and outlived it).
    pub cause: crate::Cause,
    /// The phase the cell was in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<crate::Phase>,
    /// One line for people.
    pub message: String,
    /// Signal name, for `signal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// Exit code, for `exit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Last lines the child wrote to stderr (its cell log).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stderr_tail: Vec<String>,
    /// The full cell log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Samples (or repetitions) that completed before the end, kept raw.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub salvaged: Vec<Value>,
}

impl Record {
    /// A record of `kind` for the series `bench` + `variant`, made by `run`, with nothing else yet: every other
    /// field is set with struct update syntax (`Record { metrics, ..Record::new(...) }`).
    pub fn new(bench: impl Into<String>, kind: Kind, run: RunInfo, variant: BTreeMap<String, Value>) -> Record {
        Record {
            schema: SCHEMA,
            bench: bench.into(),
            kind,
            run,
            variant,
            metrics: BTreeMap::new(),
            note: None,
            plugin: None,
            cell: None,
            checks: vec![],
            failure: None,
            verdict: None,
            acknowledgement: None,
            tables: vec![],
        }
    }

    /// The verdict record on the series of `series` (its bench, variant and plugin), drawn by `run`.
    pub fn verdict_on(series: &Record, verdict: crate::Verdict, note: String, run: RunInfo) -> Record {
        Record {
            note: Some(note),
            plugin: series.plugin.clone(),
            verdict: Some(verdict),
            ..Record::new(series.bench.clone(), Kind::Verdict, run, series.variant.clone())
        }
    }

    /// The acknowledgement record on the series of `series` (its bench, variant and plugin), written by `run`.
    pub fn acknowledgement_on(series: &Record, acknowledgement: crate::Acknowledgement, run: RunInfo) -> Record {
        Record {
            plugin: series.plugin.clone(),
            acknowledgement: Some(acknowledgement),
            ..Record::new(series.bench.clone(), Kind::Acknowledgement, run, series.variant.clone())
        }
    }

    /// The record as one line, without the newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("records serialize")
    }

    /// The record as one line that this build's reader accepts, or why not. serde_json writes a NaN or an
    /// infinity as `null`, which no `f64` field reads back: such a record must never reach a stream.
    pub fn readable_line(&self) -> Result<String, String> {
        let line = self.to_line();
        match serde_json::from_str::<Record>(&line) {
            Ok(_) => Ok(line),
            Err(e) => Err(format!(
                "the {} record of `{}` would not read back ({e}): {line}",
                kind_name(self.kind),
                self.bench
            )),
        }
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Measurement => "measurement",
        Kind::Verdict => "verdict",
        Kind::Failure => "failure",
        Kind::Acknowledgement => "acknowledgement",
    }
}

#[doc(hidden)]
impl RunInfo {
    /// Provenance for tests: host `h`, 2 cores, a release build, and the given start and id.
    #[doc(hidden)]
    pub fn for_tests(ts_ms: u64, id: Option<&str>) -> RunInfo {
        RunInfo {
            ts_ms,
            commit: id.map(|id| format!("{id:0>12}")),
            host: "h".into(),
            cpu: "c".into(),
            cores: 2,
            os: "linux/x86_64".into(),
            profile: "release".into(),
            id: id.map(str::to_owned),
            dirty: None,
            trigger: None,
            rustc: None,
            shard: None,
        }
    }
}

#[doc(hidden)]
impl Record {
    /// A measurement record for tests.
    #[doc(hidden)]
    pub fn measurement_for_tests(
        bench: &str,
        run: RunInfo,
        variant: BTreeMap<String, Value>,
        metrics: BTreeMap<String, MetricValue>,
    ) -> Record {
        Record { metrics, ..Record::new(bench, Kind::Measurement, run, variant) }
    }

    /// A `wal` measurement for tests of histories: run at `ts_ms`, variant `rows`, metric `t` (ns) = `value`.
    #[doc(hidden)]
    pub fn point_for_tests(ts_ms: u64, rows: i64, value: f64) -> Record {
        let m = MetricValue { value, unit: "ns".into(), higher_is_better: false, ci95: None, n: None };
        let variant = [("rows".to_string(), rows.into())].into();
        Record::measurement_for_tests("wal", RunInfo::for_tests(ts_ms, Some("r")), variant, [("t".into(), m)].into())
    }

    /// `records` run again on each of `nights` nights, a day apart, each night a run id of its own
    /// (`night-N`) and every metric `drift` slower per night (0.01: 1% a night): a history for tests.
    #[doc(hidden)]
    pub fn nights_for_tests(records: &[Record], nights: u64, drift: f64) -> Vec<Record> {
        let night = |night: u64, record: &Record| {
            let mut record = record.clone();
            record.run.ts_ms += night * 86_400_000;
            record.run.id = Some(format!("night-{night}"));
            record.metrics.values_mut().for_each(|metric| metric.value *= 1.0 + night as f64 * drift);
            record
        };
        (0..nights).flat_map(|n| records.iter().map(move |record| night(n, record))).collect()
    }
}
