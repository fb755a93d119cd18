#!/usr/bin/python3
"""Where a job's time went, per node, from the JSON `fanstore run --stats FILE` writes (fields: docs/stats.md).

usage: stats-summary.py FILE.json
Prints, for each node: the load before the command started, by phase; when the command got its first byte; how
its opens were served and what the slow ones cost; where the bytes came from; and how far the fill got."""
import json
import sys


def mib(n):
    return f"{n / (1 << 20):.1f} MiB"


def main(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"stats-summary: {path}: {e}")
    if doc.get("schema") != "fanstore-stats":
        sys.exit(f"stats-summary: {path} is not a fanstore --stats file")
    job = doc["job"]
    print(f"job {job['id']}: {job['ranks']} nodes, {job['wall_s']:.1f} s, exit {job['exit_status']}")
    for r in doc["ranks"]:
        load = r["load_ms"]
        phases = ", ".join(f"{k} {v} ms" for k, v in load.items() if k != "load")
        o = r["opens"]
        total = max(o["total"], 1)
        kinds = ", ".join(f"{k} {100 * o[k] // total}%" for k in ("local", "cache_hit", "decompressed", "remote"))
        lat = r["open_latency_us"]
        slow = ", ".join(f"{k} p99 {v['p99'] / 1000:.1f} ms" for k, v in lat.items() if v["count"])
        fill = r["fill"]
        print(f"node {r['rank']}: load {load['load']} ms ({phases}); first byte at {r['first_byte_ms']} ms")
        print(f"  opens {o['total']}: {kinds}; waiting on the runtime {r['runtime_wait_ms']} ms in all"
              + (f"; {slow}" if slow else ""))
        print(f"  bytes from local {mib(fill['bytes_from_local'])}, peers {mib(fill['bytes_from_peer'])}, shared FS "
              f"{mib(fill['bytes_from_sharedfs'])}; kept {fill['partitions_local']} of {fill['partitions_planned']}"
              f" partitions planned" + (f", fill took {fill['ms']} ms" if fill["ms"] else ", fill not ended"))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: stats-summary.py FILE.json")
    main(sys.argv[1])
