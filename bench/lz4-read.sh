#!/usr/bin/env bash
# Compressed reads (issue 8 item 6) in one run: the LZ4 decoder alone on the dataset's own bodies (the off-heap path
# the runtime uses), fanstore's first pass and warm passes through the shim, and native ext4 warm
# on the same (uncompressed) files. Reader: bench/native/reader.c, stat + open + read + close, 2 threads.
#   bench/lz4-read.sh [WORK_DIR] [MIB_PER_SIZE] [ROUNDS] [SIZES...]     e.g. bench/lz4-read.sh /tmp/lz4r 256 2 128K 2M
# BASELINE_REPO=DIR adds the rows of another built checkout (e.g. the commit before a change) in the same rounds.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-lz4}"; mib="${2:-256}"; rounds="${3:-2}"; shift 3 2>/dev/null || shift $#
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(128K 2M)
threads=2
mkdir -p "$work"
gcc -O2 -Wall -Wextra -Werror -pthread -o "$work/reader" "$repo/bench/native/reader.c"
reader="$work/reader"
bytes_of() { case $1 in 128K) echo 131072;; 512K) echo 524288;; 2M) echo 2097152;; 8M) echo 8388608;; esac; }
for s in "${sizes[@]}"; do
  b=$(bytes_of "$s"); n=$(( mib * 1048576 / b ))
  [ -f "$work/src/.done-v2-$s-$mib" ] && continue
  rm -rf "$work/src/$s"
  python3 "$repo/bench/paper/gen_files.py" "$work/src/$s" "$n" "$b" text   # CSV-like rows, LZ4 ~2.8x
  touch "$work/src/.done-v2-$s-$mib"
done
rm -rf "$work/txt.fs"
"$repo/fanstore" prep --input "$work/src" --output "$work/txt.fs" --name txt --partitions 8 --compress lz4 >/dev/null
for s in "${sizes[@]}"; do
  find "$work/src/$s" -type f | sort > "$work/native-$s.list"
  sed "s|^$work/src|/fanstore/txt|" "$work/native-$s.list" > "$work/fs-$s.list"
done
cp="$repo/bench/target/classes:$(ls "$repo"/bench/target/lib/*.jar | tr '\n' ':')"
# shellcheck disable=SC2046
decoder() { java $("$repo/scripts/jvm-flags" runtime) -cp "$cp" org.fanstore.bench.Lz4DecodeBench "$work/txt.fs" \
  "$1" "$threads" 5 "${2:-direct}" | tail -n1; }
fsrun() { # fsrun REPO PASSES SIZE: the last pass of PASSES through the shim, right after ready
  "$1/fanstore" run --data "$work/txt.fs" --local-dir "$work" --cache-mb $(( mib * 4 )) --ranks 1 -- \
    "$reader" read "$2" "$work/fs-$3.list" "$threads" 2>"$work/run.err" \
    || echo "FAILED: $(grep -m1 -E 'reader:|fanstore' "$work/run.err" || tail -n1 "$work/run.err")"
}
row() { # row SIZE CASE FILES_PER_S MB_PER_S NATIVE_FILES_PER_S
  printf "| %-5s | %-38s | %9.0f | %8.0f | %6sx |\n" "$1" "$2" "$3" "$4" \
    "$(awk -v a="$3" -v b="$5" 'BEGIN{printf "%.2f", a / b}')"
}
reader_row() { # reader_row SIZE CASE READER_OUTPUT NATIVE
  if [[ $3 == FAILED* ]]; then printf "| %-5s | %-38s | %s |\n" "$1" "$2" "$3"; return; fi
  row "$1" "$2" "$(awk '{print $6}' <<<"$3")" "$(awk '{print $8}' <<<"$3")" "$4"
}
decoder_row() { # decoder_row SIZE CASE BENCH_OUTPUT NATIVE
  row "$1" "$2" "$(field files/s "$3")" "$(field MB/s "$3")" "$4"
}
field() { awk -v k="$1" '{for (i = 2; i <= NF; i++) if ($i == k) print $(i - 1)}' <<<"$2"; }
echo "# $(date -u '+%F %H:%M') UTC, commit $(git -C "$repo" rev-parse --short HEAD), $(nproc) cores," \
  "load $(cut -d' ' -f1-3 /proc/loadavg), ${mib} MiB per size, $threads threads, ${BASELINE_REPO:+baseline $BASELINE_REPO}"
echo "| size  | case                                   |   files/s |     MB/s | vs native |"
echo "|-------|----------------------------------------|----------:|---------:|----------:|"
for round in $(seq "$rounds"); do
  for s in "${sizes[@]}"; do
    b=$(bytes_of "$s")
    nat=$("$reader" read 3 "$work/native-$s.list" "$threads"); natf=$(awk '{print $6}' <<<"$nat")
    reader_row "$s" "r$round native ext4 warm" "$nat" "$natf"
    decoder_row "$s" "r$round LZ4 decoder alone (off-heap)" "$(decoder "$b")" "$natf"
    reader_row "$s" "r$round fanstore LZ4 first pass" "$(fsrun "$repo" 1 "$s")" "$natf"
    reader_row "$s" "r$round fanstore LZ4 warm (3rd pass)" "$(fsrun "$repo" 3 "$s")" "$natf"
    if [ -n "${BASELINE_REPO:-}" ]; then
      reader_row "$s" "r$round baseline LZ4 first pass" "$(fsrun "$BASELINE_REPO" 1 "$s")" "$natf"
      reader_row "$s" "r$round baseline LZ4 warm (3rd pass)" "$(fsrun "$BASELINE_REPO" 3 "$s")" "$natf"
    fi
  done
done
