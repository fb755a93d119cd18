#!/usr/bin/env bash
# Makes (once per machine) a Debian 11 "bullseye" root file system (glibc 2.31, python3) for the container tests,
# and prints its path. Cached OUTSIDE the clone so a clean clone on the same machine reuses it:
#   FANSTORE_ROOTFS_CACHE (default /var/cache/fanstore)/bullseye-rootfs; a new machine builds it (about 3 minutes,
#   needs root and the Debian mirror). The tree is complete only when its .fanstore-complete marker exists, so an
#   interrupted build is redone, never used. Concurrent callers serialise on a lock file.
set -euo pipefail
cache="${FANSTORE_ROOTFS_CACHE:-/var/cache/fanstore}"
root="$cache/bullseye-rootfs"
mirror="${FANSTORE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
mkdir -p "$cache"
exec 9>"$cache/.bullseye.lock"
flock 9
if [ ! -f "$root/.fanstore-complete" ]; then
    command -v debootstrap >/dev/null || { echo "rootfs: debootstrap missing (scripts/setup-debian.sh deps)" >&2; exit 2; }
    rm -rf "$root.tmp"
    echo "rootfs: building $root (debootstrap bullseye, about 3 minutes)" >&2
    debootstrap --variant=minbase --include=python3-minimal bullseye "$root.tmp" "$mirror" >"$cache/bullseye.log" 2>&1 \
        || { echo "rootfs: debootstrap failed, see $cache/bullseye.log" >&2; exit 1; }
    rm -rf "$root"; mv "$root.tmp" "$root"
    touch "$root/.fanstore-complete"
fi
echo "$root"
