#!/usr/bin/env bash
# Training data from an object store (issue 43): S3Proxy behind a 20 ms round trip (tests/s3/netns.sh: netem, or
# tests/s3/delayproxy.py where the kernel has no sch_netem), each row against its baselines, alternating rounds:
#   a-threads   the raw store: the datasets' partition objects read with THREADS parallel 8 MiB range GETs by
#               fanstore's S3 client (ObjectStore.read, AWS SDK Java 2.x): the ceiling (ObjectStoreReadBench)
#   a-parallel  the same with ObjectStore.readParallel per partition, as the runtime's ObjectStoreSource reads
#   b           the way users do it today: one object per sample, a DataLoader with 8 workers, boto3 GETs
#               (bench/s3_dataloader.py)
#   local       the same DataLoader over the source tree on this disk (warm page cache): "local speed"
#   local1      the same, pinned as bench/other-nodes-core.sh pins a split-CPU reader (CPUs 0..N-2): the c2 rows'
#               local speed (their reader and its rank share those CPUs; the other rank has the last)
#   c1, c2      fanstore from the bucket, `fanstore run --data s3://BUCKET/fs/NAME.fs`, 1 rank / 2 ranks with the
#               CPUs split as a cluster has them (bench/other-nodes-core.sh), rank 0 reading every file; the same
#               DataLoader over /fanstore/NAME, epochs 1-3. Skipped (said so) where `run --data s3://` does not
#               work yet. Also from fanstore's end line: its own launch -> first byte ("first byte X s") and the
#               job's "object store B in N requests" (every rank's client); FANSTORE_VERBOSE=1 for the load phases.
#   c1v, c2v    c1 / c2 with FANSTORE_RUNTIME_JAVA_OPTS="$C_VARIANT_OPTS" (only when C_VARIANT_OPTS is set): a runtime
#               setting against the default in the same rounds, e.g. -Dfanstore.fill.background=8
#   c1o, c2o    c1 / c2 with the build in C_OLD_REPO (only when set: another checkout, built), e.g. main's HEAD in a
#               second worktree: a code change against the build before it in the same rounds
#   big1, big2  launch -> command start and -> first byte of one file with a large namespace in the bucket (BIG, a
#               prepped dataset directory: default /work/lb/in1k-new.fs, bench/load-bench.sh's 1.3M files, copied
#               into WORK_DIR first; BIG= skips these rows), 1 and 2 ranks (split CPUs), the command
#               bench/first_byte.py (no torch), once per round
# Requests and GET bytes are counted by the delay proxy (the same meter for every row; needs the proxy, so with
# netem they are "-"); a row's GET bytes / dataset bytes is per job (all its epochs).
#   bench/object-store.sh [WORK_DIR]        ROUNDS (3), N112 (2000 files of 112 KiB), N2M (200 of 2 MiB),
#                                           ONE_WAY_MS (10), THREADS (8), PARTITIONS (4), SKIP_C=1, BIG,
#                                           EPOCHS (3: the local and c rows' epochs; later epochs of 200 2 MiB
#                                           files last ~20 ms each, so more of them give a steadier median),
#                                           LABELS (the rows to run, default all), C_VARIANT_OPTS, C_OLD_REPO
# Needs root (the namespace), the build (mvn -B -o -q -DskipTests package), /usr/bin/python3 with torch and boto3
# (python3-torch, python3-boto3). Writes bench/journal/DATE-object-store-COMMIT.txt.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="$(mkdir -p "${1:-/tmp/fanstore-object-store}" && readlink -f "${1:-/tmp/fanstore-object-store}")"
rounds=${ROUNDS:-3}; n112=${N112:-2000}; n2m=${N2M:-200}; delay=${ONE_WAY_MS:-10}; threads=${THREADS:-8}
parts=${PARTITIONS:-4}; epochs=${EPOCHS:-3}; py=/usr/bin/python3; bucket=bench
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
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
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

# the large namespace (launch -> first byte "at any dataset size"): a copy, so another bench rewriting BIG cannot
# change it under the upload; its name and one file found by walking its first entries
big_src=${BIG-/work/lb/in1k-new.fs}; big_name=""; big_file=""
if [ -n "$big_src" ] && [ -f "$big_src/manifest.txt" ]; then
  if ! cmp -s "$big_src/manifest.txt" "$work/big.fs/manifest.txt"; then
    rm -rf "$work/big.fs"; cp -a "$big_src" "$work/big.fs.tmp" && mv "$work/big.fs.tmp" "$work/big.fs"
  fi
  big_name=$(awk '$1=="name" {print $2; exit}' "$work/big.fs/manifest.txt")
  p=""
  for _ in 1 2 3 4 5 6 7 8; do
    first=$("$repo/fanstore" ls "$work/big.fs" "/$p" | head -1)
    p=${p:+$p/}$first
    "$repo/fanstore" stat "$work/big.fs" "/$p" | grep -q 'type: file' && { big_file=$p; break; }
  done
  [ -n "$big_file" ] || { echo "object-store.sh: no file found in $work/big.fs" >&2; exit 1; }
elif [ -n "$big_src" ]; then
  echo "object-store.sh: BIG=$big_src is not a prepped dataset: the big rows are skipped" >&2
fi

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
[ -z "$big_file" ] || { "$repo/tests/s3/netns.sh" check &&
  timeout 900 "$py" "$repo/bench/s3_tool.py" upload "$bucket" "fs/$big_name.fs" "$work/big.fs" >/dev/null; }
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
row() { # row ROUND LABEL SIZE EPOCH FILES_S MIB_S REQ_GET DATASET_BYTES FIRST_BYTE_MS FILES START_MS FS_END
  echo "$*" | tee -a "$rows" >&2   # FS_END: fanstore's first byte ms, object-store requests and bytes ("- - -")
}
fs_end() { # fs_end STDERR_FILE: "FIRST_BYTE_MS REQUESTS BYTES" from fanstore's end line ("-" where absent)
  awk '/^fanstore: [0-9]+ ranks, / {
      fb = "-"; req = "-"; by = "-"
      if (match($0, /first byte [0-9.]+ s/)) { split(substr($0, RSTART, RLENGTH), a, " "); fb = int(a[3] * 1000 + 0.5) }
      if (match($0, /object store [0-9.]+ [KMGT]?i?B in [0-9]+ requests/)) {
        split(substr($0, RSTART, RLENGTH), a, " ")
        m = a[4] == "KiB" ? 1024 : a[4] == "MiB" ? 1048576 : a[4] == "GiB" ? 1073741824 : a[4] == "TiB" ? 1099511627776 : 1
        by = sprintf("%.0f", a[3] * m); req = a[6]
      }
      print fb, req, by; found = 1 }
    END { if (!found) print "- - -" }' "$1"
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
    '{ printf "%s a-%s %s 1 %.1f %s %s %s - %s - - - -\n", r, m, s, n / $9, $11, d, ds, n }' | while read -r l; do row $l; done
}
run_loader() { # run_loader ROUND LABEL SIZE EPOCHS DATASET_BYTES CMD...: the DataLoader's epochs as rows
  local r=$1 label=$2 s=$3 epochs=$4 ds=$5 before after out d fb st n end
  shift 5
  n=$(wc -l < "$work/$s.list")
  before=$(counters)
  out=$(LAUNCH_NS=$(date +%s%N) timeout 600 "$@" 2>"$work/stderr.txt") ||
    { cat "$work/stderr.txt" >> "$work/log.txt"; log "$label $s failed"; return; }
  after=$(counters)
  { grep -v '^fanstore: no --output-dir' "$work/stderr.txt" || true; } | sed "s/^/[$r $label $s] /" >> "$work/log.txt"
  d=$(delta "$before" "$after")
  fb=$(echo "$out" | awk '$1=="first_byte_ms" {print $2}')
  st=$(echo "$out" | awk '$1=="start_ms" {print $2}')
  end=$(fs_end "$work/stderr.txt")
  echo "$out" | awk '$1=="epoch" {print $2, $10, $12}' | while read -r e fs ms; do
    row "$r" "$label" "$s" "$e" "$fs" "$ms" "$d" "$ds" "$fb" "$n" "${st:--}" "$end"
  done
}
run_big() { # run_big ROUND RANKS: launch -> command start and -> first byte of one file, the large namespace
  local r=$1 ranks=$2 before after out d wrap=()
  [ "$ranks" = 2 ] && wrap=("$repo/bench/other-nodes-core.sh")
  rm -rf "$work/local"; mkdir -p "$work/local"
  before=$(counters)
  out=$(LAUNCH_NS=$(date +%s%N) FANSTORE_VERBOSE=1 timeout 300 "$repo/fanstore" run --ranks "$ranks" --only-rank 0 \
    --data "s3://$bucket/fs/$big_name.fs" --local-dir "$work/local" -- \
    "${wrap[@]}" "$py" "$repo/bench/first_byte.py" "/fanstore/$big_name/$big_file" 2>"$work/stderr.txt") ||
    { cat "$work/stderr.txt" >> "$work/log.txt"; log "big$ranks failed"; return; }
  after=$(counters)
  { grep -v '^fanstore: no --output-dir' "$work/stderr.txt" || true; } | sed "s/^/[$r big$ranks] /" >> "$work/log.txt"
  d=$(delta "$before" "$after")
  # rank 0's load phases (FANSTORE_VERBOSE): init (JVM, manifest, rendezvous), table, serve (incl. partition checks)
  local phases; phases=$(awk '/^fanstore rank 0: files=/ { for (i = 1; i <= NF; i++) if ($i ~ /^(load|init|table|serve)_ms=/) { split($i, a, "="); v[a[1]] = a[2] }
    print v["load_ms"], v["init_ms"], v["table_ms"], v["serve_ms"]; exit }' "$work/stderr.txt")
  echo "$r big$ranks $(echo "$out" | awk '$1=="start_ms" {s=$2} $1=="first_byte_ms" {f=$2} END {print s, f}') \
$(fs_end "$work/stderr.txt") $d ${phases:-- - - -}" | tee -a "$work/bigrows.txt" >&2
}
loader="$repo/bench/s3_dataloader.py"
one() { # one ROUND LABEL SIZE
  local r=$1 label=$2 s=$3 nm=${name[$3]}
  "$repo/tests/s3/netns.sh" check   # never a request to 198.18.43.2 by the default route
  case $label in
    a-threads) run_a "$r" "$s" threads ;;
    a-parallel) run_a "$r" "$s" parallel ;;
    b) run_loader "$r" b "$s" 1 "$(bytes_of "$work/src/$s")" "$py" "$loader" "s3://$bucket/raw/$s" "$work/$s.list" 1 8 ;;
    local) run_loader "$r" local "$s" "$epochs" "$(bytes_of "$work/src/$s")" "$py" "$loader" "$work/src/$s" \
      "$work/$s.list" "$epochs" 8 ;;
    local1) run_loader "$r" local1 "$s" "$epochs" "$(bytes_of "$work/src/$s")" taskset -c "0-$(( $(nproc) - 2 ))" \
      "$py" "$loader" "$work/src/$s" "$work/$s.list" "$epochs" 8 ;;
    c1|c2|c1v|c2v|c1o|c2o)
      rm -rf "$work/local"; mkdir -p "$work/local"
      local ranks=${label:1:1} wrap=() opts="" build=$repo
      [ "$ranks" = 2 ] && wrap=("$repo/bench/other-nodes-core.sh")
      [ "${label:2}" = v ] && opts=${C_VARIANT_OPTS:-}
      [ "${label:2}" = o ] && build=$C_OLD_REPO
      run_loader "$r" "$label" "$s" "$epochs" "$(bytes_of "$work/fs/$nm.fs")" \
        env FANSTORE_VERBOSE=1 FANSTORE_RUNTIME_JAVA_OPTS="$opts" \
        "$build/fanstore" run --ranks "$ranks" \
        --only-rank 0 --data "s3://$bucket/fs/$nm.fs" --local-dir "$work/local" -- \
        "${wrap[@]}" "$py" "$loader" "/fanstore/$nm" "$work/$s.list" "$epochs" 8 ;;
  esac
}
labels=(a-threads a-parallel b local local1)
[ "$c_ok" = 1 ] && labels+=(c1 c2)
[ "$c_ok" = 1 ] && [ -n "${C_VARIANT_OPTS:-}" ] && labels+=(c1v c2v)
if [ -n "${C_OLD_REPO:-}" ]; then
  [ -x "$C_OLD_REPO/fanstore" ] && [ -f "$C_OLD_REPO/bench/target/fanstore-bench.jar" ] ||
    { echo "object-store.sh: C_OLD_REPO=$C_OLD_REPO is not a built checkout" >&2; exit 2; }
  [ "$c_ok" = 1 ] && labels+=(c1o c2o)
fi
if [ -n "${LABELS:-}" ]; then
  want=" $LABELS "; keep=()
  for l in "${labels[@]}"; do [[ $want == *" $l "* ]] && keep+=("$l"); done
  labels=("${keep[@]}")
fi
: > "$work/bigrows.txt"
log "round label size epoch files/s MiB/s requests GET_bytes dataset_bytes first_byte_ms files start_ms fanstore:first_byte_ms,requests,bytes"
for ((r = 1; r <= rounds; r++)); do
  order=("${labels[@]}")
  [ $((r % 2)) = 0 ] && order=($(printf '%s\n' "${labels[@]}" | tac))
  for s in "${sizes[@]}"; do
    for l in "${order[@]}"; do one "$r" "$l" "$s"; done
  done
  if [ "$c_ok" = 1 ] && [ -n "$big_file" ]; then
    bigs=(1 2); [ $((r % 2)) = 0 ] && bigs=(2 1)
    for k in "${bigs[@]}"; do "$repo/tests/s3/netns.sh" check; run_big "$r" "$k"; done
  fi
done

summary=$("$py" - "$rows" "$work/bigrows.txt" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    r, label, size, epoch, fs, ms, req, get, ds, fb, n, sms, ffb, freq, fby = line.split()
    rows.setdefault((size, label, int(epoch)), []).append(
        (float(fs), float(ms), req, get, int(ds), fb, int(n), sms, ffb, freq, fby))
def med(xs):
    xs = [float(x) for x in xs if x != "-"]
    return st.median(xs) if xs else None
def f(x, fmt):
    return "-" if x is None else format(x, fmt)
def per(x, d, fmt):
    return f(x / d if x is not None else None, fmt)
print("| size | row | epoch | files/s | MiB/s | requests (job) | requests/file | GET bytes / dataset |"
      " start ms | first byte ms | fanstore: first byte ms | requests/file | bytes / dataset | rounds |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
m = {}
for (size, label, e), v in sorted(rows.items()):
    fs, ms = med(x[0] for x in v), med(x[1] for x in v)
    req, get, fb = med(x[2] for x in v), med(x[3] for x in v), med(x[5] for x in v)
    sms, ffb, freq, fby = (med(x[i] for x in v) for i in (7, 8, 9, 10))
    ds, n = v[0][4], v[0][6]
    m[size, label, e] = (fs, ms, req, get, ds, n, fb, ffb)
    print(f"| {size} | {label} | {e} | {f(fs, ',.1f')} | {f(ms, ',.1f')} | {f(req, ',.0f')} |"
          f" {per(req, n, '.3f')} | {per(get, ds, '.3f')} | {f(sms, '.0f')} | {f(fb, '.0f')} | {f(ffb, '.0f')} |"
          f" {per(freq, n, '.3f')} | {per(fby, ds, '.3f')} | {len(v)} |")
print()
def ratio(a, b, i):
    return f"{a[i] / b[i]:.2f}x" if a and b and b[i] else "-"
for size in sorted({k[0] for k in m}):
    a, b = m.get((size, "a-threads", 1)), m.get((size, "b", 1))
    for c in ("c1", "c2", "c1v", "c2v", "c1o", "c2o"):
        if (size, c, 1) in m:
            c1, c3 = m[size, c, 1], m.get((size, c, 3))
            # a split-CPU row's local speed is the DataLoader on the same CPUs (local1), where it ran
            base = "local1" if c[1] == "2" and (size, "local1", 2) in m else "local"
            loc = m.get((size, base, 3))
            print(f"{size} {c}: epoch 1 {ratio(c1, a, 1)} raw store MiB/s (goal >= 0.8x), "
                  f"{ratio(c1, b, 0)} boto3 DataLoader files/s (goal >= 10x at 112K); "
                  f"epochs 2 / 3 {ratio(m.get((size, c, 2)), m.get((size, base, 2)), 0)} / {ratio(c3, loc, 0)}"
                  f" {base} files/s, same epoch (goal >= 0.95x); GET bytes {per(c1[3], c1[4], '.3f')}x the dataset"
                  f" (goal <= 1.05x), {per(c1[2], c1[5], '.3f')} requests per file (goal << 1); launch -> first"
                  f" byte {f(c1[6], '.0f')} ms in the DataLoader (torch import included), {f(c1[7], '.0f')} ms by"
                  f" fanstore (goal <= 2,500)")
            later = [e for e in range(2, 100) if (size, c, e) in m and (size, base, e) in m]
            if len(later) > 2:
                cm = st.median(m[size, c, e][0] for e in later)
                bm = st.median(m[size, base, e][0] for e in later)
                print(f"{size} {c}: epochs 2-{later[-1]}, median of the per-epoch medians: {cm:,.0f} files/s vs"
                      f" {base} {bm:,.0f}: {cm / bm:.2f}x")
    if a and b:
        print(f"{size}: boto3 DataLoader {b[1] / a[1]:.2f}x the raw store's MiB/s")
big = {}
for line in open(sys.argv[2]):
    r, label, *v = line.split()
    big.setdefault(label, []).append(v)
if big:
    print()
    print("| large namespace | command start ms | first byte ms | fanstore: first byte ms | requests (fanstore) |"
          " requests (proxy) | GET MiB (proxy) | rank 0 load / init / table / serve ms | rounds |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for label, v in sorted(big.items()):
        c = [med(x[i] for x in v) for i in range(len(v[0]))]
        print(f"| {label} | {f(c[0], ',.0f')} | {f(c[1], ',.0f')} | {f(c[2], ',.0f')} | {f(c[3], ',.0f')} |"
              f" {f(c[5], ',.0f')} | {f(c[6] / 2**20 if c[6] is not None else None, ',.1f')} |"
              f" {' / '.join(f(x, ',.0f') for x in c[7:11])} | {len(v)} |")
PY
)
echo "$summary"
{
  echo "# bench/object-store.sh $work, commit $commit, $(date -u '+%F %H:%M UTC'), load at start: $load_start," \
    "at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# ROUNDS=$rounds N112=$n112 N2M=$n2m ONE_WAY_MS=$delay THREADS=$threads PARTITIONS=$parts EPOCHS=$epochs," \
    "nproc $(nproc)," \
    "LABELS=${LABELS:-all} C_VARIANT_OPTS=${C_VARIANT_OPTS:-}" \
    "C_OLD_REPO=${C_OLD_REPO:-} (${C_OLD_REPO:+$(git -C "$C_OLD_REPO" rev-parse --short HEAD)})," \
    "BIG=$big_src (name ${big_name:--}, file ${big_file:--})"
  cat "$work/log.txt"
  echo
  cat "$rows"
  echo
  echo "# big rows: round label start_ms first_byte_ms fanstore:first_byte_ms,requests,bytes proxy:requests,GET_bytes" \
    "rank0:load_ms,init_ms,table_ms,serve_ms"
  cat "$work/bigrows.txt"
  echo
  echo "$summary"
} > "$journal"
echo "journal: $journal" >&2
