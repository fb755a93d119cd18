#!/usr/bin/env bash
# What the per-job statistics cost on the hottest path they touch: a warm direct open of a local unpacked file,
# where the shim adds to shim.counters. One job, one binary, alternating: "on" as shipped, "off" with
# shim.counters moved away (the shim then cannot attach and counts nothing). Reader: bench/native/reader.c,
# 1 thread, 5 passes (the last reported), 1,024 files of 64 KiB.
#   bench/stats-overhead.sh [WORK_DIR] [ROUNDS]
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-stats-overhead}"; rounds="${2:-8}"
mkdir -p "$work"
gcc -O2 -Wall -Wextra -Werror -pthread -o "$work/reader" "$repo/bench/native/reader.c"
if [ ! -d "$work/ds.fs" ]; then
  python3 - "$work/src/ds" <<'PY'
import os, sys
for i in range(1024):
    d = os.path.join(sys.argv[1], "d%d" % (i % 8)); os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.bin" % i), "wb") as f:
        f.write(os.urandom(64 << 10))
PY
  "$repo/fanstore" prep --input "$work/src/ds" --output "$work/ds.fs" --partitions 8 >/dev/null
fi
find "$work/src/ds" -type f | sort | sed "s|^$work/src/|/fanstore/|" > "$work/list"
"$repo/fanstore" run --ranks 1 --data "$work/ds.fs" --local-dir "$work" --unpack eager -- sh -c '
  c="$FANSTORE_SHM_DIR/shim.counters"
  for i in $(seq '"$rounds"'); do
    echo "on  $('"$work"'/reader read 5 '"$work"'/list 1)"
    mv "$c" "$c.off"; echo "off $('"$work"'/reader read 5 '"$work"'/list 1)"; mv "$c.off" "$c"
  done' | tee "$work/out.txt"
python3 - "$work/out.txt" <<'PY'
import statistics, sys
runs = {"on": [], "off": []}
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] in runs:
        runs[f[0]].append(float(f[f.index("files_per_s") + 1]))
on, off = statistics.median(runs["on"]), statistics.median(runs["off"])
print("median files/s: counters on %.0f, off %.0f, ratio on/off %.3f" % (on, off, on / off))
PY
