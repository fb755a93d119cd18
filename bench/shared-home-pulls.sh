#!/usr/bin/env bash
# Bytes read from a home shared by the ranks while they fill (issue 45, item 2: each byte once per job): the
# first-pass-ranks.sh dataset (COUNT files of 128 KiB, PARTITIONS (8) partitions) behind ONE bindfs mount at
# HOME_RATE (default 64M, 1024-based, direct_io), RANKS (2) ranks with --prefetch on, CPUs split
# (bench/other-nodes-core.sh), the command waits until every rank's fill ended (bench/after-pull.sh). Prints per
# run the bytes each rank read from the home and the peers and the fill's end; the ideal is the dataset once.
# Uneven shares (PARTITIONS=3 at 2 ranks) make one rank pull a partition the other still stages in.
# VARIANTS as in first-pass-ranks.sh (LABEL=REPO[,JAVA_OPTS]), rounds alternating. Run under `flock /work/bench.lock`.
#   VARIANTS="new=/tmp/new old=/tmp/old" bench/shared-home-pulls.sh /tmp/shp 3
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-shared-home}"; rounds="${2:-3}"; count="${COUNT:-4096}"; ranks="${RANKS:-2}"
rate="${HOME_RATE:-64M}"; parts="${PARTITIONS:-8}"
read -r -a variants <<<"${VARIANTS:-new=$repo}"
mkdir -p "$work/home" "$work/local"
if [ ! -f "$work/.done-$count-$parts" ]; then
  rm -rf "$work/src" "$work/ds.fs"
  python3 "$repo/bench/paper/gen_files.py" "$work/src/small" "$count" 131072 random
  first="${variants[0]#*=}"; first="${first%%,*}"
  "$first/fanstore" prep --input "$work/src" --output "$work/ds.fs" --name small --partitions "$parts" --force >/dev/null
  rm -f "$work"/.done-*; touch "$work/.done-$count-$parts"
fi
mountpoint -q "$work/home" && fusermount -u "$work/home"
bindfs -r --read-rate="$rate" -o direct_io "$work/ds.fs" "$work/home"
trap 'fusermount -u "$work/home" 2>/dev/null || true' EXIT
dataset=$(du -sb "$work/ds.fs" | cut -f1)
echo "# $(date -u '+%F %H:%M') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $ranks ranks," \
  "$count x 128 KiB ($((dataset >> 20)) MiB, $parts partitions) on one home at $rate/s, split CPUs; variants: ${variants[*]}"
for v in "${variants[@]}"; do r="${v#*=}"; echo "#   ${v%%=*}: $(git -C "${r%%,*}" rev-parse --short HEAD)"; done
for r in $(seq "$rounds"); do
  order=("${variants[@]}")
  [ $((r % 2)) = 0 ] && mapfile -t order < <(printf '%s\n' "${variants[@]}" | tac)
  for v in "${order[@]}"; do
    spec="${v#*=}"; rp="${spec%%,*}"; opts=""; [[ $spec == *,* ]] && opts="${spec#*,}"
    rm -rf "$work/local"; mkdir -p "$work/local"
    FANSTORE_RUNTIME_JAVA_OPTS="${opts//,/ }" "$rp/fanstore" run --data "$work/home" --local-dir "$work/local" \
      --ranks "$ranks" --only-rank 0 --stats "$work/stats.json" -- "$repo/bench/other-nodes-core.sh" \
      "$repo/bench/after-pull.sh" true >/dev/null 2>"$work/run.err" || { echo "round $r ${v%%=*} FAILED"; continue; }
    python3 - "$work/stats.json" "$r" "${v%%=*}" "$dataset" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); m = 1 << 20
home = [x["fill"]["bytes_from_sharedfs"] for x in d["ranks"]]
peer = [x["fill"]["bytes_from_peer"] for x in d["ranks"]]
print(f"round {sys.argv[2]} {sys.argv[3]} home_MiB {sum(home) / m:.0f} ({' '.join(f'{h / m:.0f}' for h in home)})"
      f" x_dataset {sum(home) / int(sys.argv[4]):.2f} peer_MiB {' '.join(f'{p / m:.0f}' for p in peer)}"
      f" fill_s {max(x['fill']['ms'] for x in d['ranks']) / 1000:.1f} wall_s {d['job']['wall_s']}")
PY
  done
done
