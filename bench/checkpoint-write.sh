#!/usr/bin/env bash
# Checkpoint write throughput through the mount vs the same disk directly, same run. One Python process writes N
# checkpoints of MIB MiB each with the atomic idiom: write NAME.tmp, flush, fsync, os.replace(NAME.tmp, NAME).
# native: into WORK_DIR/native. fanstore: `fanstore run --ranks 1` with its defaults (no --output-dir: outputs are
# dropped at the end) and --local-dir WORK_DIR, so its local dir is on the same disk as the native target, writing
# /fanstore/ds/ckpt. The clock runs inside the writer around the write loop only (not the job's start or end; the
# payload is made before). ROUNDS rounds (default 5), the order alternating each round, each variant after `sync`
# with the previous variant's files removed. Prints each round's MB/s (MB = 10^6 B), then a table of the medians
# and the ratio of medians fanstore/native. Then the same comparison inside one job, after it started: ROUNDS rounds
# alternating the mount and a directory of the same disk outside it (WORK_DIR/plain), both written by the job's
# command, so the runtime's start (its JVM warming up on the same cores) is out of both.
#   bench/checkpoint-write.sh [WORK_DIR] [N] [MIB]     e.g. ROUNDS=5 bench/checkpoint-write.sh /tmp/ckw 4 256
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-ckpt}"; n="${2:-4}"; mib="${3:-256}"
rounds="${ROUNDS:-5}"; py=/usr/bin/python3
rm -rf "$work"; mkdir -p "$work/src" "$work/native"
echo input > "$work/src/input.txt"
"$repo/fanstore" prep --input "$work/src" --output "$work/ds.fs" --name ds >/dev/null
cat > "$work/writer.py" <<'PY'
import os, sys, time
d, n, mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(d, exist_ok=True)
payload = bytearray(os.urandom(mib << 20))           # made before the clock starts
chunk = 16 << 20
t0 = time.perf_counter()
for i in range(n):
    payload[:8] = i.to_bytes(8, "little")
    final = os.path.join(d, "ckpt-%d.pt" % i)
    tmp = final + ".tmp"
    with open(tmp, "wb") as f:
        view = memoryview(payload)
        for off in range(0, len(payload), chunk):
            f.write(view[off:off + chunk])
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, final)
s = time.perf_counter() - t0
print("files %d seconds %.3f MB_per_s %.1f" % (n, s, n * (mib << 20) / 1e6 / s))
PY
clean() { rm -rf "$work/native"/* "$work"/fanstore-* 2>/dev/null || true; sync; }
native() { "$py" "$work/writer.py" "$work/native/ckpt" "$n" "$mib"; }
viafs() {
  "$repo/fanstore" run --ranks 1 --data "$work/ds.fs" --local-dir "$work" -- \
    "$py" "$work/writer.py" /fanstore/ds/ckpt "$n" "$mib" 2>"$work/run.err" || { cat "$work/run.err" >&2; exit 1; }
}
echo "# $(date -u '+%F %H:%M') UTC, commit $(git -C "$repo" rev-parse --short HEAD), $(nproc) cores," \
     "load $(cut -d' ' -f1-3 /proc/loadavg), $n x $mib MiB per round, fsync + os.replace," \
     "native and local dir on $(df --output=source,fstype "$work" | tail -1 | tr -s ' ')"
rows="$work/rows.txt"; : > "$rows"
for r in $(seq "$rounds"); do
  order="native fanstore"; [ $((r % 2)) = 0 ] && order="fanstore native"
  for v in $order; do
    clean
    if [ "$v" = native ]; then out=$(native); else out=$(viafs); fi
    mbs=$(awk '/^files/ {print $6}' <<<"$out")
    [ -n "$mbs" ] || { echo "no result from $v: $out" >&2; exit 1; }
    echo "round $r $v $mbs" | tee -a "$rows"
  done
done
clean
cat > "$work/injob.sh" <<EOF
for r in \$(seq $rounds); do
  order="mount plain"; [ \$((r % 2)) = 0 ] && order="plain mount"
  for v in \$order; do
    rm -rf /fanstore/ds/ckpt "$work/plain"; sync
    d=/fanstore/ds/ckpt; [ \$v = plain ] && d="$work/plain"
    echo "injob \$r \$v \$("$py" "$work/writer.py" "\$d" $n $mib)"
  done
done
EOF
"$repo/fanstore" run --ranks 1 --data "$work/ds.fs" --local-dir "$work" -- bash "$work/injob.sh" 2>"$work/run.err" \
  | awk '/^injob/ {print "round", $2, "in-job-" $3, $9}' | tee -a "$rows"
"$py" - "$rows" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault(f[2], []).append(float(f[3]))
def table(base, other):
    nat = st.median(rows[base])
    for k in (base, other):
        v = rows[k]
        print("| %s | %s | %.0f | %.2f |" % (k, " ".join("%.0f" % x for x in v), st.median(v), st.median(v) / nat))
print("| variant | MB/s per round | median MB/s | x native |")
print("|---|---|---:|---:|")
table("native", "fanstore")
if "in-job-plain" in rows:
    table("in-job-plain", "in-job-mount")
PY
rm -rf "$work"
