#!/bin/bash
# Run after bench/read-bench.sh WORK (which builds the reader, the file lists, rb.fs and mounts nothing): mounts
# bindfs itself. Usage: bench/read-alternating.sh [WORK_DIR]
# Alternating rounds per size: native, bindfs, fanstore 1 rank (--unpack eager); passes: 5 (reports the last).
set -e
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"; work="${1:-/tmp/fanstore-read-bench}"
mountpoint -q "$work/bindfs" || bindfs -o ro "$work/src/rb" "$work/bindfs"
trap 'fusermount -u "$work/bindfs" 2>/dev/null || true' EXIT
for size in 128K 512K 2M 8M; do
  for round in 1 2 3; do
    n=$($work/reader read 5 $work/native-$size.list | awk '{print $6}')
    b=$($work/reader read 5 $work/fuse-$size.list | awk '{print $6}')
    f=$($repo/fanstore run --ranks 1 --unpack eager --data $work/rb.fs --local-dir $work -- $work/reader read 5 $work/fs-$size.list 2>/dev/null | awk '{print $6}')
    echo "$size round $round native $n bindfs $b fanstore $f vs-native $(echo "scale=2; $f / $n" | bc) vs-bindfs $(echo "scale=1; $f / $b" | bc)"
  done
done
