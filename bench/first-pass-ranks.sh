#!/usr/bin/env bash
# The first pass of small files at 1 and 2 ranks (issue 45's goal: 2 ranks >= 0.8x 1 rank): COUNT (4096) random
# files of 128 KiB, 8 partitions, bench/native/reader.c with 2 threads, one pass right after `fanstore run` starts
# the command (rank 0 reads every file; at 2 ranks half are the other rank's). CPUs split as two nodes have them
# (bench/other-nodes-core.sh: the other rank on the last CPU; at 1 rank the runtime and reader on the same CPUs as
# rank 0 at 2), native pinned the same way (taskset -c 0-(N-2), page cache warm).
# VARIANTS compares builds or JVM options in the same rounds, alternating their order: each word is
# LABEL=REPO[,JAVA_OPTS] (JAVA_OPTS: commas for spaces, passed as FANSTORE_RUNTIME_JAVA_OPTS), e.g.
#   VARIANTS="new=/work/wt/readers old=/work/wt/readers-old" bench/first-pass-ranks.sh /tmp/fpr 3
#   VARIANTS="ra4=$PWD ra0=$PWD,-Dfanstore.fill.readahead=0" bench/first-pass-ranks.sh /tmp/fpr 3
# Prints one row per run (files/s, the runtime's p99 open) and a table of medians. Run under `flock /work/bench.lock`.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-first-pass}"; rounds="${2:-3}"; count="${COUNT:-4096}"; bytes=131072
read -r -a variants <<<"${VARIANTS:-new=$repo}"
read -r -a rankset <<<"${RANKS:-1 2}"
last=$(( $(nproc) - 1 ))
[ "$last" -ge 1 ] || { echo "first-pass-ranks.sh: needs 2 CPUs or more" >&2; exit 2; }
mkdir -p "$work/local"
gcc -O2 -Wall -Wextra -Werror -pthread -o "$work/reader" "$repo/bench/native/reader.c"
if [ ! -f "$work/.done-$count" ]; then
  rm -rf "$work/src" "$work/ds.fs"
  python3 "$repo/bench/paper/gen_files.py" "$work/src/small" "$count" "$bytes" random
  first="${variants[0]#*=}"; first="${first%%,*}"
  "$first/fanstore" prep --input "$work/src" --output "$work/ds.fs" --name small --partitions 8 --force >/dev/null
  touch "$work/.done-$count"
fi
find "$work/src/small" -type f | sort > "$work/native.list"
sed "s|^$work/src|/fanstore/small|" "$work/native.list" > "$work/fs.list"
one() { # one REPO OPTS RANKS -> "FILES_PER_S P99_MS"
  local out rt
  out=$(FANSTORE_RUNTIME_JAVA_OPTS="${2//,/ }" "$1/fanstore" run --data "$work/ds.fs" --local-dir "$work/local" \
    --ranks "$3" --only-rank 0 -- "$repo/bench/other-nodes-core.sh" "$work/reader" read 1 "$work/fs.list" 2 \
    2>"$work/run.err") || { echo "FAILED $(tail -n1 "$work/run.err")"; return; }
  rt=$(grep -o 'p99 open via runtime [0-9]* us' "$work/run.err" | awk '{printf "%.1f", $5 / 1000}')
  echo "$(awk '{for (i = 1; i < NF; i++) if ($i == "files_per_s") print $(i + 1)}' <<<"$out") ${rt:--}"
}
native() {
  cat "$work/src/small"/* >/dev/null
  taskset -c "0-$(( last - 1 ))" "$work/reader" read 1 "$work/native.list" 2 | awk '{for (i = 1; i < NF; i++)
    if ($i == "files_per_s") print $(i + 1)}'
}
rows="$work/rows.txt"; : > "$rows"
echo "# $(date -u '+%F %H:%M') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $count x 128 KiB," \
  "split CPUs, 2 reader threads; variants: ${variants[*]}"
for v in "${variants[@]}"; do r="${v#*=}"; echo "#   ${v%%=*}: $(git -C "${r%%,*}" rev-parse --short HEAD)"; done
for r in $(seq "$rounds"); do
  order=("${variants[@]}")
  [ $((r % 2)) = 0 ] && mapfile -t order < <(printf '%s\n' "${variants[@]}" | tac)
  echo "round $r native - $(native) -" | tee -a "$rows"
  for n in "${rankset[@]}"; do
    for v in "${order[@]}"; do
      spec="${v#*=}"; rp="${spec%%,*}"; opts=""; [[ $spec == *,* ]] && opts="${spec#*,}"
      echo "round $r ${v%%=*} $n $(one "$rp" "$opts" "$n")" | tee -a "$rows"
    done
  done
done
python3 - "$rows" <<'PY'
import statistics as st, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 5 and f[4] != "FAILED":
        rows.setdefault((f[2], f[3]), []).append(f)
print("| variant | ranks | first pass files/s (median) | runtime p99 open ms (median) | rounds |")
print("|---|---:|---:|---:|---:|")
for (v, n), rs in rows.items():
    fps = st.median(float(r[4]) for r in rs)
    p99 = [float(r[5]) for r in rs if len(r) > 5 and r[5] != "-"]
    print(f"| {v} | {n} | {fps:.0f} | {st.median(p99) if p99 else '-'} | {len(rs)} |")
PY
