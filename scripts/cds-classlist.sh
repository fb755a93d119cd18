#!/usr/bin/env bash
# cds-classlist.sh: regenerates launcher/src/main/cds/runtime.classlist, the classes a runtime JVM loads in real
# jobs, from which the build dumps the runtime's class archive (launcher/src/main/java/org/fanstore/launcher/startup/
# README.md). Runs three short jobs on this machine: a directory dataset at 1 rank (the JVM's own class list, with its
# lambda forms) and at 2 ranks (broadcast, peers), and a bucket dataset served by a local S3Proxy (the AWS SDK).
# Needs a build (scripts/setup-debian.sh build). Run it after changes that load many new classes; a stale list
# only costs start-up time.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
out="$repo/launcher/src/main/cds/runtime.classlist"
work=$(mktemp -d /tmp/fanstore-classlist.XXXXXX)
trap '"$repo/tests/s3/s3proxy.sh" stop "$work/s3" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -p "$work/src/d"
for i in $(seq 1 64); do head -c 8192 /dev/urandom > "$work/src/d/f$i"; done
"$repo/fanstore" prep --input "$work/src" --output "$work/ds.fs" >/dev/null
"$repo/fanstore" prep --input "$work/src" --output "$work/lz.fs" --compress lz4 >/dev/null
read_all='cat /fanstore/*/d/* >/dev/null'
# 1 rank: the JVM's own list (lambda forms included); DumpLoadedClassList takes no per-process name.
FANSTORE_RUNTIME_JAVA_OPTS="-XX:DumpLoadedClassList=$work/one.lst" \
  "$repo/fanstore" run --data "$work/lz.fs" -- sh -c "$read_all" >/dev/null 2>&1
# 2 ranks and the bucket: every class each runtime loads, from the class-loading log (one file per process).
FANSTORE_RUNTIME_JAVA_OPTS="-Xlog:class+load=info:file=$work/two-%p.log" \
  "$repo/fanstore" run --ranks 2 --data "$work/ds.fs" -- sh -c "$read_all" >/dev/null 2>&1
env_line=$("$repo/tests/s3/s3proxy.sh" start "$work/s3")
# shellcheck disable=SC2046
export $env_line
mkdir -p "$work/s3/data/classlist"
"$repo/fanstore" prep --input "$work/src" --output s3://classlist/ds.fs >/dev/null
FANSTORE_RUNTIME_JAVA_OPTS="-Xlog:class+load=info:file=$work/s3-%p.log" \
  "$repo/fanstore" run --ranks 2 --data s3://classlist/ds.fs -- sh -c "$read_all" >/dev/null 2>&1
{
  echo "# The classes a fanstore runtime loads (scripts/cds-classlist.sh, $(date -u +%F), $(java -version 2>&1 | head -1))."
  echo "# The build dumps the runtime's class archive from it (launcher/.../startup/README.md)."
  grep -v '^#' "$work/one.lst"
  # "[..][info][class,load] a.b.C source: ..." -> a/b/C; hidden and generated classes (source: __...) cannot be listed
  cat "$work"/two-*.log "$work"/s3-*.log | sed -n 's/.*\[class,load\] \([^ ]*\) source: \([^_].*\)/\1/p' \
    | grep -v '/0x' | tr . /
} | awk '/^#/ || !seen[$0]++' > "$out"
echo "$(grep -vc '^#' "$out") classes -> $out"
