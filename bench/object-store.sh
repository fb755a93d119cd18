#!/usr/bin/env bash
# Training data from an object store (issue 43): S3Proxy behind a 20 ms round trip (tests/s3/netns.sh: netem, or
# tests/s3/delayproxy.py where the kernel has no sch_netem), each row against its baselines, alternating rounds:
#   a-threads   the raw store: the datasets' partition objects read with THREADS parallel 8 MiB range GETs by
#               fanstore's S3 client (ObjectStore.read, AWS SDK Java 2.x): the ceiling (ObjectStoreReadBench)
#   a-parallel  the same with ObjectStore.readParallel per partition, as the runtime's ObjectStoreSource reads
#   b           the way users do it today: one object per sample, a DataLoader with 8 workers, boto3 GETs
#               (bench/s3_dataloader.py)
#   local       the same DataLoader over the source tree on this disk (warm page cache): "local speed"
#   c1, c2      fanstore from the bucket, `fanstore run --data s3://BUCKET/fs/NAME.fs`, 1 rank / 2 ranks with the
#               CPUs split as a cluster has them (bench/other-nodes-core.sh), rank 0 reading every file; the same
#               DataLoader over /fanstore/NAME, epochs 1-3. Skipped (said so) where `run --data s3://` does not
#               work yet.
# Requests and GET bytes are counted by the delay proxy (the same meter for every row; needs the proxy, so with
# netem they are "-"); a row's GET bytes / dataset bytes is per job (all its epochs).
#   bench/object-store.sh [WORK_DIR]        ROUNDS (3), N112 (2000 files of 112 KiB), N2M (200 of 2 MiB),
#                                           ONE_WAY_MS (10), THREADS (8), PARTITIONS (4), SKIP_C=1
# Needs root (the namespace), the build (mvn -B -o -q -DskipTests package), /usr/bin/python3 with torch and boto3
# (python3-torch, python3-boto3). Writes bench/journal/DATE-object-store-COMMIT.txt.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="$(mkdir -p "${1:-/tmp/fanstore-object-store}" && readlink -f "${1:-/tmp/fanstore-object-store}")"
rounds=${ROUNDS:-3}; n112=${N112:-2000}; n2m=${N2M:-200}; delay=${ONE_WAY_MS:-10}; threads=${THREADS:-8}
parts=${PARTITIONS:-4}; py=/usr/bin/python3; bucket=bench
control=http://198.18.43.2:9100/
cp_bench="$repo/bench/target/fanstore-bench.jar:$repo/bench/target/lib/*"
[ "$(id -u)" = 0 ] || { echo "object-store.sh: needs root (network namespace)" >&2; exit 2; }
"$py" -c 'import boto3, torch' 2>/dev/null ||
  { echo "object-store.sh: $py needs torch and boto3 (apt-get install python3-torch python3-boto3)" >&2; exit 2; }
[ -f "$repo/bench/target/fanstore-bench.jar" ] || { echo "object-store.sh: build first (mvn -B -o -q -DskipTests package)" >&2; exit 2; }
if ip netns list | grep -qw fanstore-s3; then
  echo "object-store.sh: namespace fanstore-s3 in use: tests/s3/netns.sh down first (if it is yours)" >&2; exit 2
fi

commit=$(git -C "$repo" rev-parse --short HEAD)
journal="$repo/bench/journal/$(date -u +%F)-object-store-$commit.txt"
rows="$work/rows.txt"; : > "$rows"
log() { echo "$*" | tee -a "$work/log.txt" >&2; }
: > "$work/log.txt"

# datasets: random bytes (incompressible), 100 files a directory; the fanstore datasets prepped locally
gen() { # gen SIZE_LABEL BYTES COUNT
  [ -f "$work/src/$1.done" ] && [ "$(cat "$work/src/$1.done")" = "$2 $3" ] && return
  rm -rf "${work:?}/src/$1"
  "$py" - "$work/src/$1" "$2" "$3" <<'PY'
import os, sys
root, size, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(count):
    d = os.path.join(root, f"d{i // 100:03d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:05d}.bin"), "wb") as f:
        f.write(os.urandom(size))
PY
  echo "$2 $3" > "$work/src/$1.done"
}
mkdir -p "$work/fs"
sizes=(112K 2M)
declare -A name=([112K]=d112k [2M]=d2m)
gen 112K $((112 << 10)) "$n112"
gen 2M $((2 << 20)) "$n2m"
for s in "${sizes[@]}"; do
  (cd "$work/src/$s" && find . -type f -name '*.bin' | sed 's|^\./||' | sort) > "$work/$s.list"
  "$repo/fanstore" prep --input "$work/src/$s" --name "${name[$s]}" --output "$work/fs/${name[$s]}.fs" \
    --partitions "$parts" --force >/dev/null
done
bytes_of() { du -sb --apparent-size "$1" | awk '{print $1}'; }

# the server behind the delay; always taken down again
rm -rf "$work/s3"
up=""
cleanup() { [ -z "$up" ] || "$repo/tests/s3/netns.sh" down; }
trap cleanup EXIT
"$repo/tests/s3/netns.sh" up "$delay" "$work/s3" >/dev/null 2>"$work/netns.txt" || { cat "$work/netns.txt" >&2; exit 1; }
up=1
"$repo/tests/s3/netns.sh" check
log "$(cat "$work/netns.txt")"
set -a; . "$work/s3/s3proxy.env"; set +a
for s in "${sizes[@]}"; do
  "$py" "$repo/bench/s3_tool.py" upload "$bucket" "raw/$s" "$work/src/$s" >/dev/null
  "$py" "$repo/bench/s3_tool.py" upload "$bucket" "fs/${name[$s]}.fs" "$work/fs/${name[$s]}.fs" >/dev/null
done
log "$("$py" "$repo/bench/s3_tool.py" rtt 50)"

counters() { curl -s --max-time 5 "$control" 2>/dev/null || echo '{}'; }
delta() { # delta BEFORE AFTER: "requests GET_body_bytes" between two counter snapshots ("- -" without the proxy)
  "$py" -c '
import json, sys
a, b = (json.loads(x or "{}") for x in sys.argv[1:3])
if "requests" not in b: print("- -"); sys.exit()
req = sum(b["requests"].values()) - sum(a["requests"].values())
get = b["body_bytes"].get("GET", 0) - a["body_bytes"].get("GET", 0)
print(req, get)' "$1" "$2"
}
row() { # row ROUND LABEL SIZE EPOCH FILES_S MIB_S REQ_GET DATASET_BYTES FIRST_BYTE_MS FILES
  echo "$*" | tee -a "$rows" >&2
}

# (c) only where `fanstore run --data s3://` works in this tree
c_ok=0
if [ "${SKIP_C:-0}" != 1 ] && timeout 120 "$repo/fanstore" run --data "s3://$bucket/fs/${name[112K]}.fs" \
    --local-dir "$work/local" -- true >"$work/c-probe.txt" 2>&1; then
  c_ok=1
else
  log "(c) skipped: 'fanstore run --data s3://$bucket/fs/${name[112K]}.fs -- true' failed in this tree: $(head -c 300 "$work/c-probe.txt")"
fi

run_a() { # run_a ROUND SIZE MODE
  local before after out
  before=$(counters)
  out=$(timeout 300 java -cp "$cp_bench" org.fanstore.bench.ObjectStoreReadBench "s3://$bucket/fs/${name[$2]}.fs" \
    "$threads" 8 "$3" 2> >(grep -v '^SLF4J' >> "$work/log.txt") | grep '^raw-store') || { log "a-$3 $2 failed"; return; }
  after=$(counters)
  local n; n=$(wc -l < "$work/$2.list")
  echo "$out" | awk -v r="$1" -v s="$2" -v m="$3" -v d="$(delta "$before" "$after")" \
    -v ds="$(bytes_of "$work/fs/${name[$2]}.fs")" -v n="$n" \
    '{ printf "%s a-%s %s 1 %.1f %s %s %s - %s\n", r, m, s, n / $9, $11, d, ds, n }' | while read -r l; do row $l; done
}
run_loader() { # run_loader ROUND LABEL SIZE EPOCHS DATASET_BYTES CMD...: the DataLoader's epochs as rows
  local r=$1 label=$2 s=$3 epochs=$4 ds=$5 before after out d fb n
  shift 5
  n=$(wc -l < "$work/$s.list")
  before=$(counters)
  out=$(LAUNCH_NS=$(date +%s%N) timeout 600 "$@" 2>>"$work/log.txt") || { log "$label $s failed"; return; }
  after=$(counters)
  d=$(delta "$before" "$after")
  fb=$(echo "$out" | awk '$1=="first_byte_ms" {print $2}')
  echo "$out" | awk '$1=="epoch" {print $2, $10, $12}' | while read -r e fs ms; do
    row "$r" "$label" "$s" "$e" "$fs" "$ms" "$d" "$ds" "$fb" "$n"
  done
}
loader="$repo/bench/s3_dataloader.py"
one() { # one ROUND LABEL SIZE
  local r=$1 label=$2 s=$3 nm=${name[$3]}
  "$repo/tests/s3/netns.sh" check   # never a request to 198.18.43.2 by the default route
  case $label in
    a-threads) run_a "$r" "$s" threads ;;
    a-parallel) run_a "$r" "$s" parallel ;;
    b) run_loader "$r" b "$s" 1 "$(bytes_of "$work/src/$s")" "$py" "$loader" "s3://$bucket/raw/$s" "$work/$s.list" 1 8 ;;
    local) run_loader "$r" local "$s" 3 "$(bytes_of "$work/src/$s")" "$py" "$loader" "$work/src/$s" "$work/$s.list" 3 8 ;;
    c1|c2)
      rm -rf "$work/local"; mkdir -p "$work/local"
      local ranks=${label#c} wrap=()
      [ "$ranks" = 2 ] && wrap=("$repo/bench/other-nodes-core.sh")
      run_loader "$r" "$label" "$s" 3 "$(bytes_of "$work/fs/$nm.fs")" "$repo/fanstore" run --ranks "$ranks" \
        --only-rank 0 --data "s3://$bucket/fs/$nm.fs" --local-dir "$work/local" -- \
        "${wrap[@]}" "$py" "$loader" "/fanstore/$nm" "$work/$s.list" 3 8 ;;
  esac
}
labels=(a-threads a-parallel b local)
[ "$c_ok" = 1 ] && labels+=(c1 c2)
log "round label size epoch files/s MiB/s requests GET_bytes dataset_bytes first_byte_ms files"
for ((r = 1; r <= rounds; r++)); do
  order=("${labels[@]}")
  [ $((r % 2)) = 0 ] && order=($(printf '%s\n' "${labels[@]}" | tac))
  for s in "${sizes[@]}"; do
    for l in "${order[@]}"; do one "$r" "$l" "$s"; done
  done
done

summary=$("$py" - "$rows" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    r, label, size, epoch, fs, ms, req, get, ds, fb, n = line.split()
    rows.setdefault((size, label, int(epoch)), []).append((float(fs), float(ms), req, get, int(ds), fb, int(n)))
def med(xs):
    xs = [float(x) for x in xs if x != "-"]
    return st.median(xs) if xs else None
def f(x, fmt):
    return "-" if x is None else format(x, fmt)
print("| size | row | epoch | files/s | MiB/s | requests (job) | requests/file | GET bytes / dataset | launch->first byte ms | rounds |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
m = {}
for (size, label, e), v in sorted(rows.items()):
    fs, ms = med(x[0] for x in v), med(x[1] for x in v)
    req, get, fb = med(x[2] for x in v), med(x[3] for x in v), med(x[5] for x in v)
    ds, n = v[0][4], v[0][6]
    m[size, label, e] = (fs, ms)
    print(f"| {size} | {label} | {e} | {f(fs, ',.1f')} | {f(ms, ',.1f')} | {f(req, ',.0f')} |"
          f" {f(req / n if req is not None else None, '.3f')} | {f(get / ds if get is not None else None, '.3f')} |"
          f" {f(fb, '.0f')} | {len(v)} |")
print()
def ratio(a, b, i):
    return f"{a[i] / b[i]:.2f}x" if a and b and b[i] else "-"
for size in sorted({k[0] for k in m}):
    a, b, loc = m.get((size, "a-threads", 1)), m.get((size, "b", 1)), m.get((size, "local", 3))
    for c in ("c1", "c2"):
        if (size, c, 1) in m:
            print(f"{size} {c}: epoch 1 {ratio(m[size, c, 1], a, 1)} raw store MiB/s (goal >= 0.8x), "
                  f"{ratio(m[size, c, 1], b, 0)} boto3 DataLoader files/s (goal >= 10x at 112K), "
                  f"epoch 3 {ratio(m.get((size, c, 3)), loc, 0)} local epoch 3 files/s")
    if a and b:
        print(f"{size}: boto3 DataLoader {b[1] / a[1]:.2f}x the raw store's MiB/s")
PY
)
echo "$summary"
{
  echo "# bench/object-store.sh $work, commit $commit, $(date -u '+%F %H:%M UTC'), load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# ROUNDS=$rounds N112=$n112 N2M=$n2m ONE_WAY_MS=$delay THREADS=$threads PARTITIONS=$parts, nproc $(nproc)"
  cat "$work/log.txt"
  echo
  cat "$rows"
  echo
  echo "$summary"
} > "$journal"
echo "journal: $journal" >&2
