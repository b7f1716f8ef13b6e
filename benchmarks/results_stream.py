"""Reading a committed results stream for the seed tables: the newest measurement of each cell of one rig."""
import json


def newest(path, bench, key, keep=lambda record: True):
    """The newest measurement of `bench` in the stream at `path` for each `key(variant)`, among those `keep` keeps."""
    found = {}
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("bench") != bench or r.get("kind") != "measurement" or not keep(r):
                continue
            k = key(r.get("variant", {}))
            if k not in found or r["run"]["ts_ms"] >= found[k]["run"]["ts_ms"]:
                found[k] = r
    return found
