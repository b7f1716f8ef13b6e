//! Where and on what a run happened: commit (+dirty), host, CPU, cores, OS/arch, profile, trigger.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use benchhost_record::RunInfo;

/// Provenance of a run started now, in the current directory.
pub fn current() -> RunInfo {
    let ts_ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
    let (commit, dirty) = git_commit();
    RunInfo {
        ts_ms,
        commit,
        host: hostname(),
        cpu: cpu_model(),
        cores: std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1),
        os: format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
        profile: if cfg!(debug_assertions) { "debug" } else { "release" }.into(),
        id: Some(format!("{ts_ms:x}-{:x}", std::process::id())),
        dirty,
        trigger: Some(if std::env::var_os("CI").is_some() { "ci" } else { "manual" }.into()),
        rustc: None,
        shard: None,
    }
}

/// The 12-hex commit of HEAD and whether tracked files differ from it. A dirty tree is a flag, never a
/// made-up commit such as `…-dirty`.
fn git_commit() -> (Option<String>, Option<bool>) {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(head) = git(&["rev-parse", "--verify", "HEAD"]) else { return (None, None) };
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty());
    (Some(head.chars().take(12).collect()), dirty)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}
