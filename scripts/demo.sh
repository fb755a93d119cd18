#!/usr/bin/env bash
# The demo: install (idempotent), build, generate a small dataset, prep it, read it back, print files/s.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
scripts/setup-debian.sh build
work="${DEMO_DIR:-$(mktemp -d /tmp/fanstore-demo.XXXXXX)}"
scripts/sample-tree.py "$work/src"
./fanstore prep --input "$work/src" --output "$work/demo.fs" --partitions 4 --compress lz4 --broadcast val
./fanstore verify "$work/demo.fs"
# The main job: 2 ranks on this machine, an unmodified Python reader on each, reading /fanstore/src.
./fanstore run --ranks 2 --data "$work/demo.fs" --local-dir "$work" -- scripts/read-tree.py /fanstore/src
echo "demo: dataset in $work (remove it with: rm -rf $work)"
