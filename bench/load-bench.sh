#!/usr/bin/env bash
# Load benchmark (issue: the runtime): time until `fanstore run` is ready and metadata bytes per file, for a
# namespace of N small files (default 1.3 million, as ImageNet-1k) on R ranks of this machine.
#   bench/load-bench.sh [WORK_DIR] [FILES] [RANKS]
# The native baseline in the same run: `find -type f | wc -l` and a `stat` of every file over the source tree
# (what a job without fanstore pays in metadata calls before the first epoch), plus `cp -r` of the tree.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-load-bench}"
files="${2:-1300000}"
ranks="${3:-4}"
mkdir -p "$work"
src="$work/src/in1k"
if [ ! -f "$work/src/.done-$files" ]; then
  rm -rf "$work/src"; mkdir -p "$src"
  python3 - "$src" "$files" <<'PY'
import os, sys, random
root, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(1); per_dir = 1300
body = bytes(rnd.getrandbits(8) for _ in range(4096))
for i in range(n):
    d = os.path.join(root, "train", "n%08d" % (i // per_dir))
    if i % per_dir == 0:
        os.makedirs(d, exist_ok=True)
    fd = os.open(os.path.join(d, "n%08d_%d.JPEG" % (i // per_dir, i)), os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, body[: 64 + (i * 37) % 1024]); os.close(fd)
PY
  touch "$work/src/.done-$files"
fi
echo "# machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -r), $(date -u +%F); $files files, $ranks ranks"
t0=$(date +%s.%N); find "$src" -type f -printf '%s\n' | wc -l >/dev/null; t1=$(date +%s.%N)
echo "native find -printf %s (stat of every file, warm): $(echo "$t1 - $t0" | bc) s"
for compress in none lz4; do
  ds="$work/in1k-$compress.fs"
  if [ ! -f "$ds/manifest.txt" ]; then
    t0=$(date +%s.%N)
    "$repo/fanstore" prep --input "$src" --output "$ds" --partitions 32 --compress "$compress" >/dev/null
    echo "fanstore prep ($compress): $(echo "$(date +%s.%N) - $t0" | bc) s"
  fi
  # Ready time, then (FANSTORE_VERBOSE) each rank's load phases and how long background unpacking took.
  FANSTORE_VERBOSE=1 "$repo/fanstore" run --ranks "$ranks" --data "$ds" --local-dir "$work" -- sleep 150 2>&1 \
    | grep -E 'ready:|load_ms|unpacked' | sed "s/^/fanstore ($compress): /"
done
rm -rf "$work/cp"; t0=$(date +%s.%N); cp -r "$src" "$work/cp"; t1=$(date +%s.%N); rm -rf "$work/cp"
echo "native cp -r of the tree (what unpacking to local disk costs without fanstore): $(echo "$t1 - $t0" | bc) s"
