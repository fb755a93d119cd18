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
# HOME_RATE=R (e.g. 256M) puts the dataset behind ONE bindfs mount read at R (1024-based, direct_io) shared by the
# ranks: a home slower than the peer link, as on a cluster; unset, the home is this machine's page cache (~2 GB/s).
# Prints one row per run (files/s, the runtime's p99 open, the share of rank 0's opens the shim answered itself, rank
# 0's fill time: stats fill.ms) and a table of medians. A pass with >= 90% direct opens is warm (the fill had ended
# before it opened most files: at 1 rank from the page cache it often has); the table also gives the median of the
# other, racing, rounds.
# Run under `flock /work/bench.lock`.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-first-pass}"; rounds="${2:-3}"; count="${COUNT:-4096}"; bytes=131072
read -r -a variants <<<"${VARIANTS:-new=$repo}"
read -r -a rankset <<<"${RANKS:-1 2}"
last=$(( $(nproc) - 1 ))
[ "$last" -ge 1 ] || { echo "first-pass-ranks.sh: needs 2 CPUs or more" >&2; exit 2; }
mkdir -p "$work/local"
data="$work/ds.fs"
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
if [ -n "${HOME_RATE:-}" ]; then
  mkdir -p "$work/home"; mountpoint -q "$work/home" && fusermount -u "$work/home"
  bindfs -r --read-rate="$HOME_RATE" -o direct_io "$work/ds.fs" "$work/home"
  trap 'fusermount -u "$work/home" 2>/dev/null || true' EXIT
  data="$work/home"
fi
one() { # one REPO OPTS RANKS -> "FILES_PER_S P99_MS DIRECT_PCT FILL_MS"
  local out rt direct
  rm -f "$work/stats.json"
  out=$(FANSTORE_RUNTIME_JAVA_OPTS="${2//,/ }" "$1/fanstore" run --data "$data" --local-dir "$work/local" \
    --ranks "$3" --only-rank 0 --stats "$work/stats.json" -- "$repo/bench/other-nodes-core.sh" "$work/reader" read 1 \
    "$work/fs.list" 2 2>"$work/run.err") || { echo "FAILED $(tail -n1 "$work/run.err")"; return; }
  rt=$(grep -o 'p99 open via runtime [0-9]* us' "$work/run.err" | awk '{printf "%.1f", $5 / 1000}')
  direct=$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["ranks"][0]; o = r["opens"]
print(round(100 * o["local_direct"] / max(1, o["total"])), r.get("fill", {}).get("ms", "-"))' "$work/stats.json" \
    2>/dev/null || echo - -)
  echo "$(awk '{for (i = 1; i < NF; i++) if ($i == "files_per_s") print $(i + 1)}' <<<"$out") ${rt:--} $direct"
}
native() {
  cat "$work/src/small"/* >/dev/null
  taskset -c "0-$(( last - 1 ))" "$work/reader" read 1 "$work/native.list" 2 | awk '{for (i = 1; i < NF; i++)
    if ($i == "files_per_s") print $(i + 1)}'
}
rows="$work/rows.txt"; : > "$rows"
echo "# $(date -u '+%F %H:%M') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $count x 128 KiB," \
  "split CPUs, 2 reader threads, home ${HOME_RATE:-page cache}; variants: ${variants[*]}"
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
print("| variant | ranks | first pass files/s (median) | runtime p99 open ms (median) | rounds | warm rounds |"
      " racing rounds' median files/s | rank 0's fill ms (median) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for (v, n), rs in rows.items():
    fps = st.median(float(r[4]) for r in rs)
    p99 = [float(r[5]) for r in rs if len(r) > 5 and r[5] != "-"]
    warm = [r for r in rs if len(r) > 6 and r[6] != "-" and int(r[6]) >= 90]
    racing = [float(r[4]) for r in rs if r not in warm]
    fill = [float(r[7]) for r in rs if len(r) > 7 and r[7] != "-"]
    print(f"| {v} | {n} | {fps:.0f} | {st.median(p99) if p99 else '-'} | {len(rs)} | {len(warm) if n != '-' else '-'} |"
          f" {f'{st.median(racing):.0f}' if racing and n != '-' else '-'} |"
          f" {f'{st.median(fill):.0f}' if fill else '-'} |")
PY
