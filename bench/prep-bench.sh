#!/usr/bin/env bash
# Benchmarks `fanstore prep` against `tar cf` of the same trees, plus LZ4 vs LZ4-HC.
# Usage: bench/prep-bench.sh WORK_DIR [SIZE_MIB_PER_SET]
#   WORK_DIR is created, filled with generated data, and removed at the end.
# Page cache cannot be dropped reliably here, so every tree is read once first and tar and prep then run
# alternately (REPS times each) on a warm cache; the best run of each is reported.
# prep fsyncs its output (the format requires it) and tar does not: "tar+sync" adds a sync after tar.
set -euo pipefail

work="${1:?usage: prep-bench.sh WORK_DIR [SIZE_MIB_PER_SET]}"
set_mib="${2:-256}"
reps="${REPS:-2}"
small_files="${SMALL_FILES:-100000}"
repo="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
fanstore="$repo/fanstore"
command -v python3 >/dev/null || { echo "prep-bench: needs python3 to generate data" >&2; exit 2; }
[ -x "$fanstore" ] || { echo "prep-bench: $fanstore missing" >&2; exit 2; }
mkdir -p "$work"
work="$(cd "$work" && pwd)"
trap 'rm -rf "$work"' EXIT

gen() { # gen DIR KIND COUNT MIN_BYTES MAX_BYTES  (KIND: random|csv), 1000 files per sub-directory
  python3 - "$@" <<'PY'
import os, random, sys
d, kind, count, lo, hi = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rnd = random.Random(1)
row = lambda i: f"{i},{rnd.randint(0, 99999)},label_{rnd.randint(0, 9)},{rnd.random():.6f},{'cat' if rnd.random() < .5 else 'dog'}\n"
for i in range(count):
    sub = os.path.join(d, f"{i // 1000:05d}")
    if i % 1000 == 0:
        os.makedirs(sub, exist_ok=True)
    n = rnd.randint(lo, hi)
    if kind == "random":
        data = os.urandom(n)
    else:
        parts, size = [], 0
        while size < n:
            r = row(i); parts.append(r); size += len(r)
        data = "".join(parts)[:n].encode()
    with open(os.path.join(sub, f"{i:07d}.dat"), "wb") as f:
        f.write(data)
PY
}

now() { date +%s.%N; }
best() { sort -g | head -1; }
bytes_of() { du -sb --apparent-size "$1" | cut -f1; }

declare -A tar_best prep_best tarsync_best
measure() { # measure NAME DIR FILES
  local name=$1 dir=$2 files=$3 t0 t1 tt=() ts=() tp=()
  find "$dir" -type f -exec cat {} + >/dev/null   # warm the page cache
  for ((r = 0; r < reps; r++)); do
    rm -f "$work/out.tar"; t0=$(now); tar cf "$work/out.tar" -C "$dir" .; t1=$(now)
    tt+=("$(echo "$t1 - $t0" | bc -l)"); sync; t1b=$(now); ts+=("$(echo "$t1b - $t0" | bc -l)")
    rm -f "$work/out.tar"
    rm -rf "$work/out.fs"; t0=$(now)
    "$fanstore" prep --input "$dir" --output "$work/out.fs" --partitions 8 >/dev/null; t1=$(now)
    tp+=("$(echo "$t1 - $t0" | bc -l)"); rm -rf "$work/out.fs"
  done
  tar_best[$name]=$(printf '%s\n' "${tt[@]}" | best)
  tarsync_best[$name]=$(printf '%s\n' "${ts[@]}" | best)
  prep_best[$name]=$(printf '%s\n' "${tp[@]}" | best)
  local b; b=$(bytes_of "$dir")
  awk -v n="$name" -v f="$files" -v b="$b" -v t="${tar_best[$name]}" -v s="${tarsync_best[$name]}" \
      -v p="${prep_best[$name]}" 'BEGIN {
    printf "| %s | %d | %.0f | %.2f s, %.0f files/s, %.0f MB/s | %.2f s | %.2f s, %.0f files/s, %.0f MB/s | %.2fx | %.2fx |\n",
      n, f, b / 1e6, t, f / t, b / 1e6 / t, s, p, f / p, b / 1e6 / p, t / p, s / p }'
}

compress_row() { # compress_row NAME DIR LEVEL
  local name=$1 dir=$2 level=$3 t0 t1
  rm -rf "$work/out.fs"; t0=$(now)
  "$fanstore" prep --input "$dir" --output "$work/out.fs" --partitions 8 --compress "$level" >/dev/null; t1=$(now)
  local raw stored
  raw=$(awk '$1 == "raw_bytes" {print $2}' "$work/out.fs/manifest.txt")
  stored=$(awk '$1 == "stored_bytes" {print $2}' "$work/out.fs/manifest.txt")
  rm -rf "$work/out.fs"
  awk -v n="$name" -v l="$level" -v r="$raw" -v s="$stored" -v t="$(echo "$t1 - $t0" | bc -l)" \
    'BEGIN { printf "| %s | %s | %.0f | %.0f | %.3f | %.2f s | %.0f MB/s |\n", n, l, r / 1e6, s / 1e6, r / s, t, r / 1e6 / t }'
}

echo "## prep"
echo
echo "Command: \`bench/prep-bench.sh $work $set_mib\` (REPS=$reps), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "Machine: nproc=$(nproc); \`free -g\`: $(free -g | awk '/Mem:/ {print "total " $2 " GiB, available " $7 " GiB"}'); $(java -version 2>&1 | head -1)"
echo
echo "Warm page cache (each tree is read once before timing; caches cannot be dropped here); tar and prep alternate,"
echo "best of $reps each. Times are wall clock including prep's JVM start. prep: 8 partitions, fsync of every partition."
echo

small="$work/small"; gen "$small" random "$small_files" 2048 8192
declare -a sets=("128KiB:131072" "512KiB:524288" "2MiB:2097152" "8MiB:8388608")
for s in "${sets[@]}"; do
  label=${s%%:*}; size=${s##*:}; count=$(( set_mib * 1048576 / size ))
  gen "$work/size-$label" random "$count" "$size" "$size"
done
echo "| tree | files | MB | tar cf | tar+sync | fanstore prep | prep vs tar | prep vs tar+sync |"
echo "|---|---|---|---|---|---|---|---|"
measure "$small_files x 2-8 KiB" "$small" "$small_files"
for s in "${sets[@]}"; do
  label=${s%%:*}; size=${s##*:}
  measure "$label files (${set_mib} MiB)" "$work/size-$label" $(( set_mib * 1048576 / size ))
done
rm -rf "$small" "$work/size-128KiB" "$work/size-512KiB" "$work/size-8MiB"

echo
echo "LZ4 vs LZ4-HC (default level 9), per-file codec; ratio = raw / stored:"
echo
csv="$work/csv"; gen "$csv" csv $(( set_mib )) 1048576 1048576
echo "| data | codec | raw MB | stored MB | ratio | prep time | raw MB/s |"
echo "|---|---|---|---|---|---|---|"
for level in none lz4 lz4hc; do compress_row "CSV-like text, 1 MiB files" "$csv" "$level"; done
for level in none lz4 lz4hc; do compress_row "random (incompressible), 2 MiB files" "$work/size-2MiB" "$level"; done
