#!/usr/bin/env bash
# The demo: install (idempotent), build, generate a small dataset, prep it, read it back, print files/s.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
scripts/setup-debian.sh build
work="${DEMO_DIR:-$(mktemp -d /tmp/fanstore-demo.XXXXXX)}"
python3 - "$work/src" <<'PY'
import os, random, sys
root = sys.argv[1]; rnd = random.Random(42)
for c in range(8):
    d = os.path.join(root, "train", f"class{c:02d}"); os.makedirs(d, exist_ok=True)
    for i in range(250):
        with open(os.path.join(d, f"img{i:04d}.bin"), "wb") as f:
            f.write(rnd.randbytes(rnd.randint(1024, 64 * 1024)))
os.makedirs(os.path.join(root, "val"), exist_ok=True)
for i in range(100):
    with open(os.path.join(root, "val", f"v{i:03d}.txt"), "w") as f:
        f.write(("label %d\n" % i) * 200)
PY
./fanstore prep --input "$work/src" --output "$work/demo.fs" --partitions 4 --compress lz4 --broadcast val
./fanstore verify "$work/demo.fs"
# The main job: 2 ranks on this machine, an unmodified Python reader on each, reading /fanstore/src.
./fanstore run --ranks 2 --data "$work/demo.fs" --local-dir "$work" -- /usr/bin/python3 -c '
import os, time
root = "/fanstore/src"
t0 = time.perf_counter(); files = 0; nbytes = 0
for d, _, names in os.walk(root):
    for n in names:
        with open(os.path.join(d, n), "rb") as f:
            nbytes += len(f.read()); files += 1
dt = time.perf_counter() - t0
rank = os.environ["FANSTORE_RANK"]
print(f"rank {rank}: read {files} files, {nbytes/1e6:.1f} MB in {dt:.2f} s: {files/dt:.0f} files/s")
'
echo "demo: dataset in $work (remove it with: rm -rf $work)"
