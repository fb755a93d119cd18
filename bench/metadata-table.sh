#!/usr/bin/env bash
# Metadata table measurement (bench/RESULTS.md, "metadata table"): Java write + lookups (MetadataTableBench), then C open,
# lookups and native stat() on real files (interpose-native/bench/bench_meta_table.c) on the same table.
# Usage: bench/metadata-table.sh [table path, default /dev/shm/fanstore-bench-meta.tbl]
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
table="${1:-/dev/shm/fanstore-bench-meta.tbl}"
cd "$repo"
mvn -B -o -q -pl bench -am compile
agrona="$(ls "${M2_REPO:-$HOME/.m2/repository}"/org/agrona/agrona/2.6.0/agrona-2.6.0.jar)"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), nproc $(nproc), $(free -g | awk '/Mem:/ {print $2 " GiB RAM"}'), $(uname -r)"
java $(scripts/jvm-flags runtime) -Xmx1g \
    -cp "bench/target/classes:runtime/target/classes:prep/format/target/classes:$agrona" org.fanstore.bench.MetadataTableBench "$table"
make -s -C interpose-native build/bench_meta_table >/dev/null
scratch="$(mktemp -d /tmp/fanstore-stat-bench.XXXXXX)"
trap 'rm -rf "$scratch" "$table"' EXIT
interpose-native/build/bench_meta_table "$table" "$scratch" 130000
