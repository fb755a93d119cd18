#!/bin/sh
# Runs "$@" with this machine's CPUs split as a cluster would have them: the job's other ranks (the "other nodes")
# on the last CPU, this rank's runtime and "$@" on the others. On 2 cores with 4 ranks, the other three ranks'
# background pulls otherwise take the reader's CPU, which on a cluster they would not; this shows how much of a
# row is that. Its native baseline must run on the same CPUs (`taskset -c 0-(N-2)`). A diagnostic, not a default.
#   fanstore run --ranks 4 --only-rank 0 ... -- bench/other-nodes-core.sh READER ARGS...
# Ranks are found by their runtime's command line, which names its own shm directory (.../rank-K).
set -eu
last=$(( $(nproc) - 1 ))
[ "$last" -ge 1 ] || { echo "other-nodes-core.sh: needs 2 CPUs or more; running unpinned" >&2; exec "$@"; }
job=$(dirname "$FANSTORE_SHM_DIR")
me=$(basename "$FANSTORE_SHM_DIR")
ranks=$(ls -d "$job"/rank-* | grep -vc '\.lock$')
others=0
for p in $(pgrep -f -- "$job/rank-"); do
  case "$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)" in
    *"$job/$me "*) taskset -a -p -c "0-$(( last - 1 ))" "$p" >/dev/null ;;
    *"$job/rank-"*) taskset -a -p -c "$last" "$p" >/dev/null && others=$(( others + 1 )) ;;
  esac
done
# a row labelled "split" must not be an unsplit run: say so if a rank of this machine was not found
[ "$others" -eq $(( ranks - 1 )) ] || echo "other-nodes-core.sh: pinned $others of $(( ranks - 1 )) other ranks" >&2
exec taskset -c "0-$(( last - 1 ))" "$@"
