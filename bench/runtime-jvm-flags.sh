#!/usr/bin/env bash
# Runtime JVM flags compared under the reads that keep the runtime busy (every open a request: LZ4 first pass,
# remote first pass), alternating rounds so every variant sees the same machine. Run bench/multinode-read.sh WORK
# first (it makes the data, rnd.fs, txt.fs and the file lists). Variants are appended to the pom's runtime set
# through FANSTORE_RUNTIME_JAVA_OPTS (the last -XX wins; the collector must be switched off before another is on).
#   bench/runtime-jvm-flags.sh [WORK_DIR] [ROUNDS]
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-multinode}"; rounds="${2:-3}"
variants=("pom:$("$repo/scripts/jvm-flags" runtime | grep -oE -- '-XX:[^ ]*(GC|Level)[^ ]*' | tr '\n' ' ')"
          "C1+Serial:-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
          "tiered+Serial:-XX:+UseSerialGC -XX:TieredStopAtLevel=4"
          "tiered+Parallel:-XX:-UseSerialGC -XX:+UseParallelGC -XX:TieredStopAtLevel=4"
          "tiered+G1:-XX:-UseSerialGC -XX:+UseG1GC -XX:TieredStopAtLevel=4")
run() { # run OPTS SET SIZE RANKS -> files/s of one first pass
  FANSTORE_RUNTIME_JAVA_OPTS="$1" "$repo/fanstore" run --data "$work/$2.fs" --local-dir "$work" --cache-mb 2048 \
    --ranks "$4" --only-rank 0 -- "$work/reader" read 1 "$work/fs-$2-$3.list" 2 2>/dev/null | awk '{print $6}'
}
echo "# $(date -u '+%F %H:%M') UTC, commit $(git -C "$repo" rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); first-pass files/s, $rounds alternating rounds"
printf "| %-16s | %-60s | %s |\n" variant "LZ4 128K 1 rank / remote 128K 2 ranks / remote 2M 2 ranks" flags
for r in $(seq "$rounds"); do
  for v in "${variants[@]}"; do
    name=${v%%:*}; opts=${v#*:}; [ "$name" = pom ] && opts=""
    printf "| %-16s | %-60s | %s |\n" "$name" "$(run "$opts" txt 128K 1) / $(run "$opts" rnd 128K 2) / $(run "$opts" rnd 2M 2)" "${opts:-(pom set)}"
  done
done
