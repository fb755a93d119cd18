#!/usr/bin/env bash
# bench_shim.sh: the shim's cost, for bench/RESULTS.md "## shim".
#   1. off-prefix calls (stat/access of a real path): native vs under the shim (active) vs inert shim;
#   2. the classification alone (fs_path_classify, no system call);
#   3. stat and open+close of table entries through the shim vs native calls on the real files.
# Each figure is the best of 3 interleaved runs (a shared 2-core box is noisy). Usage: tests/bench_shim.sh
set -euo pipefail
here="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
repo="$(cd "$here/.." && pwd)"
lib="$here/build/libfanstore.so"
make -s -C "$here" all >/dev/null  # the library and build/bench_shim, build/bench_classify
agrona="$(ls ~/.m2/repository/org/agrona/agrona/2.6.0/agrona-2.6.0.jar)"

work="$(mktemp -d /tmp/fanstore-bench.XXXXXX)"
trap 'rm -rf "$work"' EXIT
src="$work/src/bench"; mkdir -p "$src" "$work/shm"; chmod 700 "$work/shm"
for d in $(seq 0 9); do
    mkdir -p "$src/d$d"
    for f in $(seq 0 99); do head -c 4096 /dev/zero > "$src/d$d/f$f.bin"; done
done
java $("$repo/scripts/jvm-flags" runtime) \
    -cp "$repo/runtime/target/classes:$repo/prep/format/target/classes:$agrona" \
    org.fanstore.runtime.metadata.TableFromTree "$src" bench "$work/shm/meta.tbl" >/dev/null

B="$here/build/bench_shim"
active() { env LD_PRELOAD="$lib" FANSTORE_SHM_DIR="$work/shm" "$@"; }
inert() { env LD_PRELOAD="$lib" "$@"; }
best() {  # best <runs...>: prints min ns/call of the given commands' outputs
    sort -n | head -n 1
}
ns() { "$@" | awk '{print $2}'; }

off=/usr/lib/x86_64-linux-gnu/libc.so.6
N=${FANSTORE_BENCH_CALLS:-10000000}
native_paths=(); shim_paths=()
for d in $(seq 0 9); do for f in $(seq 0 99); do
    native_paths+=("$src/d$d/f$f.bin"); shim_paths+=("/fanstore/bench/d$d/f$f.bin")
done; done

echo "machine: nproc=$(nproc), $(free -g | awk '/Mem:/{print $2}') GiB RAM, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r)"
for mode in stat access; do
    n=""; a=""; i=""
    for run in 1 2 3; do
        n+="$(ns "$B" $mode "$N" "$off")"$'\n'
        a+="$(ns active "$B" $mode "$N" "$off")"$'\n'
        i+="$(ns inert "$B" $mode "$N" "$off")"$'\n'
    done
    n=$(printf '%s' "$n" | best); a=$(printf '%s' "$a" | best); i=$(printf '%s' "$i" | best)
    echo "off-prefix $mode($off), $N calls: native $n ns, shim active $a ns (+$(echo "$a - $n" | bc) ns), shim inert $i ns (+$(echo "$i - $n" | bc) ns)"
done
c=""
for run in 1 2 3; do c+="$(ns "$here/build/bench_classify" classify "$N" "$off")"$'\n'; done
echo "fs_path_classify alone on $off: $(printf '%s' "$c" | best) ns/call (includes the loop)"

M=2000000
for mode in stat open; do
    [ "$mode" = open ] && M=500000
    n=""; s=""
    for run in 1 2 3; do
        n+="$(ns "$B" $mode "$M" "${native_paths[@]}")"$'\n'
        s+="$(ns active "$B" $mode "$M" "${shim_paths[@]}")"$'\n'
    done
    n=$(printf '%s' "$n" | best); s=$(printf '%s' "$s" | best)
    echo "table entries, $mode over 1000 files, $M calls: native $n ns ($(echo "1000000000 / $n" | bc) /s), shim $s ns ($(echo "1000000000 / $s" | bc) /s), ratio shim/native $(echo "scale=2; $s / $n" | bc)"
done
