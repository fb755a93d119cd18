#!/usr/bin/env bash
# A throw-away SLURM cluster on this one machine: its own munged, one slurmctld and two slurmd nodes (n1, n2)
# on 127.0.0.1, every port, key, socket, state and log file under DIR, so it touches nothing system-wide and
# several can coexist. Needs root (slurmd runs tasks as the submitting user) and Debian's slurm-wlm + munge.
#   tests/slurm/cluster.sh start DIR   prints "ready" once both nodes are idle; then: export SLURM_CONF=DIR/slurm.conf
#   tests/slurm/cluster.sh stop DIR    stops every daemon it started (by the pids in DIR) and removes DIR
# Exit status of start: 0 ready, 4 a daemon could not start (the reason is printed), 2 usage.
set -euo pipefail
cmd="${1:-}"; dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

stop() {
  # Jobs first: slurmstepd outlives slurmd, so a step still running (a test that failed half-way) would keep its
  # processes. scancel reaches only this cluster's jobs (SLURM_CONF); bounded by KillWait plus a margin.
  if [ -f "$dir/slurm.conf" ] && [ -f "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
    export SLURM_CONF="$dir/slurm.conf"
    scancel --quiet --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 75); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  # Then the daemons, each by the pid it wrote: both nodes at once, then the controller and munged, so no step is
  # left without its controller. Each group gets 5 s to exit on SIGTERM, then SIGKILL.
  stop_daemons "$dir"/slurmd-n1.pid "$dir"/slurmd-n2.pid
  stop_daemons "$dir"/slurmctld.pid "$dir"/munged.pid
  rm -rf "$dir"
}

stop_daemons() {
  local pids=() pid
  for pidfile in "$@"; do [ -f "$pidfile" ] && pids+=("$(cat "$pidfile")"); done
  [ ${#pids[@]} -gt 0 ] || return 0
  kill "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 50); do
    alive=0; for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" -eq 0 ] && break
    sleep 0.1
  done
  kill -9 "${pids[@]}" 2>/dev/null || true
}

fail() {
  echo "slurm cluster: $1" >&2
  for log in "$dir"/*.log; do [ -f "$log" ] && { echo "--- $log" >&2; tail -5 "$log" >&2; }; done
  stop
  exit 4
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "slurm cluster: needs root" >&2; exit 4; }
for bin in munged slurmctld slurmd srun sinfo; do
  command -v "$bin" >/dev/null || { echo "slurm cluster: $bin is not installed (scripts/setup-debian.sh deps)" >&2; exit 4; }
done

mkdir -p "$dir"/state "$dir"/spool/n1 "$dir"/spool/n2 "$dir"/munge
chmod 700 "$dir"/munge
dd if=/dev/urandom of="$dir"/munge/munge.key bs=1 count=1024 status=none
chmod 400 "$dir"/munge/munge.key
munged --force --socket="$dir"/munge/munge.sock --key-file="$dir"/munge/munge.key \
  --pid-file="$dir"/munged.pid --log-file="$dir"/munged.log --seed-file="$dir"/munge/seed \
  || fail "munged did not start"

# Five consecutive free ports from a pid-derived base, so two clusters on one machine do not collide; all below the
# kernel's ephemeral range, where any outgoing connection may hold a port as its own end (nothing listens there, so
# the check below cannot see it, and slurmd's bind failed on one: "Address already in use").
low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
slots=$(( (low - 20000 - 5) / 50 )); [ "$slots" -ge 1 ] || slots=1
slot=$(( $$ % slots ))
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for _ in $(seq 40); do
  base=$(( 20000 + slot * 50 ))
  all=1; for p in $(seq "$base" $((base + 4))); do port_free "$p" || { all=0; break; }; done
  [ "$all" -eq 1 ] && break
  slot=$(( (slot + 1) % slots ))
done
host="$(hostname)"
# Job ids from a random start: a real machine belongs to one cluster, whose job ids are unique on it; two test
# clusters at once (the docs walk-through's pages) must not both hand out job 1.
first_job=$(( (RANDOM * 32768 + RANDOM) % 60000000 + 1 ))
cat > "$dir"/slurm.conf <<EOF
ClusterName=fstest
FirstJobId=$first_job
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
KillWait=10
MinJobAge=30
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((base + 2)) CPUs=2 RealMemory=2000
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((base + 3)) CPUs=2 RealMemory=2000
PartitionName=debug Nodes=n1,n2 Default=YES State=UP OverSubscribe=FORCE:4
EOF
export SLURM_CONF="$dir"/slurm.conf
slurmctld -c -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N n1 || fail "slurmd n1 did not start"
slurmd -f "$SLURM_CONF" -N n2 || fail "slurmd n2 did not start"
for _ in $(seq 150); do
  if [ "$(sinfo -h -o '%t' -N 2>/dev/null | grep -c '^idle')" -eq 2 ]; then echo ready; exit 0; fi
  sleep 0.2
done
fail "the two nodes did not become idle within 30 s: $(sinfo -N 2>&1 | tr '\n' ' ')"
