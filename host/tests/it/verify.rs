//! `benchhost verify` passes a sound stream and names every problem of a broken one, with file and line.

use crate::support::Sandbox;

#[test]
fn verify_names_torn_duplicate_and_unknown_unit_lines_and_fails() {
    let sandbox = Sandbox::new();
    let seed = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/streams/seed003.jsonl"));
    let seed = seed.unwrap();
    sandbox.write("good.jsonl", &seed);
    sandbox.cmd().args(["verify", "good.jsonl"]).assert().success().stdout("good.jsonl: ok\n");

    let first = seed.lines().next().unwrap();
    let furlongs = first.replace("\"unit\":\"records/s\"", "\"unit\":\"furlongs/s\"");
    let broken = format!("{seed}{first}\n{furlongs}\n{}", &first[..40]);
    sandbox.write("bad.jsonl", &broken);
    let out = sandbox.cmd().args(["verify", "good.jsonl", "bad.jsonl"]).assert().code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "good.jsonl: ok");
    assert!(lines[1].starts_with("bad.jsonl:6: torn last line skipped (40 bytes"), "{stdout}");
    assert_eq!(
        lines[2..],
        [
            "bad.jsonl:4: duplicate of the record on line 1",
            "bad.jsonl:5: metric `records_per_s` has unknown unit `furlongs/s`"
        ]
    );

    sandbox.write("v2.jsonl", &seed.replacen("\"schema\":1", "\"schema\":2", 1));
    let out = sandbox.cmd().args(["verify", "v2.jsonl"]).assert().code(1);
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("schema version 2 is not supported"));
}
