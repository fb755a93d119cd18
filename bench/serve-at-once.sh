#!/usr/bin/env bash
# Serve at once (issue 33), end to end through `fanstore run` with its defaults, the dataset behind a slow shared FS:
# the prepped directory exposed through `bindfs -o ro,direct_io --read-rate=RATE` (direct_io: the mount's page
# cache cannot stand in for the slow tier; the rate is one budget for the whole mount, shared by every reader).
#   bench/serve-at-once.sh [--with-2g] [WORK_DIR]        e.g. ROUNDS=2 OLD=/work/wt-old bench/serve-at-once.sh
# Datasets: 1 MiB random files (bench/paper/gen_files.py), 200 MiB and 1 GiB (--with-2g adds 2 GiB), one partition
# per 32 MiB, generated and prepped once under DATA (default /work/sa-data: DATA/src/<name>/, DATA/<name>.fs);
# SKIP_PREP=1 reuses them. WORK_DIR (default /tmp/fanstore-serve-at-once) holds the mounts, the --local-dir and the
# logs, and is removed at the end; the mounts are always unmounted (trap).
# (a) For each RATE (RATES, default "20M 200M") and size: `fanstore run --ranks 2 --only-rank 0` of one command on
#   rank 0 that first opens one file and reads 1 byte (bench/native/first-byte.c), then reads every file once with
#   bench/native/reader.c (2 threads, the list shuffled with a fixed seed, as an epoch samples). Columns: launch ->
#   first byte (CLOCK_MONOTONIC taken right before `fanstore run`), the epoch as the reader times it, launch -> the
#   epoch's end, and the baseline in the same round: the source tree's files read alone (the same reader, list
#   and threads) through the same mount; the last column is launch -> epoch end / that.
# (b) Capacity, one size (PART_B_SIZE, default 1G) at PART_B_RATE (default 200M): a node whose local storage holds
#   half the dataset (--local-capacity size/2), and a job whose dataset is 3x all its local storage (2 ranks,
#   --local-capacity size/6). The local storage is made real: --local-dir on a tmpfs of 2 x capacity (both ranks'
#   directories are on it) + 2 x CACHE_MB (each rank's cache spills files of 1 MiB or more there) + SLACK_MB (default 32), because --local-capacity before issue 33 bounds only pulled
#   partitions and a rank's own share was checked against the free space alone (CAP_TMPFS=0: --local-capacity
#   alone, --local-dir in WORK_DIR). Each case is two jobs with --stats: one epoch, then two epochs (the reader
#   run twice in one command); epoch 1's bytes per source are the first job's, epoch 2's the second job's minus
#   the first's. Bytes per source are the fields bytes_from_local, bytes_from_peer, bytes_from_sharedfs and
#   first_byte_ms of the stats totals (or summed over ranks), "n/a" where the build does not write them; the
#   details under the table give what older builds count instead (copy before ready, fetched, pulled). A job
#   that fails (the share does not fit) is recorded as the result with its message. Last column: epoch time /
#   the whole source tree read through the same mount (the issue's goal for epoch 2: <= 0.65x).
# OLD=<another checkout, built>: the same rows with that checkout's fanstore, alternating with this one in every
# round (ROUNDS, default 1), on the same prepped datasets. SKIP_A=1 runs part (b) alone. Part (b) runs with
# --cache-mb CACHE_MB (default 64): a node's memory does not hold an ImageNet-sized dataset, and a cache that held
# this 1 GiB one would make epoch 2 a memory read whatever --local-capacity says. Output: the tables on stdout, and the whole output in
# bench/journal/<date>-serve-at-once-<commit>[-<old commit>].txt.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
sizes=(200M 1G)
if [ "${1:-}" = --with-2g ]; then sizes+=(2G); shift; fi
work="${1:-/tmp/fanstore-serve-at-once}"
data="${DATA:-/work/sa-data}"
read -ra rates <<<"${RATES:-20M 200M}"
rounds="${ROUNDS:-1}"
old="${OLD:-}"
threads=2
bsize="${PART_B_SIZE:-1G}"; brate="${PART_B_RATE:-200M}"
mkdir -p "$work" "$data/src"
work="$(cd "$work" && pwd)"
mounts=()
cleanup() {
  local m
  for m in "${mounts[@]}"; do
    mountpoint -q "$m" && { fusermount -u "$m" 2>/dev/null || umount "$m" 2>/dev/null || umount -l "$m" || true; }
  done
  for m in "${mounts[@]}"; do mountpoint -q "$m" && { echo "still mounted: $m ($work kept)" >&2; return; }; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

commit=$(git -C "$repo" rev-parse --short HEAD)
builds=("$repo"); tags=(new)
oldc=""
if [ -n "$old" ]; then
  [ -x "$old/fanstore" ] || { echo "OLD=$old has no fanstore launcher" >&2; exit 2; }
  oldc=$(git -C "$old" rev-parse --short HEAD); builds+=("$old"); tags+=("old $oldc")
fi
mkdir -p "$repo/bench/journal"
journal="$repo/bench/journal/$(date -u +%F)-serve-at-once-$commit${oldc:+-$oldc}.txt"
exec > >(tee "$journal") 2>&1

gcc -O2 -Wall -Wextra -Werror -pthread -o "$work/reader" "$repo/bench/native/reader.c"
gcc -O2 -Wall -Wextra -Werror -o "$work/first-byte" "$repo/bench/native/first-byte.c"
reader="$work/reader"; fb="$work/first-byte"
mib_of() { case $1 in *G) echo $(( ${1%G} * 1024 ));; *M) echo "${1%M}";; esac; }
name_of() { echo "sa$(tr '[:upper:]' '[:lower:]' <<<"$1")"; }   # 200M -> sa200m

# Datasets: generated and prepped once, reused with SKIP_PREP=1 (or when already prepped from the same files).
for s in "${sizes[@]}" "$bsize"; do
  n=$(name_of "$s"); mib=$(mib_of "$s")
  if [ ! -f "$data/src/.done-$n" ]; then
    rm -rf "${data:?}/src/$n" "$data/$n.fs"
    python3 "$repo/bench/paper/gen_files.py" "$data/src/$n" "$mib" 1048576 random
    touch "$data/src/.done-$n"
  fi
  if [ -z "${SKIP_PREP:-}" ] || [ ! -f "$data/$n.fs/manifest.txt" ]; then
    rm -rf "${data:?}/$n.fs"
    "$repo/fanstore" prep --input "$data/src/$n" --output "$data/$n.fs" --name "$n" \
      --partitions $(( mib / 32 > 4 ? mib / 32 : 4 )) >/dev/null
  fi
  # The epoch's list, shuffled with a fixed seed: through fanstore, and the same files in the source tree.
  find "$data/src/$n" -type f -name '*.bin' | sort | shuf --random-source=<(yes) > "$work/src-$n.list"
  sed "s|^$data/src/$n|/fanstore/$n|" "$work/src-$n.list" > "$work/fs-$n.list"
done

declare -A mnt
for r in "${rates[@]}" "$brate"; do
  [ -n "${mnt[$r]:-}" ] && continue
  mnt[$r]="$work/mnt-$r"; mkdir -p "${mnt[$r]}"
  bindfs -o ro,direct_io --read-rate="$r" "$data" "${mnt[$r]}"
  mounts+=("${mnt[$r]}")
done

echo "# $(date -u '+%F %H:%M') UTC, commit $commit${oldc:+ against OLD $oldc}, $(nproc) cores," \
  "$(free -g | awk '/Mem:/{print $2}') GiB, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), bindfs" \
  "$(bindfs --version 2>&1 | awk '{print $2; exit}') -o ro,direct_io, $threads reader threads, ROUNDS=$rounds"
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", b - a}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a != "" && b > 0) printf "%.2fx", a / b; else print "-" }'; }
field() { awk -v k="$1" '{for (i = 1; i < NF; i++) if ($i == k) printf "%.2f\n", $(i + 1)}' <<<"$2"; }   # reader
details=()
note() { details+=("$1"); }
summary() { # the ready and end-of-job lines of a run's stderr, one line
  grep -hoE 'fanstore rank [0-9]+: files=.*|fanstore: [0-9]+ ranks, .*' "$1" 2>/dev/null \
    | sed -E 's/files=[0-9]+ dirs=[0-9]+ //' | tr '\n' ';' || true
}
nat_read() { # nat_read RATE NAME: the source tree's files alone through the mount -> seconds
  local out
  sed "s|^$data|${mnt[$1]}|" "$work/src-$2.list" > "$work/mnt-$2.list"
  out=$("$reader" read 1 "$work/mnt-$2.list" "$threads")
  field seconds "$out"
}

# ---- (a) launch -> first byte, and the first epoch, against dataset size
echo
echo "## (a) slow shared FS: launch -> first byte, first epoch (fanstore run --ranks 2 --only-rank 0)"
echo "| rate | dataset | build | round | launch -> first byte (s) | epoch (s) | launch -> epoch end (s) | source alone via bindfs (s) | epoch end / source alone |"
echo "|---|---|---|---|---:|---:|---:|---:|---:|"
[ "${SKIP_A:-0}" = 1 ] || for r in "${rates[@]}"; do
  for s in "${sizes[@]}"; do
    n=$(name_of "$s")
    one=$(tail -n1 "$work/fs-$n.list")   # a file the epoch reads last: only the first-byte probe has touched it
    for round in $(seq "$rounds"); do
      base=$(nat_read "$r" "$n")   # once per round, before the builds
      for i in "${!builds[@]}"; do
        b=${builds[$i]}; tag=${tags[$i]}; log="$work/run.err"
        rm -rf "$work/local" "$work"/fb.out "$work"/ep.out "$work"/end.out; mkdir -p "$work/local"
        t0=$("$fb" now)
        if "$b/fanstore" run --ranks 2 --only-rank 0 --data "${mnt[$r]}/$n.fs" --local-dir "$work/local" -- \
             sh -c "'$fb' '$one' > '$work/fb.out' && '$reader' read 1 '$work/fs-$n.list' $threads > '$work/ep.out' && '$fb' now > '$work/end.out'" \
             >"$log" 2>&1; then
          tend=$(cat "$work/end.out")
          echo "| $r | $s | $tag | $round | $(secs "$t0" "$(cat "$work/fb.out")") | $(field seconds "$(cat "$work/ep.out")") |" \
            "$(secs "$t0" "$tend") | $base | $(ratio "$(secs "$t0" "$tend")" "$base") |"
        else
          echo "| $r | $s | $tag | $round | FAILED: $(grep -m1 -E 'fanstore|reader|first-byte' "$log" | cut -c1-160) | - | - | $base | - |"
        fi
        note "(a) $r $s $tag round $round: $(summary "$log")"
      done
    done
  done
done

# ---- (b) capacity: half the dataset local, and a dataset 3x all local storage; two epochs
stats() { # stats JSON [EARLIER_JSON]: "local peer sharedfs first_byte_ms|extra" (minus EARLIER for the bytes)
  python3 - "$@" <<'PY' 2>/dev/null || echo "n/a n/a n/a n/a|no stats"
import json, sys
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None
def find(o, k):
    if isinstance(o, dict):
        if k in o and not isinstance(o[k], (dict, list)):
            return o[k]
        for v in o.values():
            r = find(v, k)
            if r is not None:
                return r
    elif isinstance(o, list):
        for v in o:
            r = find(v, k)
            if r is not None:
                return r
    return None
def get(doc, k, summed=True):
    if doc is None:
        return None
    v = find(doc.get("totals", {}), k)
    if v is None and doc.get("ranks"):
        vals = [find(r, k) for r in doc["ranks"]]
        vals = [x for x in vals if x is not None]
        if vals:
            v = sum(vals) if summed else vals[0]
    return v
now, before = load(sys.argv[1]), (load(sys.argv[2]) if len(sys.argv) > 2 else None)
out = []
for k in ("bytes_from_local", "bytes_from_peer", "bytes_from_sharedfs"):
    v = get(now, k)
    if v is not None and before is not None:
        w = get(before, k)
        v = v - w if w is not None else None
    out.append("n/a" if v is None else "%.1fMiB" % (v / 1048576.0))
fb = get(now, "first_byte_ms", summed=False) if before is None else None
out.append("n/a" if fb is None else str(fb))
ex = []
if now is not None:
    t = now.get("totals", {})
    copy = [r.get("load_ms", {}).get("copy") for r in now.get("ranks", [])]
    ex.append("copy before ready ms per rank %s" % copy)
    for path in (("bytes", "local_read_by_runtime"), ("bytes", "fetched"), ("bytes", "served"),
                 ("prefetch", "bytes_pulled")):
        v = t.get(path[0], {}).get(path[1])
        if v is not None:
            ex.append("%s.%s %.1fMiB" % (path[0], path[1], v / 1048576.0))
print(" ".join(out) + "|" + ", ".join(ex) + (" (job totals, both epochs)" if before is not None else ""))
PY
}
bn=$(name_of "$bsize"); bmib=$(mib_of "$bsize"); bm="${mnt[$brate]}"
echo
echo "## (b) capacity: $bsize dataset at $brate, 2 ranks, rank 0 reads every file twice (two epochs)"
echo "| case | build | round | epoch | time (s) | launch -> end (s) | from local | from peer | from shared FS | first_byte_ms | epoch / source alone |"
echo "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
for round in $(seq "$rounds"); do
  base=$(nat_read "$brate" "$bn")
  echo "| source tree alone via bindfs $brate | - | $round | 1 | $base | - | - | - | - | - | 1.00x |"
  for cs in half:2 3x:6; do
    case=${cs%%:*}; cap_mib=$(( bmib / ${cs##*:} ))
    label="$case: --local-capacity ${cap_mib}M"
    for i in "${!builds[@]}"; do
      b=${builds[$i]}; tag=${tags[$i]}
      local_dir="$work/local"; rm -rf "$local_dir"; mkdir -p "$local_dir"
      if [ "${CAP_TMPFS:-1}" = 1 ]; then
        mount -t tmpfs -o size=$(( 2 * cap_mib + 2 * ${CACHE_MB:-64} + ${SLACK_MB:-32} ))m fanstore-sa-local "$local_dir"
        mounts+=("$local_dir"); label="$case: --local-capacity ${cap_mib}M, tmpfs $(( 2 * cap_mib + 2 * ${CACHE_MB:-64} + ${SLACK_MB:-32} ))M"
      fi
      declare -A t=() te=()
      failed=""
      for epochs in 1 2; do
        rm -f "$work"/ep*.out "$work/end.out" "$work/st$epochs.json"
        cmd="'$reader' read 1 '$work/fs-$bn.list' $threads > '$work/ep1.out'"
        [ "$epochs" = 2 ] && cmd="$cmd && '$reader' read 1 '$work/fs-$bn.list' $threads > '$work/ep2.out'"
        t0=$("$fb" now)
        if "$b/fanstore" run --ranks 2 --only-rank 0 --data "$bm/$bn.fs" --local-dir "$local_dir" \
             --local-capacity "${cap_mib}M" --cache-mb "${CACHE_MB:-64}" --stats "$work/st$epochs.json" -- \
             sh -c "$cmd && '$fb' now > '$work/end.out'" >"$work/run.err" 2>&1; then
          t[$epochs]=$(field seconds "$(cat "$work/ep$epochs.out")")
          te[$epochs]=$(secs "$t0" "$(cat "$work/end.out")")
          [ "$epochs" = 2 ] && t[1b]=$(field seconds "$(cat "$work/ep1.out")")
        else
          failed="$(grep -m1 -E 'not enough space|fanstore|reader' "$work/run.err" \
            | sed -E 's/^fanstore: rank [0-9]+ \([^)]*\): //; s| in /[^ ]* for| in --local-dir for|' | cut -c1-200)"
        fi
        note "(b) $case $tag round $round, job of $epochs epoch(s): $(summary "$work/run.err")"
        [ -n "$failed" ] && break
      done
      if mountpoint -q "$local_dir"; then umount "$local_dir"; fi
      if [ -n "$failed" ]; then
        echo "| $label | $tag | $round | - | REFUSED/FAILED: $failed | - | - | - | - | - | - |"
        continue
      fi
      IFS='|' read -r s1 x1 <<<"$(stats "$work/st1.json")"
      IFS='|' read -r s2 x2 <<<"$(stats "$work/st2.json" "$work/st1.json")"
      read -r l1 p1 f1 fb1 <<<"$s1"; read -r l2 p2 f2 fb2 <<<"$s2"
      echo "| $label | $tag | $round | 1 | ${t[1]} (${t[1b]} in the 2-epoch job) | ${te[1]} | $l1 | $p1 | $f1 | $fb1 | $(ratio "${t[1]}" "$base") |"
      echo "| $label | $tag | $round | 2 | ${t[2]} | ${te[2]} (2-epoch job) | $l2 | $p2 | $f2 | - | **$(ratio "${t[2]}" "$base")** |"
      note "(b) $case $tag round $round stats, 1-epoch job: $x1"
      note "(b) $case $tag round $round stats, 2-epoch job: $x2"
    done
  done
done

echo
echo "## details (ready and end-of-job lines per run; what the stats hold besides the fields above)"
for d in "${details[@]}"; do echo "- $d"; done
echo "journal: ${journal#"$repo"/}"
