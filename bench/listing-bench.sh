#!/usr/bin/env bash
# Listing benchmark (issue 44): entries per second of `ls -lR`, Python's os.walk (+ lstat of every entry) and
# os.scandir (+ entry.stat()) over one directory of FILES files ("wide") against the same FILES in directories of
# 1,000 ("narrow"), natively on the source tree and through fanstore (1 rank, the shim), ROUNDS rounds alternating.
#   bench/listing-bench.sh [WORK_DIR] [FILES]          (default /tmp/fanstore-listing 100000; needs FILES inodes)
# A listing that is linear per entry gives wide ~ narrow; one that rescans the directory per entry falls with FILES.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-listing}"
files="${2:-100000}"
rounds="${ROUNDS:-3}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"

if [ ! -f "$work/src/.done-$files" ]; then
  rm -rf "$work/src"
  /usr/bin/python3 - "$work/src" "$files" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for shape in ("wide", "narrow"):
    for i in range(n):
        d = os.path.join(root, shape, "d" if shape == "wide" else "d%04d" % (i // 1000))
        if i == 0 or (shape == "narrow" and i % 1000 == 0):
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f%07d.jpg" % i), "wb") as f:
            f.write(b"x" * (i % 97))
PY
  touch "$work/src/.done-$files"
fi
for shape in wide narrow; do
  [ -f "$work/$shape.fs/manifest.txt" ] || "$repo/fanstore" prep --input "$work/src/$shape" --output \
    "$work/$shape.fs" --name "$shape" --partitions 4 > /dev/null
done

cat > "$work/probe.py" <<'PY'
import os, subprocess, sys, time
root = sys.argv[1]
def timed(label, fn):
    t0 = time.perf_counter(); n = fn(); dt = time.perf_counter() - t0
    print("%s %d entries %.3f s %.0f entries/s" % (label, n, dt, n / dt))
def walk():
    n = 0
    for d, dirs, names in os.walk(root):
        for x in dirs + names:
            os.lstat(os.path.join(d, x)); n += 1
    return n
def scan():
    n, stack = 0, [root]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                e.stat(follow_symlinks=False); n += 1
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
    return n
def ls():
    out = subprocess.run(["ls", "-lR", root], stdout=subprocess.PIPE, check=True).stdout
    return sum(1 for l in out.splitlines() if l[:1] in (b"-", b"d"))
timed("os.walk+lstat", walk); timed("os.scandir+stat", scan); timed("ls -lR", ls)
PY

echo "# $(date -u '+%F %H:%M UTC'), commit $(git -C "$repo" rev-parse --short HEAD), $(nproc) cores," \
  "load $(cut -d' ' -f1-3 /proc/loadavg); $files files: wide = one directory, narrow = directories of 1,000"
for r in $(seq "$rounds"); do
  for shape in wide narrow; do
    /usr/bin/python3 "$work/probe.py" "$work/src/$shape" | sed "s/^/round $r native $shape: /"
    "$repo/fanstore" run --ranks 1 --data "$work/$shape.fs" --local-dir "$work" -- \
      /usr/bin/python3 "$work/probe.py" "/fanstore/$shape" 2>/dev/null | sed "s/^/round $r fanstore $shape: /"
  done
done
