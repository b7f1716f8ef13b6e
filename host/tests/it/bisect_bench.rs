//! `benchhost bisect` of a bench target's benchmark: a scratch repository of a Divan suite (benchhost-divan
//! renamed in as `divan`) with three commits after GOOD, the second of which doubles the benchmarked work; each
//! step builds the target again as its plugin, and exact counts find the culprit.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::Sandbox;
use serde_json::Value;

const CULPRIT: usize = 1;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn write(path: PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const WORK: &str = "pub fn work(data: &[u64]) -> u64 {\n    data.iter().sum()\n}\n";
const DOUBLED: &str = "pub fn work(data: &[u64]) -> u64 {\n    data.iter().sum::<u64>() + \
                       std::hint::black_box(data.iter().map(|v| v ^ 1).sum::<u64>())\n}\n";

#[test]
fn a_bench_targets_benchmark_is_bisected_as_a_rigs_is() {
    let sandbox = Sandbox::new();
    let repo = sandbox.path().join("suite");
    let compat = Path::new(env!("CARGO_MANIFEST_DIR")).join("../compat/divan").canonicalize().unwrap();
    write(
        repo.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"bench-bisect\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dev-dependencies]\n\
             divan = {{ package = \"benchhost-divan\", path = \"{}\" }}\n\n[[bench]]\nname = \"sums\"\n\
             harness = false\n\n[workspace]\n",
            compat.display()
        ),
    );
    write(
        repo.join("benches/sums.rs"),
        "fn main() {\n    divan::main();\n}\n\n#[divan::bench]\nfn sum(bencher: divan::Bencher) {\n    \
         let data: Vec<u64> = (0..4096).collect();\n    \
         bencher.bench(|| bench_bisect::work(divan::black_box(&data)));\n}\n",
    );
    write(repo.join("src/lib.rs"), WORK);
    write(repo.join(".gitignore"), "target/\n");
    // The workspace's lock: the versions this machine has built and cached.
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock"), repo.join("Cargo.lock")).unwrap();
    for args in
        [&["init", "-q", "-b", "main"][..], &["config", "user.email", "t@example.com"], &["config", "user.name", "t"]]
    {
        git(&repo, args);
    }
    // The user's own build: a target directory of this test's, kept between runs so Divan is built once.
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-bisect-target");
    let built = Command::new(crate::support::bin())
        .args(["build", "--benches"])
        .current_dir(&repo)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let commit = |message: &str| {
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", message]);
        git(&repo, &["rev-parse", "HEAD"])
    };
    let good = commit("the suite");
    let commits: Vec<String> = (0..3)
        .map(|i| {
            let work = if i >= CULPRIT { DOUBLED } else { WORK };
            write(repo.join("src/lib.rs"), &format!("{work}// revision {i}\n"));
            commit(&format!("revision {i}"))
        })
        .collect();
    let plugin = target.join("release/benches/libsums.so");
    let users_plugin = std::fs::read(&plugin).unwrap();

    let out = Command::new(crate::support::bin())
        .current_dir(&repo)
        .env_remove("BENCHHOST_PLUGIN_PATH")
        .env("XDG_CACHE_HOME", sandbox.path().join("cache"))
        .env("CARGO_TARGET_DIR", &target)
        .args(["bisect", &good, &commits[2], "id=sums::sum", "--plugin", "sums", "--quick", "--instructions"])
        .arg("--out")
        .arg(sandbox.path().join("r.jsonl"))
        .arg("--json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["first_bad"], commits[CULPRIT], "{answer:#}\n{stderr}");
    let verdict = &answer["verdict"]["verdict"];
    assert_eq!((verdict["metric"].as_str(), verdict["decision"].as_str()), (Some("instructions"), Some("regressed")));
    let first = verdict["functions"][0]["name"].as_str().unwrap_or_default();
    assert!(first.ends_with("bench_bisect::work"), "{:#}", verdict["functions"]);
    assert!(std::fs::read(&plugin).unwrap() == users_plugin, "the user's own plugin is back in the target directory");
}
