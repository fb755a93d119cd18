#!/usr/bin/env bash
# Alternating rounds of multinode-read.sh's 4-rank rows with and without the CPUs split as a cluster has them
# (bench/other-nodes-core.sh: the other three ranks on the last CPU, rank 0's runtime and the reader on the rest), each
# against its baseline on the same CPUs, taken right after it. Run multinode-read.sh once first: it makes the
# datasets, lists and reader in WORK_DIR.
#   bench/split-cpus-alternating.sh cold WORK_DIR SIZE DATASET ROUNDS   first pass vs raw MPJ (DATASET: rnd, rnd8M)
#   bench/split-cpus-alternating.sh warm WORK_DIR SIZE ROUNDS           3 passes while pulls run vs native (last pass)
# Prints one line per round: MB/s (cold) or files/s (warm), split then unsplit, and each ratio.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
mode=$1 work=$2 size=$3
. "$repo/bench/raw-mpj.sh"
[ "$last_cpu" -ge 1 ] || { echo "split-cpus-alternating.sh: needs 2 CPUs or more" >&2; exit 2; }
bytes() { case $1 in 128K) echo 131072;; 2M) echo 2097152;; 8M) echo 8388608;; *) echo "size $1?" >&2; exit 2;; esac; }
list="$work/fs-rnd-$size.list"
fsrun() { # fsrun DATASET PASSES [WRAPPER]: rank 0 reads, the reader's line
  "$repo/fanstore" run --data "$work/$1.fs" --local-dir "$work" --cache-mb 1024 --ranks 4 --only-rank 0 -- \
    "${@:3}" "$work/reader" read "$2" "$list" 2 2>/dev/null
}
raw() { rawmpj "$(bytes "$size")" 4 "$@" | awk '{print $1}'; }   # raw [split]: raw MPJ MB/s, 4 rank JVMs
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b; else print "-" }'; }
if [ "$mode" = cold ]; then
  data=$4 rounds=$5
  for ((i = 1; i <= rounds; i++)); do
    sp=$(fsrun "$data" 1 "$repo/bench/other-nodes-core.sh" | awk '{print $8}'); sr=$(raw split)
    up=$(fsrun "$data" 1 | awk '{print $8}'); ur=$(raw)
    echo "$size cold round $i: split pass $sp raw $sr ($(ratio "$sp" "$sr")x) | unsplit pass $up raw $ur ($(ratio "$up" "$ur")x)"
  done
else
  rounds=$4
  for ((i = 1; i <= rounds; i++)); do
    sn=$(taskset -c "0-$(( last_cpu - 1 ))" "$work/reader" read 3 "$work/native-rnd-$size.list" 2 | awk '{print $6}')
    sp=$(fsrun rnd 3 "$repo/bench/other-nodes-core.sh" | awk '{print $6}')
    un=$("$work/reader" read 3 "$work/native-rnd-$size.list" 2 | awk '{print $6}')
    up=$(fsrun rnd 3 | awk '{print $6}')
    echo "$size warm round $i: split native $sn fanstore $sp ($(ratio "$sp" "$sn")x) | unsplit native $un fanstore $up ($(ratio "$up" "$un")x)"
  done
fi
