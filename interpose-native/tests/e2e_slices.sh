#!/usr/bin/env bash
# e2e_slices.sh: slice descriptors (docs/slices.md) without a runtime. A tree of files of awkward sizes, a metadata
# table built from it (TableFromTree), and a hand-made partition copy that holds every body between runs of junk
# bytes, published in a slices.map written here from the format in runtime/.../shm/README.md. Every plain open is
# then a slice, so any call that sees past its window reads junk and fails the byte comparison.
# tests/slice_checks.py does the checks (read, pread, readv, lseek, mmap, sendfile, copy_file_range, splice,
# fdopen, /proc/self/fd, dup/fork, exec/spawn inheritance, threads, coreutils), then the same checks run with the
# map withdrawn (ordinary descriptors) as a control; then through `fanstore run`, where the runtime publishes them.
# Usage: tests/e2e_slices.sh      Prints "N passed, N failed"; exits non-zero on failure.
set -uo pipefail
here="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
repo="$(cd "$here/.." && pwd)"
lib="$here/build/libfanstore.so"
make -s -C "$here" >/dev/null || { echo "FAIL build"; exit 1; }
if [ ! -f "$repo/runtime/target/classes/org/fanstore/runtime/metadata/TableFromTree.class" ]; then
    (cd "$repo" && mvn -B -o -q -pl runtime -am package -DskipTests) || { echo "FAIL maven build"; exit 1; }
fi
agrona="$(ls ~/.m2/repository/org/agrona/agrona/2.6.0/agrona-2.6.0.jar)"
work="$(mktemp -d /tmp/fanstore-slices.XXXXXX)"
trap 'rm -rf "$work"' EXIT
src="$work/src/ds"; shm="$work/shm"
mkdir -p "$src/a/b" "$shm" && chmod 700 "$shm"
: > "$src/empty"
for spec in one:1 page:4096 pagep:4097 k128:131075 m2:2097153 a/small:300 a/b/odd:65537; do
    head -c "${spec#*:}" /dev/urandom > "$src/${spec%%:*}"
done
java $("$repo/scripts/jvm-flags" runtime) -cp "$repo/runtime/target/classes:$repo/prep/format/target/classes:$agrona" \
    org.fanstore.runtime.metadata.TableFromTree "$src" ds "$shm/meta.tbl" >/dev/null || { echo "FAIL TableFromTree"; exit 1; }

# The partition copy and the map. Bodies sit between 4 KiB runs of 0xEE (never a run in random bytes).
/usr/bin/python3 - "$shm/meta.tbl" "$src" "$work/parts/p0.fsp" "$shm/slices.map" "$here/tests" <<'PY' || { echo "FAIL map"; exit 1; }
import os, struct, sys
table, src, part, out = sys.argv[1:5]
sys.path.insert(0, sys.argv[5])
import meta3_keys
t = open(table, "rb").read()
count = struct.unpack_from("<Q", t, 16)[0]
os.makedirs(os.path.dirname(part), exist_ok=True)
junk = b"\xee" * 4096
records = bytearray(16 * count)
with open(part, "wb") as p:
    p.write(junk)
    for i, key, mode, size, _ in meta3_keys.entries(t):
        if mode & 0o170000 != 0o100000:
            continue
        body = open(os.path.join(os.path.dirname(src), key.decode()), "rb").read()
        assert len(body) == size
        struct.pack_into("<IIQ", records, 16 * i, 1, 0, p.tell())
        p.write(body)
        p.write(junk)
path = os.path.abspath(part).encode()
slot = struct.pack("<I", len(path)) + path
slot += b"\0" * (256 - len(slot))
open(out, "wb").write(b"FANSSLIC" + struct.pack("<IIQQ", 1, 1, count, 0) + slot + records)
PY

shim() { env LD_PRELOAD="$lib" FANSTORE_SHM_DIR="$shm" FANSTORE_MOUNT=/fanstore "$@"; }
failed=0
echo "== with slices"
shim /usr/bin/python3 "$here/tests/slice_checks.py" /fanstore/ds "$src" --expect-slices || failed=1
echo "== control: no slices.map (ordinary descriptors)"
rm -f "$shm/slices.map"
shim /usr/bin/python3 "$here/tests/slice_checks.py" /fanstore/ds "$src" || failed=1

# The same checks through the real runtime, which publishes the slices itself: 1 rank (every file local: each plain
# open must be a slice), and 2 ranks (half the files are remote until pulled; each must read right either way).
"$repo/fanstore" prep --input "$src" --output "$work/ds.fs" --partitions 3 >/dev/null || { echo "FAIL prep"; exit 1; }
for ranks in 1 2; do
    expect=""; [ "$ranks" = 1 ] && expect=--expect-slices
    echo "== fanstore run --ranks $ranks $expect"
    mkdir -p "$work/local$ranks"
    "$repo/fanstore" run --ranks "$ranks" --only-rank 0 --data "$work/ds.fs" --local-dir "$work/local$ranks" \
        --mount /fanstore -- /usr/bin/python3 "$here/tests/slice_checks.py" /fanstore/ds "$src" $expect || failed=1
done
[ "$failed" = 0 ] && echo "e2e_slices: all passed" || echo "e2e_slices: FAILED"
exit "$failed"
