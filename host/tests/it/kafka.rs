//! The kafka_topology rig through the real binary: the repository's own `rigs.toml` on the embedded mock
//! cluster, and the same rig against a real Kafka-compatible broker (tansu) started here on loopback.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Sandbox, workspace_plugins};
use benchhost_record::{Kind, Record};

/// One Kafka run at a time (see the rig's own tests: concurrent runs on 2 cores starve each other's feeds).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn repo_rigs_toml() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../rigs.toml"))
}

/// Both topologies, every check held, and the conservation the run style promises.
fn assert_healthy(records: &[Record]) {
    for r in records {
        let open_loop = r.variant.get("rate").is_some_and(|rate| rate != 0.0);
        // An open-loop arm on a machine too loaded to consume at its rate (a debug build in CI) says so; it never
        // reports a latency of a lighter load.
        if open_loop && let Some(failure) = &r.failure {
            let rate = r.variant["rate"].as_f64().unwrap() as u64;
            let said = format!("could not sustain {},{:03}/s", rate / 1000, rate % 1000);
            assert!(failure.message.contains(&said), "{said}: {failure:?}");
            continue;
        }
        assert_eq!(r.kind, Kind::Measurement, "{:?} {:?}", r.variant, r.failure);
        // Split's consumer is also held to its main queue: nothing polled there.
        let laws = if r.variant["mode"] == "split" { 3 } else { 2 };
        assert!(r.checks.iter().all(|c| c.ok) && r.checks.len() == laws, "{:?}", r.checks);
        assert!(r.checks.iter().all(|c| c.values.is_some_and(|[left, _]| left > 0)), "0 against 0: {:?}", r.checks);
        let feeds: &[&str] = if open_loop { &["open loop"] } else { &["drain", "live feed"] };
        assert!(r.note.as_deref().is_some_and(|n| feeds.iter().any(|f| n.starts_with(f))), "{:?}", r.note);
        assert_eq!(r.metrics.contains_key("p99_e2e_us_uncorrected"), open_loop, "{:?}", r.variant);
        let consumed = &r.metrics["consumed"];
        assert_eq!((consumed.unit.as_str(), consumed.n), ("records", Some(2)));
        if r.variant["duration_s"] == 0.0 {
            let messages = r.variant["messages"].as_f64().unwrap();
            assert_eq!(consumed.value, messages, "a drain consumes every record: {:?}", r.variant);
        }
    }
    let modes: Vec<&str> = records.iter().map(|r| r.variant["mode"].as_str().unwrap()).collect();
    assert!(modes.contains(&"perthread") && modes.contains(&"split"), "{modes:?}");
}

#[test]
fn the_default_matrix_runs_quick_on_the_mock_cluster() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--quick", "--plugin", "kafka_topology", "--out", "r.jsonl", "--config"]).arg(repo_rigs_toml());
    cmd.arg("--plugin-dir").arg(workspace_plugins());
    let code = cmd.output().unwrap().status.code();
    let (records, _) = sandbox.records("r.jsonl");
    assert_eq!(records.len(), 6);
    let failed = records.iter().any(|r| r.kind == Kind::Failure);
    assert_eq!(code, Some(i32::from(failed)), "exit 1 exactly when a cell failed");
    assert_healthy(&records);
    for r in &records {
        assert_eq!(r.variant["broker"], "mock");
        if r.variant["duration_s"] != 0.0 {
            assert_eq!(r.variant["duration_s"], 0.25, "the quick table's window is the one recorded");
        } else {
            assert_eq!(r.variant["messages"], 40_000, "and its drain");
        }
        if let Some(cell) = r.cell.as_ref().filter(|_| r.kind == Kind::Measurement) {
            assert_eq!(cell.warmup_iterations, 0, "a quick run-style cell discards no first run");
        }
    }
}

/// A tansu broker on a free loopback port, killed when dropped.
struct Broker {
    child: Child,
    address: String,
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tansu() -> Option<PathBuf> {
    let cached = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/benchhost/tansu-0.6.0/bin/tansu"));
    std::env::var_os("BENCHHOST_TANSU").map(PathBuf::from).or(cached).filter(|p| p.exists())
}

fn start_broker(binary: &PathBuf) -> Broker {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let address = format!("127.0.0.1:{port}");
    let url = format!("tcp://{address}");
    let child = Command::new(binary)
        .args([
            "broker",
            "--storage-engine",
            "memory://tansu/",
            "--listener-url",
            &url,
            "--advertised-listener-url",
            &url,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting tansu");
    let broker = Broker { child, address };
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(&broker.address).is_err() {
        assert!(Instant::now() < deadline, "tansu did not listen on {} within 20 s", broker.address);
        std::thread::sleep(Duration::from_millis(50));
    }
    broker
}

#[test]
fn the_same_rig_runs_against_a_real_broker_with_the_same_checks() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(binary) = tansu() else {
        // Never skipped in CI: .ci/run installs the broker.
        assert!(std::env::var_os("CI").is_none(), "CI must provide tansu (BENCHHOST_TANSU or ~/.cache/benchhost)");
        eprintln!("skipped: no tansu binary (set BENCHHOST_TANSU, or run .ci/run once to install it)");
        return;
    };
    let broker = start_broker(&binary);
    let sandbox = Sandbox::new();
    // Small on purpose: tansu's memory engine never frees what it stores.
    sandbox.write(
        "rigs.toml",
        r#"
[defaults]
repetitions = 2
warmup = "0s"
[[rig.kafka_topology]]
params = { partitions = 4, threads = 2, payload_bytes = 256, duration_s = 0, messages = 20_000 }
matrix = { mode = ["perthread", "split"] }
[[rig.kafka_topology]]
params = { partitions = 4, threads = 2, payload_bytes = 256, work_us = 10, duration_s = 0.5 }
matrix = { mode = ["perthread", "split"] }
[[rig.kafka_topology]]
params = { partitions = 4, threads = 2, payload_bytes = 256, work_us = 10, duration_s = 0.5, rate = 1_000.0 }
matrix = { mode = ["perthread", "split"] }
"#,
    );
    let mut cmd = sandbox.cmd();
    cmd.args(["run", "--out", "r.jsonl", "--set", &format!("bootstrap_servers={}", broker.address), "--plugin-dir"]);
    cmd.arg(workspace_plugins());
    let code = cmd.output().unwrap().status.code();
    let (records, _) = sandbox.records("r.jsonl");
    assert_eq!(records.len(), 6);
    let failed = records.iter().any(|r| r.kind == Kind::Failure);
    assert_eq!(code, Some(i32::from(failed)), "exit 1 exactly when a cell failed");
    assert_healthy(&records);
    for r in &records {
        assert_eq!(r.variant["broker"], broker.address.as_str());
    }
}
