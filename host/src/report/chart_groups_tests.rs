use super::*;

fn newest(file: &str) -> Vec<Record> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../results").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let stream = benchhost_record::reader::parse(&path, text.as_bytes()).unwrap();
    stream.records.into_iter().map(|(_, r)| r).filter(|r| r.kind == benchhost_record::Kind::Measurement).collect()
}

/// Each group of the committed run of `file`: what it holds, and its members' names.
fn found(file: &str) -> Vec<(String, Vec<String>)> {
    let records = newest(file);
    groups(&records.iter().collect::<Vec<_>>()).into_iter().map(|b| (b.label, b.names)).collect()
}

fn sizes(found: &[(String, Vec<String>)]) -> Vec<(&str, usize)> {
    found.iter().map(|(label, names)| (label.as_str(), names.len())).collect()
}

#[test]
fn the_committed_runs_are_drawn_in_the_blocks_of_rigs_toml() {
    let cache = found("cache_tier.jsonl");
    assert_eq!(
        sizes(&cache),
        [("cache=cold upstream=datafusion", 6), ("cache=warm upstream=canned", 9), ("cache=warm tier=passthrough", 6)],
        "the passthrough tier's two origins side by side, its canned arms also among the three tiers"
    );
    assert_eq!(cache[1].1[..3], ["rows=100/tier=delta_hit", "rows=100/tier=object_hit", "rows=100/tier=passthrough"]);

    // The live feed and the open loop differ in `rate` alone, but the open loop reports percentiles.
    let kafka = found("kafka_topology.jsonl");
    assert_eq!(
        sizes(&kafka),
        [
            ("duration_s=0.0 messages=160000 rate=0.0 work_us=0", 2),
            ("duration_s=2.0 messages=100000000 rate=0.0 work_us=10", 2),
            ("duration_s=2.0 messages=100000000 rate=10000.0 work_us=10", 2)
        ]
    );

    // Blocks that share arms: the ordered shapes by order hold the three unattested ones, the footer caches the
    // warm lookup. Since issue 81 a lookup reports the trace rows it missed and an ordered shape the sorts it
    // kept, which the others do not take: they answer other questions, and are drawn apart, as kafka's open loop.
    let querier = found("querier.jsonl");
    assert_eq!(
        sizes(&querier),
        [
            ("footer_cache=cold order=unattested shape=lookup_by_id", 2),
            ("order=unattested shape=lookup_by_id storage=memory", 3),
            ("footer_cache=cold order=unattested shape=ordered_full_scan storage=fs", 1),
            ("footer_cache=warm storage=memory", 9),
            ("footer_cache=warm order=unattested storage=memory", 3),
            ("footer_cache=warm order=unattested shape=trace_search_groups storage=memory", 1)
        ]
    );
    // The concurrent tenants run on one thread and on two workers, so the other blocks' labels name theirs.
    let writer = found("writer.jsonl");
    assert_eq!(
        sizes(&writer),
        [
            ("batches=1 op=append order=in_order workers=2 writers=1", 4),
            ("batches=1 op=append order=in_order rows=500", 6),
            ("op=append order=in_order rows=1000 workers=2 writers=1", 5),
            ("batches=1 op=create order=in_order rows=1000 workers=2 writers=1", 1),
            ("batches=1 op=sort workers=2 writers=1", 6)
        ]
    );
    assert!(writer[0].1.contains(&"rows=1000".to_string()) && writer[2].1.contains(&"batches=1".to_string()));
    assert_eq!(sizes(&found("wal.jsonl")), [("", 6)], "a single block's matrix is one group");
}

#[test]
fn a_rig_of_many_arms_is_split_as_the_markdown_splits_it() {
    let arm = |i: usize| {
        let run = benchhost_record::RunInfo::for_tests(1, Some("a"));
        let variant = [("rows".to_string(), serde_json::Value::from(i))].into();
        Record::measurement_for_tests("big", run, variant, BTreeMap::new())
    };
    let arms: Vec<Record> = (0..=MOST_ARMS).map(arm).collect();
    let found = groups(&arms.iter().collect::<Vec<_>>());
    assert_eq!((found.len(), found[0].members.len()), (1, MOST_ARMS + 1));
}
