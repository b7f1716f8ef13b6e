//! Valgrind for `run --instructions`: finding it, the command line that runs a child under Cachegrind
//! (instructions only), and what a run remembers between counts (the m each rig's counts used). How a count is
//! taken and turned into a metric is `count.rs`'s.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use benchhost_record::Record;

/// Valgrind, found on `PATH`.
#[derive(Debug, Clone)]
pub struct Valgrind {
    program: PathBuf,
    /// What `valgrind --version` says, e.g. `valgrind-3.19.0`.
    version: String,
}

/// Cachegrind without its cache and branch simulation: instructions only, 4-5x slower than native here.
const OPTIONS: [&str; 4] = ["--tool=cachegrind", "--cache-sim=no", "--branch-sim=no", "-q"];

/// Native time the m iterations of a count may take at most (from the cell's time per iteration): for
/// iterations whose time is in the kernel; CPU-bound ones reach their instructions first.
pub const NATIVE_NS: f64 = 100e6;

/// The most m may be for `record`'s time per iteration (from its warm-up): a power of two.
pub fn most_iterations(record: &Record) -> u64 {
    let per_iteration = record
        .cell
        .as_ref()
        .filter(|c| c.warmup_iterations > 0 && c.warmup_ns > 0)
        .map_or(1.0, |c| c.warmup_ns as f64 / c.warmup_iterations as f64);
    let most = (NATIVE_NS / per_iteration).clamp(1.0, (1u64 << 40) as f64) as u64;
    1 << (63 - most.leading_zeros())
}

/// How much longer than the cell's deadline a count may take: Valgrind's JIT slows set-up too.
pub const DEADLINE_FACTOR: u32 = 4;

impl Valgrind {
    /// Valgrind, or one line saying how to install it.
    pub fn find() -> Result<Valgrind, String> {
        let program = PathBuf::from("valgrind");
        match Command::new(&program).arg("--version").output() {
            Ok(out) if out.status.success() => {
                Ok(Valgrind { program, version: String::from_utf8_lossy(&out.stdout).trim().to_string() })
            }
            Ok(out) => Err(format!(
                "--instructions: `valgrind --version` failed ({}); reinstall Valgrind (Debian/Ubuntu: \
                 sudo apt-get install valgrind)",
                out.status
            )),
            Err(_) => Err("--instructions counts with Valgrind, which is not installed: install it \
                 (Debian/Ubuntu: sudo apt-get install valgrind; Fedora: sudo dnf install valgrind)"
                .to_string()),
        }
    }

    /// The tool as records name it.
    pub fn tool(&self) -> String {
        format!("{} {}", self.version, OPTIONS[..3].join(" "))
    }

    /// The command line that runs a program under Cachegrind, each process's totals written to `totals`.
    pub fn wrapper(&self, totals: &Path) -> Vec<OsString> {
        let mut line = vec![self.program.clone().into_os_string()];
        line.extend(OPTIONS.iter().map(OsString::from));
        line.push(format!("--cachegrind-out-file={}", totals.join("cachegrind.%p").display()).into());
        line
    }
}

/// What `run --instructions` needs through a run: Valgrind, and the m each rig's counts used.
#[derive(Debug, Clone)]
pub struct Counting {
    valgrind: Valgrind,
    /// Per rig, the m its counts used, the one to prefer first: this run's newest, then the stream's newest.
    sized: BTreeMap<String, Vec<u64>>,
}

impl Counting {
    /// Counting with `valgrind`, preferring the m the output stream's counts used: `previous` is (rig, m), the
    /// newest use last.
    pub fn new(valgrind: Valgrind, previous: &[(String, u64)]) -> Counting {
        let mut counting = Counting { valgrind, sized: BTreeMap::new() };
        for (rig, m) in previous {
            counting.used(rig, *m);
        }
        counting
    }

    /// The tool.
    pub fn valgrind(&self) -> &Valgrind {
        &self.valgrind
    }

    /// The m of `rig`'s earlier counts, the one to prefer first.
    pub fn near(&self, rig: &str) -> Vec<u64> {
        self.sized.get(rig).cloned().unwrap_or_default()
    }

    /// Remembers that a count of `rig` used `m`, first among the ones to prefer.
    pub fn used(&mut self, rig: &str, m: u64) {
        let sized = self.sized.entry(rig.to_string()).or_default();
        sized.retain(|&n| n != m);
        sized.insert(0, m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchhost_record::{CellInfo, Kind, RunInfo};

    #[test]
    fn the_newest_m_of_a_rig_is_preferred_the_stream_s_first() {
        let valgrind = Valgrind { program: "valgrind".into(), version: "valgrind-3.19.0".into() };
        let counted = |bench: &str, m: u64| (bench.to_string(), m);
        let mut counting = Counting::new(valgrind, &[counted("wal", 8), counted("wal", 16), counted("ingest", 64)]);
        assert_eq!(counting.sized["wal"], [16, 8], "the stream's newest first");
        counting.used("wal", 4);
        counting.used("wal", 8);
        assert_eq!(counting.sized["wal"], [8, 4, 16], "this run's newest first, each once");
        assert_eq!(counting.sized["ingest"], [64]);
    }

    #[test]
    fn the_cell_s_time_bounds_m_for_iterations_spent_in_the_kernel() {
        let mut record = Record::new("r", Kind::Measurement, RunInfo::for_tests(1, None), Default::default());
        let with = |ns: u64, n: u64| CellInfo { warmup_ns: ns, warmup_iterations: n, ..CellInfo::default() };
        record.cell = Some(with(1_000_000_000, 16_000)); // 62.5 µs per iteration: 1,600 in 100 ms
        assert_eq!(most_iterations(&record), 1024);
        record.cell = Some(with(1_000_000_000, 1)); // a second each: one, never zero
        assert_eq!(most_iterations(&record), 1);
    }

    #[test]
    fn cachegrind_writes_each_process_to_a_file_named_by_its_pid() {
        let valgrind = Valgrind { program: "valgrind".into(), version: "valgrind-3.19.0".into() };
        let line = valgrind.wrapper(Path::new("/w/totals"));
        assert_eq!(line.last().unwrap(), "--cachegrind-out-file=/w/totals/cachegrind.%p");
        assert_eq!(valgrind.tool(), "valgrind-3.19.0 --tool=cachegrind --cache-sim=no --branch-sim=no");
    }
}
