#!/usr/bin/env bash
# MLPerf Storage's training shape without DLIO's dependencies (issue 45 item 5): bench/mlperf_shape.py's loop (a
# torch DataLoader reading one file per sample, a sleep per batch as the accelerator, AU per epoch computed as DLIO's
# StatsCounter does), native and through fanstore in one run, rounds alternating their order.
#   unet3d:   UNET_FILES (56) of ~40 MiB, 4 reader processes, batch 7, 0.115 s compute per batch
#   resnet50: RESNET_FILES (8000) of 112 KiB, 8 reader processes, batch 400, 0.2 s compute per batch
# Rows (LABELS, each run under every CPUS entry):
#   native-warm   the source tree on this disk, page cache warm
#   native-cold   the same, its pages dropped first (posix_fadvise DONTNEED; the host may still cache: cold-ish)
#   native-home   the source tree on the throttled home (bindfs --read-rate HOME_RATE, direct_io: every epoch;
#                 one mount for the whole job, so at 2 ranks both ranks share HOME_RATE, as two nodes share a home)
#   fs-1, fs-2    fanstore 1 / 2 ranks (the command on rank 0, so at 2 ranks half of it is the other rank's),
#                 the dataset's home on this disk (its page cache warm)
#   fs-1-home, fs-2-home   the same with the dataset (OUT.fs) on the throttled home
# CPUS: unsplit, split (fanstore: bench/other-nodes-core.sh, the other rank on the last CPU; native pinned to the
# same CPUs, taskset -c 0-(N-2)). Every row runs EPOCHS (3) epochs in one process.
#   bench/mlperf-shape.sh [WORK_DIR]
# Env: ROUNDS (3), WORKLOADS ("unet3d resnet50"), LABELS, CPUS ("unsplit split"), HOME_RATE (bindfs, 1024-based:
# 300M), EPOCHS, UNET_FILES, RESNET_FILES, PARTITIONS (8), FANSTORE_REPO (the checkout whose fanstore runs: this one),
# FS_OPTS (more `fanstore run` options for the fs-* rows, e.g. "--prefetch off").
# Output: one line per row and round (AU % per epoch, epoch times, reader's p99 open per epoch, the runtime's p99
# open), then a table of medians over the rounds. Run it under `flock /work/bench.lock`.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
fsrepo="${FANSTORE_REPO:-$repo}"
work="${1:-/tmp/fanstore-mlperf}"
rounds="${ROUNDS:-3}"; epochs="${EPOCHS:-3}"; rate="${HOME_RATE:-300M}"; parts="${PARTITIONS:-8}"
read -r -a workloads <<<"${WORKLOADS:-unet3d resnet50}"
read -r -a labels <<<"${LABELS:-native-warm native-cold native-home fs-1 fs-2 fs-1-home fs-2-home}"
read -r -a cpus <<<"${CPUS:-unsplit split}"
py=/usr/bin/python3; driver="$repo/bench/mlperf_shape.py"
last=$(( $(nproc) - 1 ))
[ "$last" -ge 1 ] || { echo "mlperf-shape.sh: needs 2 CPUs or more for the split rows" >&2; exit 2; }
shape() { # shape WORKLOAD -> "FILES MEAN_BYTES THREADS BATCH COMPUTE_S"
  case $1 in
    unet3d) echo "${UNET_FILES:-56} $(( 40 * 1048576 )) 4 7 0.115" ;;
    resnet50) echo "${RESNET_FILES:-8000} $(( 112 * 1024 )) 8 400 0.2" ;;
    *) echo "mlperf-shape.sh: workload $1? (unet3d, resnet50)" >&2; exit 2 ;;
  esac
}
mkdir -p "$work/home" "$work/local"
mounts=()
cleanup() { for m in "${mounts[@]}"; do fusermount -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done; }
trap cleanup EXIT
throttled() { # throttled DIR MOUNTPOINT: DIR behind bindfs at HOME_RATE, no page cache above it
  mkdir -p "$2"; mountpoint -q "$2" && fusermount -u "$2"
  bindfs -r --read-rate="$rate" -o direct_io "$1" "$2"
  mounts+=("$2")
}
for w in "${workloads[@]}"; do
  read -r n mean _ _ _ <<<"$(shape "$w")"
  if [ ! -f "$work/src-$w/.done-$n-$mean" ]; then
    rm -rf "$work/src-$w"
    "$py" "$driver" gen "$work/src-$w/$w" "$n" "$mean"
    touch "$work/src-$w/.done-$n-$mean"
  fi
  if [ ! -f "$work/home/.done-$w-$n-$mean-$parts" ]; then
    "$fsrepo/fanstore" prep --input "$work/src-$w/$w" --output "$work/home/$w.fs" --name "$w" \
      --partitions "$parts" --force >/dev/null
    touch "$work/home/.done-$w-$n-$mean-$parts"
  fi
done
throttled "$work/home" "$work/home-slow"
for w in "${workloads[@]}"; do throttled "$work/src-$w" "$work/src-slow-$w"; done
pin() { # pin CPUS: the command prefix of a native row
  if [ "$1" = split ]; then echo "taskset -c 0-$(( last - 1 ))"; fi
}
drop() { "$py" -c 'import os,sys
for r, _, ns in os.walk(sys.argv[1]):
    for n in ns:
        fd = os.open(os.path.join(r, n), os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)' "$1"; }
warm() { find "$1" -type f -exec cat {} + >/dev/null; }
row() { # row WORKLOAD LABEL CPUS -> the driver's epoch lines, and "runtime_p99_us N" for fanstore rows
  local w=$1 l=$2 c=$3 n mean th b comp ranks data wrap=()
  read -r n mean th b comp <<<"$(shape "$w")"
  case $l in
    native-warm) warm "$work/src-$w/$w"
      $(pin "$c") "$py" "$driver" run "$work/src-$w/$w" "$epochs" "$th" "$b" "$comp" ;;
    native-cold) drop "$work/src-$w/$w"
      $(pin "$c") "$py" "$driver" run "$work/src-$w/$w" "$epochs" "$th" "$b" "$comp" ;;
    native-home) $(pin "$c") "$py" "$driver" run "$work/src-slow-$w/$w" "$epochs" "$th" "$b" "$comp" ;;
    fs-*)
      ranks=${l#fs-}; ranks=${ranks%%-*}
      data="$work/home/$w.fs"; [[ $l == *-home ]] && data="$work/home-slow/$w.fs"
      [ "$c" = split ] && wrap=("$repo/bench/other-nodes-core.sh")
      # shellcheck disable=SC2086 # FS_OPTS: extra `fanstore run` options, words split on purpose
      "$fsrepo/fanstore" run --ranks "$ranks" --only-rank 0 --data "$data" --local-dir "$work/local" ${FS_OPTS:-} -- \
        "${wrap[@]}" "$py" "$driver" run "/fanstore/$w" "$epochs" "$th" "$b" "$comp" 2>"$work/run.err" \
        || echo "FAILED: $(grep -m1 -E 'fanstore|mlperf_shape|Error' "$work/run.err" || tail -n1 "$work/run.err")"
      { grep -o 'p99 open via runtime [0-9]* us' "$work/run.err" || true; } | awk '{print "runtime_p99_us", $5}' ;;
    *) echo "mlperf-shape.sh: label $l?" >&2; exit 2 ;;
  esac
}
out="$work/rows.txt"; : > "$out"
echo "# $(date -u '+%F %H:%M') UTC, commit $(git -C "$fsrepo" rev-parse --short HEAD), $(nproc) cores," \
  "load $(cut -d' ' -f1-3 /proc/loadavg), home rate $rate/s, epochs $epochs, rounds $rounds"
combos=()
for c in "${cpus[@]}"; do for l in "${labels[@]}"; do combos+=("$l/$c"); done; done
for r in $(seq "$rounds"); do
  order=("${combos[@]}")
  [ $((r % 2)) = 0 ] && mapfile -t order < <(printf '%s\n' "${combos[@]}" | tac)
  for w in "${workloads[@]}"; do
    for lc in "${order[@]}"; do
      res=$(row "$w" "${lc%/*}" "${lc#*/}" 2>"$work/row.err" | tr '\n' ' ')
      [[ $res == *au_pct* ]] || res="FAILED: $(tail -n1 "$work/row.err") $res"
      line=$(awk -v w="$w" -v lc="$lc" -v r="$r" '{
          au = ep = op = ""; rt = "-"
          for (i = 1; i <= NF; i++) {
            if ($i == "au_pct") au = au (au == "" ? "" : "/") sprintf("%.1f", $(i + 1))
            if ($i == "time_s") ep = ep (ep == "" ? "" : "/") sprintf("%.2f", $(i + 1))
            if ($i == "open_p99_ms") op = op (op == "" ? "" : "/") sprintf("%.1f", $(i + 1))
            if ($i == "runtime_p99_us") rt = sprintf("%.1f", $(i + 1) / 1000)
            if ($i ~ /^FAILED/) { print "round " r " " w " " lc " " $0; exit }
          }
          print "round " r " " w " " lc " au " au " epoch_s " ep " open_p99_ms " op " runtime_p99_ms " rt
        }' <<<"$res")
      echo "$line" | tee -a "$out"
    done
  done
done
"$py" - "$out" <<'PY'
import statistics as st, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 12 or f[4] != "au":
        continue
    rows.setdefault((f[2], f[3]), []).append(f)
def med(runs, i):
    cols = list(zip(*[[float(x) for x in r[i].split("/")] for r in runs]))
    return "/".join(f"{st.median(c):.1f}" if i == 5 else f"{st.median(c):.2f}" for c in cols)
print("| workload | row (cpus) | AU % epochs 1/2/3 (median) | epoch s 1/2/3 | reader p99 open ms"
      " | runtime p99 open ms | rounds |")
print("|---|---|---|---|---|---|---|")
for (w, lc), runs in rows.items():
    rt = [float(r[11]) for r in runs if r[11] != "-"]
    print(f"| {w} | {lc} | {med(runs, 5)} | {med(runs, 7)} | {med(runs, 9)} | "
          f"{st.median(rt) if rt else '-'} | {len(runs)} |")
PY
