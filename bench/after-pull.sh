#!/bin/sh
# Runs "$@" once every rank of the job (on this machine) has written its "prefetched" marker, i.e. once the
# background pulls are over: the steady state of epoch 2 onwards on a real cluster, where the other ranks' pulls
# run on other nodes' cores, not on the reader's. Waits at most 120 s, then runs "$@" anyway.
#   fanstore run ... -- bench/after-pull.sh READER ARGS...
n=$(ls -d "$FANSTORE_SHM_DIR"/../rank-* 2>/dev/null | grep -vc '\.lock$')
i=0
while [ "$(ls "$FANSTORE_SHM_DIR"/../rank-*/prefetched 2>/dev/null | wc -l)" -lt "$n" ] && [ $i -lt 1200 ]; do
  sleep 0.1; i=$((i + 1))
done
[ $i -lt 1200 ] || echo "after-pull.sh: not every rank finished its pull in 120 s; running anyway" >&2
exec "$@"
