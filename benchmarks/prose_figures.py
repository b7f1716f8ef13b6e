"""The figures inside the guide's sentences (issues 56 and 81): each a value of results/ or of a seed's published
file, formatted as its sentence reads it, so that a rerun that moves it fails `docs_figures.py --check` until the
text is generated again. The tables and the proofs' summaries are in docs_figures.py; this module is the
sentences, and the helpers both read results/ with.
"""
import json, math, os, statistics, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "results")


def load(name):
    with open(os.path.join(RESULTS, name)) as f:
        return json.load(f)


def records(name):
    with open(os.path.join(RESULTS, name)) as f:
        return [json.loads(line) for line in f if line.strip()]


def seconds(s):
    return f"{s:.0f} s" if s >= 10 else f"{s:.1f} s"


def micros(us):
    return f"{us / 1000:.1f} ms" if us >= 1000 else f"{us:.1f} µs"


def newest_measurements(name, bench):
    """The newest measurement of each variant of `bench` in results/NAME."""
    newest = {}
    for r in records(name):
        if r["kind"] == "measurement" and r["bench"] == bench:
            newest[json.dumps(r["variant"], sort_keys=True)] = r
    return list(newest.values())


def ns_text(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.1f} {unit}"
    return f"{ns:.0f} ns"


def seed(path):
    """A seed's published figures, transcribed under benchmarks/."""
    with open(os.path.join(ROOT, "benchmarks", path)) as f:
        return json.load(f)


def history_1m_costs():
    """A sentence's worth of history-scale: three commands over the year of 1M records."""
    c = load("history-scale.json")["sizes"]["1M"]["commands"]
    return (f"`show` takes {seconds(c['show']['s'])}, `report --format html` {seconds(c['report html']['s'])} "
            f"and `verify` {seconds(c['verify']['s'])}")


def fleet_garage():
    """A sentence's worth of the fleet: one publisher and eight, on Garage and on s3s-fs."""
    s3s, garage = (load(f)["configs"] for f in ("warehouse-fleet.json", "warehouse-fleet-garage.json"))
    return (f"publishing 100,000 records took {seconds(garage['1']['wall_s'])} from one machine "
            f"({seconds(s3s['1']['wall_s'])} on CI's s3s-fs) and {seconds(garage['8']['wall_s'])} from eight at once, "
            f"where s3s-fs took {seconds(s3s['8']['wall_s'])}")


def counts_twice():
    c = load("counts-twice.json")
    return f"{c['same'] + c['differ']} cells counted twice, {c['same']} equal to the last digit"


def open_loop_stall():
    s = load("open-loop-stall.json")
    return (f"p99.9 {micros(s['open_loop']['corrected']['p999_us'])} corrected, "
            f"{micros(s['open_loop']['uncorrected']['p999_us'])} uncorrected, "
            f"{micros(s['closed_loop']['latency']['p999_us'])} in a closed loop")


def trace_index():
    cells = [r for r in newest_measurements("trace_index.jsonl", "trace_index")
             if r["variant"].get("footers", "per_lookup") == "per_lookup"]
    cells.sort(key=lambda r: r["variant"]["traces"])
    return ", ".join(f"{ns_text(r['metrics']['lookup_time']['value'])} at {r['variant']['traces']:,}" for r in cells)


def querier_planning():
    """The querier's planning, from the committed run: a filtered lookup's (iceberg's `TableScan`) and the
    unfiltered search's (the crate's own loop), each the mean over its timed queries."""
    cells = {r["variant"]["shape"]: r for r in newest_measurements("querier.jsonl", "querier")
             if r["variant"].get("storage") == "memory" and r["variant"].get("footer_cache", "warm") == "warm"}
    planning = lambda shape: ns_text(cells[shape]["metrics"]["planning_time"]["value"])
    return (f"{planning('lookup_by_id')} for the 18 manifests where the crate's own loop, which still plans the "
            f"unfiltered shapes, takes {planning('trace_search_groups')} (`trace_search_groups`)")


def querier_via_index():
    """The point index's lookup against the unbounded one, and planning's share of it, ours and the seed's."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks", "querier"))
    from seed_table import mean_time
    cells = {r["variant"]["shape"]: r for r in newest_measurements("querier.jsonl", "querier")
             if r["variant"].get("storage") == "memory" and r["variant"].get("footer_cache", "warm") == "warm"}
    theirs = {row["name"]: row["time_ns"] for row in seed("querier/seed-000-querier-read.json")["querier_read"]}
    via, unbounded = cells["lookup_via_index"], cells["lookup_by_id"]
    share = via["metrics"]["planning_time"]["value"] / mean_time(via)
    ours = via["metrics"]["query_time"]["value"] / unbounded["metrics"]["query_time"]["value"]
    share_of_seed = theirs["trace_lookup_by_id_via_index"] / theirs["trace_lookup_by_id_unbounded"]
    return (f"planning, which is {share:.0%} of the time; the seed's indexed lookup "
            f"({ns_text(theirs['trace_lookup_by_id_via_index'])}) is {share_of_seed:.0%} of its unbounded one, ours {ours:.0%}")


def writer_tenants():
    """The concurrent tenants' append time on one thread and on two workers, from the committed run."""
    cells = [r for r in newest_measurements("writer.jsonl", "writer") if r["variant"].get("writers", 1) > 1]
    at = lambda workers: sorted((r["variant"]["writers"], r["metrics"]["append_time"]["value"]) for r in cells
                                if r["variant"]["workers"] == workers)
    times = lambda workers: ", ".join(f"{ns / 1e6:.2f}" for _, ns in at(workers))
    tenants = ", ".join(str(n) for n, _ in at(0))
    return (f"{times(0)} ms at {tenants} tenants in `results/writer.jsonl`, against the two workers' "
            f"{times(2)} ms")


def harness_overhead():
    """The harness's cost on the empty operation: benchhost's estimate over Criterion's, medians of 5 pairs."""
    noop = load("harness-proof-rounds.json")["noop"]
    ours, theirs = statistics.median(noop["bh_ns"]), statistics.median(noop["cr_ns"])
    return f"{ours:.2f} ns against Criterion's {theirs:.2f} ns: {ours - theirs:.1f} ns"


def history_1m():
    """`report md` over the year of 1M records."""
    f = load("history-scale.json")["sizes"]["1M"]
    c = f["commands"]["report md"]
    return f"{c['s']:.1f} s and {c['mb']:.0f} MB for {f['records']:,} records ({f['bytes'] / 1e9:.1f} GB)"


NUMBERS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]


def cells_of(rig):
    """How many cells rigs.toml's matrix gives `rig`: each block's product of its axes, summed."""
    import tomllib
    with open(os.path.join(ROOT, "rigs.toml"), "rb") as f:
        blocks = tomllib.load(f)["rig"][rig]
    total = 0
    for block in blocks if isinstance(blocks, list) else [blocks]:
        n = 1
        for values in block.get("matrix", {}).values():
            n *= len(values)
        total += n
    return total


def kafka_records():
    """What command 1 (the kafka_topology matrix) appends: a record per cell."""
    n = cells_of("kafka_topology")
    return f"{NUMBERS[n] if n < len(NUMBERS) else n} records"


def span(values, unit, digits):
    """`lo-hi unit`, or one value when they round alike."""
    lo, hi = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return f"{lo} {unit}" if lo == hi else f"{lo}-{hi} {unit}"


def layouts(cell):
    return load("layout-proof.json")[cell]


def layout_effect():
    """The most two links of identical source read apart, one layout a side, over every cell of the proof."""
    proof = load("layout-proof.json")
    return f"{100 * max(abs(c['ratio'] - 1) for row in proof.values() for c in row.get('aa1', [])):.1f}%"


def layout_effect_cell():
    """The same on the cell where it is largest, with that cell's intervals: narrow, so a link alone is called."""
    proof = load("layout-proof.json")
    cell, row = max(proof.items(), key=lambda kv: max((abs(c["ratio"] - 1) for c in kv[1].get("aa1", [])), default=0))
    runs = row["aa1"]
    half = statistics.median((c["ci95"][1] - c["ci95"][0]) / 2 for c in runs)
    return (f"{100 * max(abs(c['ratio'] - 1) for c in runs):.1f}% apart on `{cell}` in {len(runs)} comparisons, "
            f"each with a CI95 of about ±{100 * half:.2f}%")


def wall(runs):
    return statistics.median(c["wall_s"] for c in runs)


def layout_cost(cell):
    """A comparison over layouts against one of one layout a side, medians of wall time (A/A, or the A/B where the
    cell ran no A/A)."""
    row = layouts(cell)
    key = "aa" if row.get("aa") and row.get("aa1") else "ab"
    return f"{wall(row[key]):.1f} s a comparison against {wall(row[key + '1']):.1f} s one layout a side"


def layout_cost_range():
    """The least and most of that cost over the cells, as a factor."""
    factors = []
    for row in load("layout-proof.json").values():
        for key in ("aa", "ab"):
            if row.get(key) and row.get(key + "1"):
                factors.append(wall(row[key]) / wall(row[key + "1"]))
                break
    return f"{min(factors):.2f}-{max(factors):.2f}x"


def layout_floor(cell):
    """`exp(1.96 σ) - 1`, σ the root mean square of the between-layout spreads of the cell's A/A over layouts."""
    spreads = [c["between_layouts"] for c in layouts(cell)["aa"]]
    return f"{100 * (math.exp(1.96 * math.sqrt(statistics.fmean(s * s for s in spreads))) - 1):.1f}%"


def writer_false_alarm():
    """The writer's false alarm on two workers: a `regressed` of identical source, over layouts."""
    runs = layouts("writer")["workers_2"]
    alarms = [c for key, comparisons in runs.items() if key == "aa" or key.startswith("aa_")
              for c in comparisons if c.get("decision") == "regressed"]
    c = alarms[0]
    return f"x{c['ratio']:.4f} [{c['ci95'][0]:.4f}, {c['ci95'][1]:.4f}]"


def history_1m_size():
    return f"{load('history-scale.json')['sizes']['1M']['bytes'] / 1e9:.1f} GB"


def trace_index_cells(footers):
    return {r["variant"]["traces"]: r for r in newest_measurements("trace_index.jsonl", "trace_index")
            if r["variant"].get("footers", "per_lookup") == footers}


def trace_index_bytes():
    """What a lookup fetches at each size, footers read per lookup as the seed does."""
    cells = trace_index_cells("per_lookup")
    kb = lambda n: f"{cells[n]['metrics']['bytes_fetched']['value'] / 1000:.0f} KB"
    return ", ".join(f"{kb(n)} at {n:,}" for n in sorted(cells)) + " traces"


def trace_index_kept():
    """What keeping the footers saves a lookup, at the sizes both arms ran."""
    read, kept = trace_index_cells("per_lookup"), trace_index_cells("kept")
    saved = [(read[n]["metrics"]["lookup_time"]["value"] - kept[n]["metrics"]["lookup_time"]["value"]) / 1000
             for n in kept if n in read]
    return span(saved, "µs", 0)


def seed_trace_index():
    """The seed's trace index lookup, its time at each count of traces."""
    return {row["traces"]: row["time_ns"] for row in seed("querier/seed-000-querier-read.json")["trace_index_scaling"]}


def trace_index_seed():
    """The seed's lookup at its three sizes."""
    return span([ns / 1e6 for ns in seed_trace_index().values()], "ms", 2)


def trace_index_seed_ratio():
    """The seed's lookup over ours, footers read per lookup, size by size."""
    ours, theirs = trace_index_cells("per_lookup"), seed_trace_index()
    ratios = [theirs[n] / ours[n]["metrics"]["lookup_time"]["value"] for n in theirs if n in ours]
    return f"{min(ratios):.0f}-{max(ratios):.0f} times"


def querier_planning_60():
    """Planning the 60-file queries (one manifest per append), over their arms on memory."""
    times = [r["metrics"]["planning_time"]["value"] / 1e6 for r in newest_measurements("querier.jsonl", "querier")
             if r["metrics"].get("files_total", {}).get("value") == 60 and r["variant"].get("storage") == "memory"]
    return span(times, "ms", 1)


def service_lookups():
    """The querier service's two trace lookups, ours (the median query) beside the seed's."""
    ours = {r["variant"]["ticket"]: r["metrics"]["query_time"]["value"]
            for r in newest_measurements("querier_service.jsonl", "querier_service")}
    theirs = {row["ticket"]: row["time_ns"] for row in seed("querier/seed-000-querier-service.json")["rows"]}
    tickets = ("find_trace", "find_trace_hinted")
    return (" and ".join(f"{ours[t] / 1e6:.1f} ms" for t in tickets) + " where the seed's take "
            + " and ".join(f"{theirs[t] / 1e6:.1f} ms" for t in tickets))


def layout_pools_of_7():
    """Compaction's A/A over layouts again after a large library's pools were cut to 7 a side (issue 81)."""
    row = layouts("compaction")
    runs = row["aa_pools_of_7"]
    no_change = sum(c["decision"] == "no_change" for c in runs)
    held = sum(c["ci95"][0] <= 1 <= c["ci95"][1] for c in runs)
    alarms = sum(c["decision"] in ("regressed", "improved") for c in runs)
    return (f"`no_change` in {no_change} of {len(runs)} ({len(runs) - no_change - alarms} `inconclusive`, {alarms} "
            f"alarms), its CI95 holding 1 in {held}, at {wall(runs):.1f} s a comparison (built {row['aa_pools_of_7_built']})")


def ingest_text():
    """The `text = "per_row"` arm of the ingest rig against ours (results/ingest-text.jsonl, `--interleave`): per
    signal, how much longer the conversion took, its CI95, and the share of decode and conversion it would
    then be, from the shares of the committed run (results/ingest.jsonl, the seed table's): s' = r s / (1 +
    (r - 1) s), the decode unchanged."""
    time = {}
    for r in newest_measurements("ingest.jsonl", "ingest"):
        time[(r["variant"]["signal"], r["variant"]["stage"])] = r["metrics"]["request_time"]["value"]
    parts = []
    for r in records("ingest-text.jsonl"):
        v = r.get("verdict") or {}
        if r["kind"] != "verdict" or v.get("metric") != "request_time":
            continue
        signal, ratio = r["variant"]["signal"], v["ratio"]
        share = time[(signal, "convert_only")] / time[(signal, "decode_and_convert")]
        lo, hi = v["ci95"]
        parts.append(f"{signal} x{ratio:.2f} [{lo:.2f}, {hi:.2f}], its share {100 * share:.0f}% -> "
                     f"{100 * ratio * share / (1 + (ratio - 1) * share):.0f}%")
    return "; ".join(parts)


FIGURES = {
    "ingest-text": ingest_text,
    "kafka-records": kafka_records,
    "harness-overhead": harness_overhead,
    "history-1m": history_1m,
    "history-1m-costs": history_1m_costs,
    "fleet-garage": fleet_garage,
    "counts-twice": counts_twice,
    "open-loop-stall": open_loop_stall,
    "trace-index": trace_index,
    "querier-planning": querier_planning,
    "querier-via-index": querier_via_index,
    "writer-tenants": writer_tenants,
    "service-lookups": service_lookups,
    "layout-effect": layout_effect,
    "layout-effect-cell": layout_effect_cell,
    "layout-cost-range": layout_cost_range,
    "writer-false-alarm": writer_false_alarm,
    "history-1m-size": history_1m_size,
    "trace-index-bytes": trace_index_bytes,
    "trace-index-kept": trace_index_kept,
    "trace-index-seed": trace_index_seed,
    "trace-index-seed-ratio": trace_index_seed_ratio,
    "querier-planning-60": querier_planning_60,
    "layout-pools-of-7": layout_pools_of_7,
}
def layout_wall(cell):
    """A comparison over layouts, the median of its wall time."""
    return f"{wall(layouts(cell)['aa']):.0f} s"


PER_CELL = {"layout-cost": layout_cost, "layout-floor": layout_floor, "layout-wall": layout_wall}


def figure(name):
    """The generator of figure NAME of this module (and suite_figures.py's and unpaired_figures.py's), the
    `layout-*:CELL` of PER_CELL included."""
    import suite_figures, unpaired_figures  # noqa: E402  (they import this module's helpers)
    kind, _, cell = name.partition(":")
    if cell and kind in PER_CELL:
        return lambda: PER_CELL[kind](cell)
    return FIGURES.get(name) or suite_figures.FIGURES.get(name) or unpaired_figures.FIGURES.get(name)
