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
last=$(( $(nproc) - 1 ))
[ "$last" -ge 1 ] || { echo "split-cpus-alternating.sh: needs 2 CPUs or more" >&2; exit 2; }
bytes() { case $1 in 128K) echo 131072;; 2M) echo 2097152;; 8M) echo 8388608;; *) echo "size $1?" >&2; exit 2;; esac; }
list="$work/fs-rnd-$size.list"
fsrun() { # fsrun DATASET PASSES [WRAPPER]: rank 0 reads, the reader's line
  "$repo/fanstore" run --data "$work/$1.fs" --local-dir "$work" --cache-mb 1024 --ranks 4 --only-rank 0 -- \
    "${@:3}" "$work/reader" read "$2" "$list" 2 2>/dev/null
}
bench_cp="$repo/bench/target/classes:$repo/runtime/target/classes:$repo/prep/format/target/classes"
bench_cp="$bench_cp:$repo/prep/target/classes:/usr/share/java/mpj.jar:$(ls "$repo"/bench/target/lib/*.jar | tr '\n' ':')"
raw() { # raw split|all: raw MPJ MB/s, 4 rank JVMs, as multinode-read.sh's rawmpj
  local d out r; d=$(mktemp -d); local -a java pin0=() pinr=()
  [ "$1" = split ] && { pin0=(taskset -c "0-$(( last - 1 ))"); pinr=(taskset -c "$last"); }
  # shellcheck disable=SC2207
  java=(java $("$repo/scripts/jvm-flags" runtime) -Xmx512m -Dbench.ranks=4 -Dbench.sizes="$(bytes "$size")"
        -Dbench.mib=64 -cp "$bench_cp" org.fanstore.bench.RemoteFetchBench)
  for r in 1 2 3; do
    MPJ_HOME=/usr/share/mpj timeout 120 "${pinr[@]}" "${java[@]}" "$r" "$d" "raw-$$" 524288 520192 >/dev/null 2>&1 &
  done
  out=$(MPJ_HOME=/usr/share/mpj timeout 120 "${pin0[@]}" "${java[@]}" 0 "$d" "raw-$$" 524288 520192 2>/dev/null || true)
  wait || true; rm -rf "$d"
  awk '$2 == "KiB" {print $3}' <<<"$out" | tail -n1
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b; else print "-" }'; }
if [ "$mode" = cold ]; then
  data=$4 rounds=$5
  for ((i = 1; i <= rounds; i++)); do
    sp=$(fsrun "$data" 1 "$repo/bench/other-nodes-core.sh" | awk '{print $8}'); sr=$(raw split)
    up=$(fsrun "$data" 1 | awk '{print $8}'); ur=$(raw all)
    echo "$size cold round $i: split pass $sp raw $sr ($(ratio "$sp" "$sr")x) | unsplit pass $up raw $ur ($(ratio "$up" "$ur")x)"
  done
else
  rounds=$4
  for ((i = 1; i <= rounds; i++)); do
    sn=$(taskset -c "0-$(( last - 1 ))" "$work/reader" read 3 "$work/native-rnd-$size.list" 2 | awk '{print $6}')
    sp=$(fsrun rnd 3 "$repo/bench/other-nodes-core.sh" | awk '{print $6}')
    un=$("$work/reader" read 3 "$work/native-rnd-$size.list" 2 | awk '{print $6}')
    up=$(fsrun rnd 3 | awk '{print $6}')
    echo "$size warm round $i: split native $sn fanstore $sp ($(ratio "$sp" "$sn")x) | unsplit native $un fanstore $up ($(ratio "$up" "$un")x)"
  done
fi
