#!/usr/bin/env bash
# cache_evict_race.sh: reproduces the ENOENT the load test found (bench/RESULTS.md, "training load test").
# One rank, 16 LZ4 files of 2.1 MB (all served through the tmpfs cache), 8 concurrent `cat` loops of 3 passes
# each, for every --cache-mb given (default: 1 3 6 10 20). Every open must succeed (at 1 MB every file is larger
# than the whole cache and is served by a copy of its own); prints how many of the 384 opens failed, and how many
# of those with "No such file or directory" (the bug, fixed by the cache's pins). Exits 1 if any open failed.
#
# Usage: tests/load/cache_evict_race.sh [CACHE_MB...]
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
work="$(mktemp -d /tmp/fanstore-evict.XXXXXX)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/ds"
for i in $(seq 1 16); do
    { head -c 1000000 /dev/urandom; printf 'label,0.5,class\n%.0s' $(seq 68750); } > "$work/src/ds/f$i.bin"
done
"$repo/fanstore" prep --input "$work/src/ds" --output "$work/ds.fs" --partitions 2 --compress lz4 >/dev/null 2>&1
failed=0
for m in ${*:-1 3 6 10 20}; do
    out=$(FANSTORE_JOB_ID="evict$$m$m" "$repo/fanstore" run --ranks 1 --cache-mb "$m" --data "$work/ds.fs" \
            --local-dir "$work" -- sh -c 'for r in 1 2 3 4 5 6 7 8; do
                (for k in 1 2 3; do for i in $(seq 1 16); do cat /fanstore/ds/f$i.bin >/dev/null; done; done) &
            done; wait' 2>&1 || true)
    n=$(printf '%s\n' "$out" | grep -c "^cat: " || true)
    e=$(printf '%s\n' "$out" | grep -c "No such file" || true)
    echo "--cache-mb $m: $n of 384 opens failed ($e with ENOENT)"
    [ "$n" = 0 ] || failed=1
done
exit "$failed"
