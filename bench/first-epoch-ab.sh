#!/usr/bin/env bash
# Launch -> end of the first pass, the user's view of a first epoch: the wall time of `fanstore run` whose command
# reads every file of one size once (bench/native/reader.c, 2 threads), this checkout against OLD (built), in
# alternating rounds, on multinode-read.sh's datasets (run that once first: it makes WORK/rnd.fs and the lists).
# Before issue 33 the partitions were copied before the command started, so multinode-read.sh's "first pass" rows
# exclude that copy; this one includes whatever each version does before and during the pass.
# SPLIT=1: the CPUs split as a cluster has them (bench/other-nodes-core.sh: the other ranks on the last CPU, rank 0
# and the reader on the rest), 2 ranks only.
#   OLD=/work/wt-old bench/first-epoch-ab.sh [WORK] [ROUNDS] [SIZES...]     e.g. ... /tmp/mr 3 128K 2M
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-multinode}"; rounds="${2:-3}"; shift 2 2>/dev/null || shift $#
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(128K 2M)
: "${OLD:?OLD=<checkout of the code before, built>}"
now() { date +%s.%N; }
one() { # one FANSTORE RANKS SIZE -> seconds from launch to the command's end
  local t0; t0=$(now)
  local -a wrap=(); [ "${SPLIT:-0}" = 1 ] && wrap=("$repo/bench/other-nodes-core.sh")
  "$1/fanstore" run --data "$work/rnd.fs" --local-dir "$work" --ranks "$2" --only-rank 0 -- \
    "${wrap[@]}" "$work/reader" read 1 "$work/fs-rnd-$3.list" 2 >/dev/null 2>&1
  echo "$(now) - $t0" | bc
}
echo "# $(date -u '+%F %H:%M') UTC, $(git -C "$repo" rev-parse --short HEAD) vs $(git -C "$OLD" rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| size | ranks | round | new (s) | old (s) | new / old |"
echo "|---|---:|---:|---:|---:|---:|"
for s in "${sizes[@]}"; do
  ranks=(1 2); [ "${SPLIT:-0}" = 1 ] && ranks=(2)
  for n in "${ranks[@]}"; do
    for r in $(seq "$rounds"); do
      if [ $((r % 2)) = 1 ]; then a=$(one "$repo" "$n" "$s"); b=$(one "$OLD" "$n" "$s")
      else b=$(one "$OLD" "$n" "$s"); a=$(one "$repo" "$n" "$s"); fi
      printf '| %s | %d | %d | %.2f | %.2f | %.2f |\n' "$s" "$n" "$r" "$a" "$b" "$(echo "$a / $b" | bc -l)"
    done
  done
done
