"""Scaling model for fanstore, built from the per-operation costs one bench/run-paper.sh run measured.

  scaling.py --csv RUN/paper.csv [--out DIR] [--plot PNG] [--net-gbps 100] [--net-latency-us 2]
             [--bisection 1.0] [--files 1281167] [--file-kib 110] [--threads 2]

Prints Markdown: the inputs it read, the validation against the run's 1/2/4-rank jobs (all on one machine, so
they share its cores), and the prediction for 16..1024 nodes of a cluster (one node per host) for a dataset of
--files files of --file-kib each (default: ImageNet-1k's shape), plus where it stops scaling and why.
See docs/scaling-model.md for the equations.
"""
import argparse
import collections
import csv
import math
import sys

SIZES = {"128K": 131072, "512K": 524288, "2M": 2097152, "8M": 8388608}


def load(path):
    rows = collections.defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            try:
                v = float(r["value"])
            except ValueError:
                continue
            rows[(r["section"], r["setup"], r["size"], r["ranks"], r["threads"], r["pass"], r["metric"])].append(v)
    return rows


def get(rows, *key, default=None):
    v = rows.get(tuple(key))
    return sum(v) / len(v) if v else default


def interp(costs, size):
    """Per-file cost at SIZE bytes, linear between the measured sizes (a + b*size per segment)."""
    pts = sorted(costs.items())
    if size <= pts[0][0]:
        (s0, c0), (s1, c1) = pts[0], pts[1]
    elif size >= pts[-1][0]:
        (s0, c0), (s1, c1) = pts[-2], pts[-1]
    else:
        for (s0, c0), (s1, c1) in zip(pts, pts[1:]):
            if s0 <= size <= s1:
                break
    return max(c0 + (c1 - c0) * (size - s0) / (s1 - s0), 1e-9)


class Inputs:
    """What the run measured, as seconds per file (one node, --threads reader threads) and rates."""

    def __init__(self, rows, threads):
        t = str(threads)
        self.local, self.materialise = {}, {}
        decode_128k = get(rows, "jmh", "java", "lz4DecodeAndCrc128K", "1", "1", "-", "ns_per_op", default=0) * 1e-9
        for name, b in SIZES.items():
            loc = get(rows, "single", "fanstore", name, "1", t, "warm", "files_per_s")
            lz4 = get(rows, "single", "fanstore-lz4", name, "1", t, "first", "files_per_s")
            if loc:
                self.local[b] = 1 / loc
            if lz4:
                # a request the runtime answers with a new cache file, less the LZ4 decode the JMH measured
                self.materialise[b] = max(1 / lz4 - decode_128k * b / 131072, 1 / lz4 * 0.2)
        fetch = {}
        for name in ("128K", "2048K", "8192K"):
            mbs = get(rows, "mpj", "fetch", name, "2", "1", "-", "MB_per_s")
            if mbs:
                b = int(name[:-1]) * 1024
                fetch[b] = b / (mbs * 1e6)
        (s0, t0), (s1, t1) = sorted(fetch.items())[0], sorted(fetch.items())[-1]
        self.fetch_bw = (s1 - s0) / max(t1 - t0, 1e-12)          # bytes/s, software (MPJ + RemoteFetcher)
        self.fetch_latency = max(t0 - s0 / self.fetch_bw, 5e-6)   # s per fetch, besides the bytes
        raw8 = get(rows, "mpj", "raw", "8192K", "2", "1", "-", "MB_per_s", default=0)
        self.raw_bw = raw8 * 1e6
        e = [get(rows, "load", "tree", "-", "2", "-", "rank%d" % r, "entries") for r in (0, 1)]
        mb = [get(rows, "load", "tree", "-", "2", "-", "rank%d" % r, "meta_bytes") for r in (0, 1)]
        g = [get(rows, "load", "tree", "-", "2", "-", "rank%d" % r, "gather_ms") for r in (0, 1)]
        tb = [get(rows, "load", "tree", "-", "2", "-", "rank%d" % r, "table_ms") for r in (0, 1)]
        self.entries = e[0]
        self.meta_per_entry = mb[0] / e[0]
        self.gather_bytes_per_entry = get(rows, "load", "tree", "-", "2", "-", "-", "gather_bytes_per_entry")
        self.gather_s = max(g) / 1000
        self.gather_bw = self.entries * self.gather_bytes_per_entry / 2 / max(self.gather_s, 1e-6)
        self.table_s_per_entry = max(tb) / 1000 / e[0]
        # copy of a rank's partitions to local disk: bytes per second, from the 1-rank multi-node job
        self.copy_bw = None
        c = get(rows, "load", "mn", "-", "1", "-", "rank0", "copy_ms")
        if c:
            total = sum(b * get(rows, "data", "mn", n, "-", "-", "-", "files", default=0) for n, b in SIZES.items())
            if total:
                self.copy_bw = total / (c / 1000)


def per_file(inp, size, nodes, wire_bw, wire_latency, bisection):
    """Seconds one node spends per file when NODES nodes each read every file once (1/NODES of them local)."""
    h = 1.0 / nodes
    t_local = interp(inp.local, size)
    bw = min(inp.fetch_bw, wire_bw * bisection) if wire_bw else inp.fetch_bw
    t_remote = interp(inp.materialise, size) + inp.fetch_latency + wire_latency + size / bw
    return h * t_local + (1 - h) * t_remote


def aggregate(inp, size, nodes, wire_bw=None, wire_latency=0.0, bisection=1.0, cores=None, node_cores=2):
    rate = nodes / per_file(inp, size, nodes, wire_bw, wire_latency, bisection)
    if cores:  # all nodes on one host of CORES cores: each node alone kept NODE_CORES busy
        rate *= min(1.0, cores / (nodes * node_cores))
    return rate


def load_time(inp, nodes, files, file_bytes, wire_bw, wire_latency):
    copy = (files * file_bytes / nodes) / inp.copy_bw if inp.copy_bw else float("nan")
    gather_bytes = files * inp.gather_bytes_per_entry
    gather = (nodes - 1) * (inp.fetch_latency + wire_latency) + gather_bytes * (nodes - 1) / nodes / min(
        inp.gather_bw, wire_bw)
    table = files * inp.table_s_per_entry
    return copy, gather, table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--out")
    ap.add_argument("--plot")
    ap.add_argument("--net-gbps", type=float, default=100.0)
    ap.add_argument("--net-latency-us", type=float, default=2.0)
    ap.add_argument("--bisection", type=float, default=1.0, help="fraction of a node's link the fabric carries")
    ap.add_argument("--files", type=int, default=1281167)
    ap.add_argument("--file-kib", type=float, default=110.0)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    rows = load(a.csv)
    inp = Inputs(rows, a.threads)
    wire_bw = a.net_gbps * 1e9 / 8
    wire_lat = a.net_latency_us * 1e-6
    cores = int(get(rows, "meta", "-", "-", "-", "-", "-", "cores", default=2))
    p = print
    p("### Scaling model (bench/model/scaling.py, docs/scaling-model.md)\n")
    p("Inputs measured in this run (%d reader threads per node):\n" % a.threads)
    p("| input | value |\n|---|---|")
    for b, c in sorted(inp.local.items()):
        p("| local open+read, %d KiB (fanstore plain, warm) | %.1f us/file |" % (b >> 10, c * 1e6))
    for b, c in sorted(inp.materialise.items()):
        p("| runtime request + cache file, %d KiB (LZ4 first pass less JMH decode) | %.1f us/file |" % (b >> 10, c * 1e6))
    p("| remote fetch latency (fit of RemoteFetcher 128 KiB..8 MiB, between namespaces) | %.0f us |" % (inp.fetch_latency * 1e6))
    p("| remote fetch bandwidth (same fit) | %.0f MB/s (raw MPJ 8 MiB: %.0f MB/s) |" % (inp.fetch_bw / 1e6, inp.raw_bw / 1e6))
    p("| all-gather, 2 ranks, %d entries, %.0f B/entry | %.0f ms (%.0f MB/s) |" % (
        inp.entries, inp.gather_bytes_per_entry, inp.gather_s * 1e3, inp.gather_bw / 1e6))
    p("| table build + publish | %.2f us/entry |" % (inp.table_s_per_entry * 1e6))
    p("| metadata memory (shared table) | %.0f B/entry |" % inp.meta_per_entry)
    if inp.copy_bw:
        p("| partition copy to local disk | %.0f MB/s |" % (inp.copy_bw / 1e6))
    p("\nNetwork assumed for the cluster rows: %.0f Gb/s, %.1f us, bisection %.2f; one node per host.\n" % (
        a.net_gbps, a.net_latency_us, a.bisection))

    # validation: the run's own 1/2/4-rank jobs, all on this host (shared cores)
    p("Validation against this run's multi-node jobs (first pass, each rank reads every file; all ranks on one "
      "%d-core host, so the prediction divides the host's cores among them):\n" % cores)
    p("| ranks | size | predicted files/s | measured files/s | measured / predicted |\n|---|---|---|---|---|")
    val = []
    for n in (1, 2, 4):
        for name, b in SIZES.items():
            meas = [get(rows, "multinode", "rank%d" % r, name, str(n), "2", "first", "files_per_s") for r in range(n)]
            if None in meas:
                continue
            pred = aggregate(inp, b, n, cores=cores)
            m = sum(meas)
            val.append((n, name, pred, m))
            p("| %d | %s | %.0f | %.0f | %.2f |" % (n, name, pred, m, m / pred))

    # prediction
    nodes = [1, 4, 16, 64, 128, 256, 512, 1024]
    size = int(a.file_kib * 1024)
    p("\nPrediction for a cluster, %d files of %.0f KiB (every node reads the whole dataset once per epoch):\n" % (
        a.files, a.file_kib))
    p("| nodes | aggregate files/s | per node | efficiency vs 4 | efficiency vs 64 | load: copy / all-gather / table (s) "
      "| metadata per node |\n|---|---|---|---|---|---|---|")
    pred = {n: aggregate(inp, size, n, wire_bw, wire_lat, a.bisection) for n in nodes}
    for n in nodes:
        c, g, t = load_time(inp, n, a.files, size, wire_bw, wire_lat)
        e4 = pred[n] / (pred[4] * n / 4) if n >= 4 else float("nan")
        e64 = pred[n] / (pred[64] * n / 64) if n >= 64 else float("nan")
        p("| %d | %.0f | %.0f | %s | %s | %.1f / %.2f / %.1f | %.0f MB |" % (
            n, pred[n], pred[n] / n, "%.0f%%" % (100 * e4) if n >= 4 else "-",
            "%.0f%%" % (100 * e64) if n >= 64 else "-", c, g, t, a.files * inp.meta_per_entry / 1e6))
    e_4_16 = pred[16] / (pred[4] * 4)
    e_64_512 = pred[512] / (pred[64] * 8)
    t_remote = interp(inp.materialise, size) + inp.fetch_latency + wire_lat + size / min(inp.fetch_bw, wire_bw)
    bound = "the runtime's software (fetch %.0f MB/s < link %.0f MB/s)" % (inp.fetch_bw / 1e6, wire_bw / 1e6) \
        if inp.fetch_bw < wire_bw * a.bisection else "the network link"
    p("\nEfficiency 4 -> 16 nodes: predicted %.0f%% (paper, Figure 5: 76-83%%); 64 -> 512: predicted %.0f%% "
      "(paper, Figure 6: 81-88%%)." % (100 * e_4_16, 100 * e_64_512))
    p("Where it stops scaling and why: the per-node rate falls from the local rate (%.0f files/s at 1 node) to the "
      "remote rate (%.0f files/s) as the local share 1/N vanishes; past ~16 nodes it is flat, so aggregate "
      "files/s keeps growing linearly, bounded per node by %s, until the fabric's bisection (here %.2f of a "
      "link) is the limit. What does not shrink with N: the table build (%.1f s for %d entries, every node "
      "builds the whole namespace) and the metadata memory per node (%.0f MB), both O(files), not O(nodes); "
      "the all-gather moves O(files) bytes to every node. So the load time stops improving once the copy "
      "(O(1/N)) is below the table build: at about %d nodes here." % (
          1 / interp(inp.local, size), 1 / t_remote, bound, a.bisection, a.files * inp.table_s_per_entry,
          a.files, a.files * inp.meta_per_entry / 1e6,
          next((n for n in nodes if load_time(inp, n, a.files, size, wire_bw, wire_lat)[0]
                < load_time(inp, n, a.files, size, wire_bw, wire_lat)[2]), nodes[-1])))
    if a.out:
        with open(a.out + "/model.csv", "w") as f:
            f.write("kind,nodes,size,files_per_s,measured\n")
            for n, name, pr, m in val:
                f.write("validation,%d,%s,%.1f,%.1f\n" % (n, name, pr, m))
            for n in nodes:
                f.write("prediction,%d,%d,%.1f,\n" % (n, size, pred[n]))
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
        ax1.plot(nodes, [pred[n] for n in nodes], "o-", label="predicted aggregate")
        ax1.plot(nodes, [pred[1] * n for n in nodes], "--", color="grey", label="linear from 1 node")
        ax1.set_xscale("log", base=2)
        ax1.set_yscale("log")
        ax1.set_xlabel("nodes")
        ax1.set_ylabel("files/s")
        ax1.set_title("Predicted, %.0f KiB files, %.0f Gb/s" % (a.file_kib, a.net_gbps))
        ax1.legend()
        labels = ["%d r %s" % (n, s) for n, s, _, _ in val]
        x = range(len(val))
        ax2.bar([i - 0.2 for i in x], [v[2] for v in val], 0.4, label="predicted")
        ax2.bar([i + 0.2 for i in x], [v[3] for v in val], 0.4, label="measured")
        ax2.set_xticks(list(x))
        ax2.set_xticklabels(labels, rotation=45)
        ax2.set_ylabel("aggregate files/s (one host)")
        ax2.set_title("Validation: 1/2/4 ranks, first pass")
        ax2.legend()
        fig.tight_layout()
        fig.savefig(a.plot, dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
