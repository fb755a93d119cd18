#!/usr/bin/env bash
# A node lost mid-epoch (issue 46): the survivor's epoch times with --on-node-loss continue (the default) against
# --on-node-loss end plus a restart of the job on the survivors (what a user did before).
#   bench/node-loss.sh [WORK_DIR]            e.g. ROUNDS=2 SIZE_MB=512 bench/node-loss.sh
# Dataset: SIZE_MB (default 512) in 256 KiB random files, 6 partitions, generated and prepped once in WORK_DIR.
# Each round runs, alternating: (continue) `fanstore run --ranks 3 --only-rank 0` whose command reads EPOCHS epochs
# (default 6) on rank 0 and SIGKILLs rank 2's runtime when 30% of epoch KILL_EPOCH (default 3) is read; (end+restart)
# the same with --on-node-loss end (the job ends, exit 3), then a new `fanstore run --ranks 2` that reads epochs
# KILL_EPOCH..EPOCHS. Split CPUs (bench/other-nodes-core.sh): rank 0's runtime and the reader on CPU 0, the other
# ranks on CPU 1. Columns: each epoch's seconds as the reader times it, and the wall from the first launch to the
# end of the last epoch (both jobs and the restart's load for end+restart). COMPUTE_MS (default 1): a sleep per file
# read, as a training step's compute (an epoch of 2048 files then lasts > 2 s). EXTRA: more `fanstore run` options
# (e.g. "--prefetch off"). Output on stdout; bench/journal/<date>-node-loss-<commit>.txt keeps it.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-node-loss}"
size_mb="${SIZE_MB:-512}"; rounds="${ROUNDS:-2}"; epochs="${EPOCHS:-6}"; kill_epoch="${KILL_EPOCH:-3}"
read -ra extra <<<"${EXTRA:-}"
mkdir -p "$work/local"
if [ ! -d "$work/ds.fs" ]; then
  python3 - "$work/src/ds" "$size_mb" <<'PY'
import os, sys
root, mb = sys.argv[1], int(sys.argv[2])
os.makedirs(root, exist_ok=True)
for i in range(mb * 4):
    with open(os.path.join(root, 'f%05d.bin' % i), 'wb') as f:
        f.write(os.urandom(256 << 10))
PY
  "$repo/fanstore" prep --input "$work/src/ds" --output "$work/ds.fs" --partitions 6 >/dev/null
fi
reader=("$repo/bench/other-nodes-core.sh" python3 "$repo/bench/node_loss_epochs.py" /fanstore/ds)
run() {  # --on-node-loss mode, ranks, then the reader's arguments; prints the reader's lines, the exit status last
  local mode=$1 ranks=$2; shift 2
  set +e
  COMPUTE_MS="${COMPUTE_MS:-1}" FANSTORE_JOB_ID="nl$$-$RANDOM" "$repo/fanstore" run --ranks "$ranks" --only-rank 0 --data "$work/ds.fs" \
    --local-dir "$work/local" --on-node-loss "$mode" "${extra[@]}" -- "${reader[@]}" "$@" 2>"$work/err.txt"
  echo "exit $?"
  set -e
}
now() { date +%s.%N; }
row() {  # mode, the reader's output (possibly of two jobs), t0, t1
  local times
  times=$(grep '^epoch' <<<"$2" | awk '{printf " %6.2f", $3}')
  printf '%-14s|%s | %7.2f | %s\n' "$1" "$times" "$(echo "$4 - $3" | bc)" "$(grep '^exit' <<<"$2" | tr '\n' ' ')"
}
echo "node-loss bench: $(git -C "$repo" rev-parse --short HEAD), ${size_mb} MiB, $epochs epochs, rank 2 killed at 30% of"
echo "epoch $kill_epoch; compute ${COMPUTE_MS:-1} ms/file; options: ${EXTRA:-defaults}; load at start: $(uptime | sed 's/.*load average: //')"
echo "mode          | epoch seconds (1..$epochs)                 |  wall s | exit"
for r in $(seq "$rounds"); do
  t0=$(now); out=$(run continue 3 1 "$epochs" "$kill_epoch" 0.3); t1=$(now)
  row continue "$out" "$t0" "$t1"
  grep -q 'lost rank 2' "$work/err.txt" || { echo "continue: no loss reported:"; tail -5 "$work/err.txt"; }
  t0=$(now); out=$(run end 3 1 "$epochs" "$kill_epoch" 0.3 | grep -v "^epoch $kill_epoch ")
  out="$out"$'\n'$(run end 2 "$kill_epoch" "$epochs"); t1=$(now)
  row "end+restart" "$out" "$t0" "$t1"
done
