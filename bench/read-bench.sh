#!/usr/bin/env bash
# End-to-end read benchmark (issue: the shim): stat + open + read + close over the paper's four file sizes,
# native ext4 vs bindfs (FUSE) vs fanstore (1 rank: local unpacked files; 2 ranks: half the files remote),
# all in one run, warm caches (each reader runs 3 passes and reports the last; "-cold" is the first and only
# pass: half the files fetched from rank 1 through the runtime into its cache).
#   bench/read-bench.sh [WORK_DIR] [MIB_PER_SIZE]
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-read-bench}"
mib="${2:-1024}"
mkdir -p "$work"
gcc -O2 -std=gnu11 -Wall -Wextra -Werror -o "$work/reader" "$repo/bench/native/reader.c"
reader="$work/reader"
src="$work/src/rb"
sizes=(128K:131072 512K:524288 2M:2097152 8M:8388608)
if [ ! -f "$work/src/.done-$mib" ]; then
  rm -rf "$work/src"; mkdir -p "$src"
  for s in "${sizes[@]}"; do
    name=${s%%:*}; bytes=${s##*:}; count=$(( mib * 1048576 / bytes ))
    mkdir -p "$src/$name"
    python3 - "$src/$name" "$count" "$bytes" <<'PY'
import os, sys
d, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(count):
    with open(os.path.join(d, "f%06d.bin" % i), "wb") as f:
        f.write(os.urandom(size))
PY
  done
  touch "$work/src/.done-$mib"
fi
rm -rf "$work/rb.fs"
"$repo/fanstore" prep --input "$src" --output "$work/rb.fs" --partitions 8 >/dev/null
mnt="$work/bindfs"; mkdir -p "$mnt"
mountpoint -q "$mnt" && fusermount -u "$mnt"
bindfs -o ro "$src" "$mnt"
trap 'fusermount -u "$mnt" 2>/dev/null || true' EXIT
echo "# machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -r), $(date -u +%F)"
printf "%-6s %-22s %12s %10s\n" size setup files/s MB/s
for s in "${sizes[@]}"; do
  name=${s%%:*}
  find "$src/$name" -type f | sort > "$work/native-$name.list"
  sed "s|^$src|$mnt|" "$work/native-$name.list" > "$work/fuse-$name.list"
  sed "s|^$src|/fanstore/rb|" "$work/native-$name.list" > "$work/fs-$name.list"
  for setup in native bindfs fanstore-1rank fanstore-2ranks fanstore-2ranks-cold; do
    case $setup in
      native) out=$("$reader" read 3 "$work/native-$name.list") ;;
      bindfs) out=$("$reader" read 3 "$work/fuse-$name.list") ;;
      fanstore-1rank) out=$("$repo/fanstore" run --ranks 1 --unpack eager --data "$work/rb.fs" --local-dir "$work" -- \
                         "$reader" read 3 "$work/fs-$name.list" 2>/dev/null) ;;
      fanstore-2ranks) out=$("$repo/fanstore" run --ranks 2 --unpack eager --only-rank 0 --cache-mb $((mib * 2)) \
                         --data "$work/rb.fs" --local-dir "$work" -- "$reader" read 3 "$work/fs-$name.list" 2>/dev/null) ;;
      fanstore-2ranks-cold) out=$("$repo/fanstore" run --ranks 2 --unpack eager --only-rank 0 --cache-mb $((mib * 2)) \
                         --data "$work/rb.fs" --local-dir "$work" -- "$reader" read 1 "$work/fs-$name.list" 2>/dev/null) ;;
    esac
    printf "%-6s %-22s %12s %10s\n" "$name" "$setup" "$(awk '{print $6}' <<<"$out")" "$(awk '{print $8}' <<<"$out")"
  done
done
echo "# stat only (128K files)"
for setup in native fanstore-1rank; do
  case $setup in
    native) out=$("$reader" stat 5 "$work/native-128K.list") ;;
    fanstore-1rank) out=$("$repo/fanstore" run --ranks 1 --unpack eager --data "$work/rb.fs" --local-dir "$work" -- \
                       "$reader" stat 5 "$work/fs-128K.list" 2>/dev/null) ;;
  esac
  printf "%-6s %-22s %12s stat/s\n" 128K "$setup" "$(awk '{print $6}' <<<"$out")"
done
