# Sourced by multinode-read.sh and split-cpus-alternating.sh (set repo and work first; the bench module must be
# built): the bench class path, the last CPU, and rawmpj, the raw MPJ baseline both print beside fanstore's passes.
# shellcheck shell=bash
bench_cp="$repo/bench/target/classes:$repo/runtime/target/classes:$repo/launcher/target/classes"
bench_cp="$bench_cp:$repo/prep/format/target/classes:$repo/prep/target/classes"
bench_cp="$bench_cp:/usr/share/java/mpj.jar:$(ls "$repo"/bench/target/lib/*.jar | tr '\n' ':')"
last_cpu=$(( $(nproc) - 1 ))
rawmpj() { # rawmpj BYTES RANKS [split]: median MB/s of raw MPJ Send/Recv, rank 0 asking the other rank JVMs in turn,
  # then of the same landed in a file in WORK_DIR (RemoteFetchBench -Dbench.land): "RAW LANDED". With "split", the
  # CPUs as bench/other-nodes-core.sh splits them: the other rank JVMs on the last CPU, rank 0 on the others.
  local d out r; d=$(mktemp -d); local -a java pin0=() pinr=()
  if [ "${3:-}" = split ]; then pin0=(taskset -c "0-$(( last_cpu - 1 ))"); pinr=(taskset -c "$last_cpu"); fi
  # shellcheck disable=SC2207
  java=(java $("$repo/scripts/jvm-flags" runtime) -Xmx512m -Dbench.ranks="$2" -Dbench.sizes="$1" -Dbench.mib=64
        -Dbench.land="$work"
        -cp "$bench_cp" org.fanstore.bench.RemoteFetchBench)
  for ((r = 1; r < $2; r++)); do
    MPJ_HOME=${MPJ_HOME:-/usr/share/mpj} timeout 120 "${pinr[@]}" "${java[@]}" "$r" "$d" "raw-$$" 524288 520192 \
      >/dev/null 2>&1 &
  done
  out=$(MPJ_HOME=${MPJ_HOME:-/usr/share/mpj} timeout 120 "${pin0[@]}" "${java[@]}" 0 "$d" "raw-$$" 524288 520192 \
    2>/dev/null || true)
  wait || true; rm -rf "$d"
  awk '$2 == "KiB" {print $3, $6}' <<<"$out" | tail -n1
}
