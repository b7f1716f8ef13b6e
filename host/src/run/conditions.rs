//! The conditions a cell runs in, read around it: CPU steal from `/proc/stat` (a hypervisor taking the CPU
//! away reads as a slower program), the load average, the frequency governor, whether this is a VM, and debug
//! builds. Recorded in `cell.conditions`; `run`, `show` and the reports say when they make numbers doubtful.

use benchhost_record::Conditions;

/// CPU time counters of `/proc/stat`'s `cpu` line, in ticks: (steal, total).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuTimes {
    steal: u64,
    total: u64,
}

impl CpuTimes {
    /// The counters now, if `/proc/stat` can be read.
    pub fn now() -> Option<CpuTimes> {
        parse_stat(&std::fs::read_to_string("/proc/stat").ok()?)
    }
}

/// `cpu  user nice system idle iowait irq softirq steal guest guest_nice`: steal is the 8th number; guest time
/// is already counted in user, so the total is the first eight.
fn parse_stat(text: &str) -> Option<CpuTimes> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line.split_whitespace().skip(1).take(8).map(|f| f.parse().ok()).collect::<Option<_>>()?;
    (fields.len() == 8).then(|| CpuTimes { steal: fields[7], total: fields.iter().sum() })
}

/// Steal between two readings, percent of all CPU time; `None` when no time passed.
fn steal_percent(before: CpuTimes, after: CpuTimes) -> Option<f64> {
    let total = after.total.checked_sub(before.total).filter(|t| *t > 0)?;
    let steal = after.steal.saturating_sub(before.steal);
    Some(steal as f64 * 100.0 / total as f64)
}

/// The conditions of a cell that started at `before` and just ended, whose plugin was built as `profile`.
pub fn conditions(before: Option<CpuTimes>, profile: Option<&str>) -> Conditions {
    let steal_percent = before.zip(CpuTimes::now()).and_then(|(b, a)| steal_percent(b, a));
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let load_1m = read("/proc/loadavg").and_then(|t| t.split_whitespace().next()?.parse().ok());
    let governor = read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").map(|g| g.trim().to_string());
    let vm = read("/proc/cpuinfo").map(|c| c.lines().any(|l| l.starts_with("flags") && l.contains(" hypervisor")));
    Conditions {
        steal_percent: steal_percent.map(|s| (s * 100.0).round() / 100.0),
        load_1m,
        governor,
        vm,
        host_debug: cfg!(debug_assertions),
        plugin_debug: profile.map(|p| p == "debug"),
        idle_arm_cpu_percent: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_is_the_share_of_all_cpu_time_between_two_readings() {
        let before = parse_stat("cpu  100 0 50 800 10 0 5 35 0 0\ncpu0 1 2 3\n").unwrap();
        let after = parse_stat("cpu  180 0 70 880 10 0 5 55 7 0\n").unwrap();
        assert_eq!(before, CpuTimes { steal: 35, total: 1000 });
        // 200 ticks passed, 20 of them stolen (the guest column is inside user and not added twice).
        assert_eq!(steal_percent(before, after), Some(10.0));
        assert_eq!(steal_percent(after, after), None, "no time passed");
        assert_eq!(parse_stat("intr 1 2 3\n"), None);
    }

    #[test]
    fn this_machine_reports_its_conditions() {
        let c = conditions(CpuTimes::now(), Some("debug"));
        assert_eq!((c.host_debug, c.plugin_debug), (cfg!(debug_assertions), Some(true)));
        assert!(c.load_1m.is_some(), "Linux has /proc/loadavg");
        assert!(c.doubts().iter().any(|d| d == "the plugin is a debug build"));
        let stolen = Conditions { steal_percent: Some(12.5), ..Conditions::default() };
        assert_eq!(stolen.doubts(), ["12.5% of CPU time stolen by the hypervisor"]);
        let quiet = Conditions { steal_percent: Some(0.4), vm: Some(true), ..Conditions::default() };
        assert!(quiet.doubts().is_empty(), "a VM with little steal is not doubtful by itself");
        let busy = Conditions { idle_arm_cpu_percent: Some(4.31), ..Conditions::default() };
        assert_eq!(busy.doubts(), ["its threads ran 4.3% of a core while the arm it duelled was timed"]);
        let parked = Conditions { idle_arm_cpu_percent: Some(0.3), ..Conditions::default() };
        assert!(parked.doubts().is_empty(), "an idle arm's threads that wake now and then are no doubt");
    }
}
