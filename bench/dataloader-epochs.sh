#!/usr/bin/env bash
# A real input pipeline through fanstore with its defaults against native, and against an older checkout: torchvision
# ImageFolder + DataLoader(num_workers=2) over generated JPEGs (bench/paper/imagefolder_epochs.py), 2 epochs per job.
# Rows per round (ROUNDS, default 3), the order alternating every round: native (the source tree on this disk),
# fanstore 1 rank, fanstore 2 ranks with rank 0 reading everything (--only-rank 0, so half of it is the other rank's),
# and with OLD=<checkout, built> the same two fanstore rows with that checkout's launcher. Each row prints the
# epochs' samples/s; the summary gives the median of each row's epoch 1 and epoch 2 and its ratio to native.
#   bench/dataloader-epochs.sh [WORK_DIR] [CLASSES] [PER_CLASS]     e.g. OLD=/work/wt-old bench/dataloader-epochs.sh
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-dataloader}"; classes="${2:-10}"; per="${3:-400}"
rounds="${ROUNDS:-3}"; py=/usr/bin/python3
mkdir -p "$work"
if [ ! -d "$work/jpeg/img" ]; then
  "$py" "$repo/bench/paper/gen_files.py" jpeg "$work/jpeg/img" "$classes" "$per" 256
fi
"$repo/fanstore" prep --input "$work/jpeg/img" --output "$work/img.fs" --name img --partitions 8 --force >/dev/null
epochs() { "$py" "$repo/bench/paper/imagefolder_epochs.py" "$1" 2 | awk '$1=="epoch" {printf "%s ", $8}'; }
row() { # row LABEL FANSTORE RANKS
  "$2" run --ranks "$3" --only-rank 0 --data "$work/img.fs" --local-dir "$work" -- \
    "$py" "$repo/bench/paper/imagefolder_epochs.py" /fanstore/img 2 2>/dev/null | awk '$1=="epoch" {printf "%s ", $8}'
}
out="$work/rows.txt"; : > "$out"
for r in $(seq "$rounds"); do
  labels=(native new-1 new-2); [ -n "${OLD:-}" ] && labels+=(old-1 old-2)
  [ $((r % 2)) = 0 ] && labels=($(printf '%s\n' "${labels[@]}" | tac))
  for l in "${labels[@]}"; do
    case $l in
      native) v=$(epochs "$work/jpeg/img") ;;
      new-*) v=$(row "$l" "$repo/fanstore" "${l#new-}") ;;
      old-*) v=$(row "$l" "$OLD/fanstore" "${l#old-}") ;;
    esac
    echo "round $r $l $v" | tee -a "$out"
  done
done
"$py" - "$out" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault(f[2], []).append([float(x) for x in f[3:5]])
nat = [st.median(e[i] for e in rows["native"]) for i in (0, 1)]
print("| row | epoch 1 samples/s | x native | epoch 2 samples/s | x native |")
print("|---|---:|---:|---:|---:|")
for k, v in rows.items():
    m = [st.median(e[i] for e in v) for i in (0, 1)]
    print(f"| {k} | {m[0]:.0f} | {m[0]/nat[0]:.2f} | {m[1]:.0f} | {m[1]/nat[1]:.2f} |")
PY
