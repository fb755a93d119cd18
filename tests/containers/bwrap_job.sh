#!/usr/bin/env bash
# A job whose command is a container: bwrap (binds as Apptainer's defaults: the root, /dev, /dev/shm, /proc, the
# local directory, the shim) with a PID namespace of its own, running python3 of a Debian 11 root (glibc 2.31) with
# the host-built shim preloaded. The reader checksums every file of the dataset against the source tree and writes
# a checkpoint under the mount, which must be drained to --output-dir.
# Skip with FANSTORE_SKIP_CONTAINERS=1. Needs root, bwrap, and the rootfs (tests/containers/rootfs.sh builds it once
# per machine, about 1-3 minutes).
# Usage: bwrap_job.sh [bwrap|podman]: podman runs the same reader with `podman run` of the root imported as an
# image (needs podman and crun).
set -euo pipefail
runner="${1:-bwrap}"
[ "${FANSTORE_SKIP_CONTAINERS:-0}" = 1 ] && { echo "SKIP bwrap_job (FANSTORE_SKIP_CONTAINERS=1)"; exit 0; }
repo="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
command -v "$runner" >/dev/null || { echo "FAIL ${runner}_job: $runner missing (scripts/setup-debian.sh deps)"; exit 1; }
root="$("$repo/tests/containers/rootfs.sh")"
shim="$repo/interpose-native/build/libfanstore.so"
work="$(mktemp -d /tmp/fs-bwrap-XXXXXX)"; trap '[ "${KEEP:-0}" = 1 ] || rm -rf "$work"' EXIT
mkdir -p "$work/src/d/e" "$work/local" "$work/out"
for i in $(seq 1 40); do head -c $((i * 997)) /dev/urandom > "$work/src/d/f$i.bin"; done
head -c 300000 /dev/urandom > "$work/src/d/e/big.bin"
(cd "$work/src" && find . -type f -printf '%P\n' | sort | xargs sha256sum) > "$work/sums.txt"
"$repo/fanstore" prep --input "$work/src" --output "$work/ds.fs" --partitions 3 --name ds >/dev/null
cat > "$work/reader.py" <<'PY'
import hashlib, os, sys
want = dict(reversed(l.split()) for l in open(sys.argv[1]))
got = {}
for d, _, files in os.walk("/fanstore/ds"):
    for f in files:
        p = os.path.join(d, f)
        got[os.path.relpath(p, "/fanstore/ds")] = hashlib.sha256(open(p, "rb").read()).hexdigest()
assert got == want, (len(got), len(want))
os.makedirs("/fanstore/ds/ckpt", exist_ok=True)
with open("/fanstore/ds/ckpt/step1.bin", "wb") as f:
    f.write(b"checkpoint" * 1000)
print("reader: %d files checksummed under %s, pid %d in its namespace" % (len(got), os.confstr("CS_GNU_LIBC_VERSION"), os.getpid()))
PY
inside='[ -n "$(FANSTORE_SHIM_PROBE=/dev/stdout /bin/true)" ] || { echo "shim not loaded" >&2; exit 1; }; exec python3 "$0" "$1"'
t0=$(date +%s)
case "$runner" in
bwrap)
    "$repo/fanstore" run --data "$work/ds.fs" --local-dir "$work/local" --output-dir "$work/out" -- \
        bwrap --bind "$root" / --dev /dev --bind /dev/shm /dev/shm --proc /proc --unshare-pid \
              --bind "$work" "$work" --ro-bind "$shim" "$shim" \
              /bin/sh -c "$inside" "$work/reader.py" "$work/sums.txt" ;;
podman)
    # The cached root imported as an image (once; podman keeps it), run with its own PID, mount, IPC and network
    # namespaces. What this machine's crun needed: rlimits below the caller's hard limits (it may not raise
    # RLIMIT_NOFILE/NPROC, podman's default asks for the maxima), no cgroups, and no cgroup2 "unified" mount with
    # controllers (crun refuses hybrid mode): it is unmounted in a private mount namespace around podman only.
    image=localhost/fanstore-bullseye:latest
    podman image exists "$image" || tar -C "$root" -c . | podman import -q - "$image" >/dev/null
    nofile=$(ulimit -Hn); nproc=$(ulimit -Hu); [ "$nproc" = unlimited ] && nproc=4096
    nofile=$(( nofile > 4096 ? 4096 : nofile )); nproc=$(( nproc > 4096 ? 4096 : nproc ))
    "$repo/fanstore" run --data "$work/ds.fs" --local-dir "$work/local" --output-dir "$work/out" -- \
        unshare --mount --propagation private /bin/sh -c '
            if [ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]; then
                umount -l /sys/fs/cgroup/unified; fi; exec "$@"' podman-wrap \
        podman run --rm --cgroups=disabled --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc" \
              --network none --env-host -v /dev/shm:/dev/shm -v "$work:$work" -v "$shim:$shim:ro" "$image" \
              /bin/sh -c "$inside" "$work/reader.py" "$work/sums.txt" ;;
*) echo "FAIL ${runner}_job: runner must be bwrap or podman"; exit 1 ;;
esac
cmp <(printf 'checkpoint%.0s' $(seq 1000)) "$work/out/ds/ckpt/step1.bin"
echo "PASS ${runner}_job ($(( $(date +%s) - t0 )) s)"
