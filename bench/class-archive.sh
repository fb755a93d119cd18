#!/usr/bin/env bash
# class-archive.sh [ROUNDS]: what the runtime's class archive (launcher/.../startup/README.md) buys at job start,
# end to end through the shim, with the build's defaults. Rows, alternating within each round:
#   on   the default (the build's archive mapped by each runtime JVM)
#   off  FANSTORE_RUNTIME_JAVA_OPTS=-Xshare:auto: the launcher then adds no archive (a user's sharing option wins),
#        so the runtime maps only the JDK's own default archive, as before the change
# for a 2,000-file dataset in a directory and in a bucket (a local S3Proxy, no added latency: class loading does not
# depend on it), 1 and 2 ranks. Metric: launch -> first byte of one file (bench/first_byte.py), ms; medians.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
rounds=${1:-5}
work=$(mktemp -d /tmp/fanstore-cds-bench.XXXXXX)
trap '"$repo/tests/s3/s3proxy.sh" stop "$work/s3" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
echo "# class-archive.sh $(git -C "$repo" rev-parse --short HEAD) $(date -u '+%F %H:%M UTC') load $(cut -d' ' -f1-3 /proc/loadavg) rounds $rounds"
mkdir -p "$work/src/d"
for i in $(seq 1 2000); do head -c 4096 /dev/urandom > "$work/src/d/f$i"; done
"$repo/fanstore" prep --input "$work/src" --output "$work/ds.fs" >/dev/null
env_line=$("$repo/tests/s3/s3proxy.sh" start "$work/s3")
mkdir -p "$work/s3/data/cdsbench"
# shellcheck disable=SC2046
(export $env_line; "$repo/fanstore" prep --input "$work/src" --output s3://cdsbench/ds.fs >/dev/null)
one() {   # one ROW HOME RANKS -> first byte ms
  local row=$1 home=$2 ranks=$3 data opts=""
  [ "$home" = dir ] && data="$work/ds.fs" || data=s3://cdsbench/ds.fs
  [ "$row" = off ] && opts="-Xshare:auto"
  # shellcheck disable=SC2046
  (export $env_line FANSTORE_RUNTIME_JAVA_OPTS="$opts" LAUNCH_NS=$(date +%s%N)
   "$repo/fanstore" run --ranks "$ranks" --only-rank 0 --data "$data" -- python3 "$repo/bench/first_byte.py" \
     /fanstore/src/d/f7 2>/dev/null) | awk '$1=="first_byte_ms" {print $2}'
}
declare -A all
for r in $(seq 1 "$rounds"); do
  for home in dir s3; do for ranks in 1 2; do
    for row in on off; do
      [ $((r % 2)) = 0 ] && row=$([ "$row" = on ] && echo off || echo on)   # alternate who goes first
      v=$(one "$row" "$home" "$ranks"); all[$row-$home-$ranks]+="$v "
      echo "round $r $row $home ${ranks}r first_byte_ms $v"
    done
  done; done
done
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "# medians (ms): home ranks on off on/off; load now $(cut -d' ' -f1-3 /proc/loadavg)"
for home in dir s3; do for ranks in 1 2; do
  on=$(echo "${all[on-$home-$ranks]}" | med); off=$(echo "${all[off-$home-$ranks]}" | med)
  echo "$home ${ranks}r $on $off $(awk -v a="$on" -v b="$off" 'BEGIN {printf "%.2f", a/b}')"
done; done
