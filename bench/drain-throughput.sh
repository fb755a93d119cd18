#!/usr/bin/env bash
# The output drain (DirectoryDrain: copy, fsync, CRC32C re-read, rename, dir fsync) vs cp + sync of the same
# files to the same directory, in the same run. Usage: bench/drain-throughput.sh [FILES] [MIB] [OUT_BASE]
# OUT_BASE defaults to a fresh directory under $TMPDIR (/tmp); on a cluster, point it at the shared FS.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-8}
MIB=${2:-128}
BASE=${3:-${TMPDIR:-/tmp}}
mvn -B -o -q -pl bench -am package -DskipTests
CP="bench/target/classes:runtime/target/classes:prep/format/target/classes:$(ls bench/target/lib/*.jar | tr '\n' ':')"
WORK=$(mktemp -d "$BASE/drain-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/staging" "$WORK/out/drain" "$WORK/out/cp"
for i in $(seq 1 "$N"); do
  head -c $((MIB << 20)) /dev/urandom > "$WORK/staging/ckpt-$i.pt"
done
sync
echo "machine: $(nproc) cores, $(df -h --output=source,fstype "$WORK" | tail -1), $N x $MIB MiB"
for round in 1 2; do
  # shellcheck disable=SC2046
  java $(scripts/jvm-flags runtime) -Xmx256m -cp "$CP" org.fanstore.bench.DrainBench "$WORK/staging" \
    "$WORK/out/drain"
  start=$(date +%s.%N)
  cp "$WORK"/staging/* "$WORK/out/cp/"
  mid=$(date +%s.%N)
  sync -f "$WORK/out/cp"
  end=$(date +%s.%N)
  awk -v s="$start" -v m="$mid" -v e="$end" -v b=$((N * MIB << 20)) 'BEGIN {
    printf "cp seconds=%.3f MBps=%.0f; cp+sync seconds=%.3f MBps=%.0f\n", m - s, b / 1e6 / (m - s), e - s,
      b / 1e6 / (e - s) }'
  rm -rf "$WORK/out/drain"/* "$WORK/out/cp"/*
done
