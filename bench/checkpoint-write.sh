#!/usr/bin/env bash
# Checkpoint writes (issue 9): N x MIB MiB torch.save through the mount (`fanstore run` defaults, staging on the
# local dir) vs torch.save straight to the same local file system, same run, alternating; then the same through
# the mount with --output-dir. Every variant starts after `sync` with no dirty pages of the others (writeback of an
# earlier variant's gigabyte would throttle the next one). (the drain runs while the job writes; the job's wall includes the final drain).
# Usage: bench/checkpoint-write.sh [WORK_DIR] [N] [MIB]       e.g. bench/checkpoint-write.sh /tmp/ckw 8 128
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-ckpt}"; n="${2:-8}"; mib="${3:-128}"
rm -rf "$work"; mkdir -p "$work/src/ds" "$work/native" "$work/out"
echo input > "$work/src/ds/input.txt"
"$repo/fanstore" prep --input "$work/src" --output "$work/ds.fs" --name ds >/dev/null
cat > "$work/writer.py" <<'PY'
import os, sys, time, torch
d, n, mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(d, exist_ok=True)
tensors = [torch.randn(mib << 18) for _ in range(n)]   # mib MiB of float32 each, made before the clock starts
t0 = time.perf_counter()
for i, t in enumerate(tensors):
    torch.save(t, os.path.join(d, "ckpt-%d.pt" % i))   # opens, writes, closes (the close commits under fanstore)
s = time.perf_counter() - t0
print("files %d seconds %.3f MB_per_s %.1f" % (n, s, n * mib * 1.048576 / s))
PY
py=/usr/bin/python3
echo "# $(date -u '+%F %H:%M') UTC, commit $(git -C "$repo" rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $n x $mib MiB, local dir on $(df --output=fstype "$work" | tail -1)"
for round in 1 2 3; do
  rm -rf "$work/native"/*; sync
  nat=$("$py" "$work/writer.py" "$work/native" "$n" "$mib")
  rm -rf "$work/native"/*; sync
  fs=$("$repo/fanstore" run --ranks 1 --data "$work/ds.fs" --local-dir "$work" -- \
       "$py" "$work/writer.py" /fanstore/ds/ckpt "$n" "$mib" 2>"$work/run.err") || { cat "$work/run.err"; exit 1; }
  rm -rf "$work/out"/*; sync
  t0=$(date +%s.%N)
  fo=$("$repo/fanstore" run --ranks 1 --data "$work/ds.fs" --local-dir "$work" --output-dir "$work/out" -- \
       "$py" "$work/writer.py" /fanstore/ds/ckpt "$n" "$mib" 2>"$work/run.err") || { cat "$work/run.err"; exit 1; }
  t1=$(date +%s.%N)
  saved=$(find "$work/out" -type f | wc -l)
  a=$(awk '/^files/{print $6}' <<<"$nat"); b=$(awk '/^files/{print $6}' <<<"$fs"); c=$(awk '/^files/{print $6}' <<<"$fo")
  echo "round $round: native $a MB/s | mount $b MB/s ($(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f", b/a}')x) | mount + --output-dir $c MB/s ($(awk -v a="$a" -v b="$c" 'BEGIN{printf "%.2f", b/a}')x), job wall incl. final drain $(awk -v s="$t0" -v e="$t1" 'BEGIN{printf "%.1f", e-s}') s, $saved files saved"
done
rm -rf "$work"
