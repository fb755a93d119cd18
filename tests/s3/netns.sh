#!/usr/bin/env bash
# Puts a server behind a real network delay: a network namespace joined to this one by a veth pair, with
# `tc netem delay` on both ends (real stores answer a GET's first byte in ~15-30 ms; loopback in microseconds).
#   tests/s3/netns.sh up [ONE_WAY_MS]      namespace fanstore-s3: host 198.18.43.1 <-> 198.18.43.2 (default 10 ms,
#                                          so a round trip costs 2x), addresses from 198.18.0.0/15 (benchmarking)
#   tests/s3/netns.sh exec CMD [ARGS...]   runs CMD inside it, e.g. tests/s3/s3proxy.sh start DIR 198.18.43.2:9000
#   ONE_WAY_MS 0: no qdisc (a kernel without sch_netem, like this VM's 6.18, can only do that)
#   tests/s3/netns.sh down                 removes the namespace and the pair (kills what still runs inside)
# Needs root (ip, tc from iproute2).
set -euo pipefail
ns=fanstore-s3
host_if=fs3-host
ns_if=fs3-ns
host_ip=198.18.43.1
ns_ip=198.18.43.2

case "${1:-}" in
up)
    delay=${2:-10}
    if ip netns list | grep -qw "$ns"; then echo "namespace $ns exists: $0 down first" >&2; exit 1; fi
    ip netns add "$ns"
    ip link add "$host_if" type veth peer name "$ns_if"
    ip link set "$ns_if" netns "$ns"
    ip addr add "$host_ip/24" dev "$host_if"
    ip link set "$host_if" up
    ip netns exec "$ns" ip addr add "$ns_ip/24" dev "$ns_if"
    ip netns exec "$ns" ip link set "$ns_if" up
    ip netns exec "$ns" ip link set lo up
    if [ "$delay" != 0 ]; then
        if ! tc qdisc add dev "$host_if" root netem delay "${delay}ms" 2>/dev/null ||
           ! ip netns exec "$ns" tc qdisc add dev "$ns_if" root netem delay "${delay}ms" 2>/dev/null; then
            "$0" down
            echo "this kernel has no netem qdisc (sch_netem): no delay possible; '$0 up 0' gives the namespace" \
                "without one" >&2
            exit 1
        fi
    fi
    echo "namespace $ns: server address $ns_ip (round trip $((2 * delay)) ms from $host_ip)"
    ;;
exec)
    shift
    exec ip netns exec "$ns" "$@"
    ;;
down)
    if ip netns list | grep -qw "$ns"; then
        for pid in $(ip netns pids "$ns"); do kill "$pid" 2>/dev/null || true; done
        sleep 0.5
        for pid in $(ip netns pids "$ns"); do kill -9 "$pid" 2>/dev/null || true; done
        ip netns del "$ns"
    fi
    ip link del "$host_if" 2>/dev/null || true   # gone with the namespace's end, normally
    ;;
*)
    echo "usage: $0 up [ONE_WAY_MS] | exec CMD [ARGS...] | down" >&2; exit 2 ;;
esac
