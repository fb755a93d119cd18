#!/usr/bin/env bash
# Puts a server behind a real network delay: a network namespace joined to this one by a veth pair, with the delay on
# the way (real stores answer a GET's first byte in ~15-30 ms; loopback in microseconds). README.md says more.
#   tests/s3/netns.sh up [ONE_WAY_MS] [DIR]  namespace fanstore-s3: host 198.18.43.1 <-> 198.18.43.2 (default 10 ms,
#                                          so a round trip costs 2x), addresses from 198.18.0.0/15 (benchmarking).
#                                          With DIR: S3Proxy (tests/s3/s3proxy.sh, DIR/data) inside, reached from the
#                                          host at 198.18.43.2:9000; prints the AWS_* lines (also in DIR/s3proxy.env)
#   tests/s3/netns.sh exec CMD [ARGS...]   runs CMD inside it
#   tests/s3/netns.sh down                 removes the namespace and the pair (kills what still runs inside and
#                                          waits for it to end)
#   tests/s3/netns.sh check                exit 0 only if the host reaches 198.18.43.2 through the pair: without it
#                                          that address goes out by the default route (a client must not follow)
# The delay: `tc netem delay` on both ends of the pair where the kernel has sch_netem; where it has not (this VM's
# 6.18), with DIR, tests/s3/delayproxy.py inside the namespace in front of S3Proxy (each direction's bytes delayed,
# a connection's first bytes one round trip more for the handshake; its counters: curl 198.18.43.2:9100).
# FANSTORE_S3_DELAY=proxy takes the proxy even where netem works (with ONE_WAY_MS 0 too: its counters, its cost).
# ONE_WAY_MS 0: no delay at all.
# Needs root (ip, tc from iproute2).
set -euo pipefail
ns=fanstore-s3
host_if=fs3-host
ns_if=fs3-ns
host_ip=198.18.43.1
ns_ip=198.18.43.2
port=9000          # what the host connects to
inner_port=9001    # S3Proxy's own port inside, behind the delay proxy
control_port=9100  # the delay proxy's counters
here="$(dirname "$(readlink -f "$0")")"

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
    dir=${3:-}
    how=none
    if [ "$delay" = 0 ] && [ "${FANSTORE_S3_DELAY:-}" = proxy ] && [ -n "$dir" ]; then
        how=proxy   # no delay, but the proxy's counters (and its cost, to compare)
    elif [ "$delay" != 0 ]; then
        if [ "${FANSTORE_S3_DELAY:-}" != proxy ] &&
           tc qdisc add dev "$host_if" root netem delay "${delay}ms" 2>/dev/null &&
           ip netns exec "$ns" tc qdisc add dev "$ns_if" root netem delay "${delay}ms" 2>/dev/null; then
            how=netem
        elif [ -n "$dir" ]; then
            tc qdisc del dev "$host_if" root 2>/dev/null || true
            how=proxy
        else
            "$0" down
            echo "this kernel has no netem qdisc (sch_netem): give a DIR to run S3Proxy behind tests/s3/delayproxy.py," \
                "or '$0 up 0' for the namespace without a delay" >&2
            exit 1
        fi
    fi
    if [ -n "$dir" ]; then
        mkdir -p "$dir"
        dir=$(readlink -f "$dir")
        if [ "$how" = proxy ]; then
            ip netns exec "$ns" "$here/s3proxy.sh" start "$dir" "127.0.0.1:$inner_port" >/dev/null || { "$0" down; exit 1; }
            ip netns exec "$ns" setsid /usr/bin/python3 "$here/delayproxy.py" "$ns_ip:$port" "127.0.0.1:$inner_port" \
                "$delay" "$control_port" > "$dir/delayproxy.log" 2>&1 < /dev/null &
            echo $! > "$dir/delayproxy.pid"
            for _ in $(seq 1 50); do   # bounded: 5 s
                (exec 3<>"/dev/tcp/$ns_ip/$port") 2>/dev/null && break
                sleep 0.1
            done
            (exec 3<>"/dev/tcp/$ns_ip/$port") 2>/dev/null ||
                { echo "delay proxy not listening; see $dir/delayproxy.log" >&2; "$0" down; exit 1; }
            sed -i "s|AWS_ENDPOINT_URL=[^ ]*|AWS_ENDPOINT_URL=http://$ns_ip:$port|" "$dir/s3proxy.env"
        else
            ip netns exec "$ns" "$here/s3proxy.sh" start "$dir" "$ns_ip:$port" >/dev/null || { "$0" down; exit 1; }
        fi
    fi
    echo "namespace $ns: server address $ns_ip (round trip $((2 * delay)) ms from $host_ip, delay by $how)" >&2
    [ -z "$dir" ] || cat "$dir/s3proxy.env"
    ;;
check)
    ip route get "$ns_ip" 2>/dev/null | grep -q "dev $host_if" ||
        { echo "$ns_ip is not reached through $host_if: '$0 up' first" >&2; exit 1; }
    ;;
exec)
    shift
    exec ip netns exec "$ns" "$@"
    ;;
down)
    if ip netns list | grep -qw "$ns"; then
        for pid in $(ip netns pids "$ns"); do kill "$pid" 2>/dev/null || true; done
        for _ in $(seq 1 30); do [ -z "$(ip netns pids "$ns")" ] && break; sleep 0.1; done   # bounded: 3 s
        for pid in $(ip netns pids "$ns"); do kill -9 "$pid" 2>/dev/null || true; done
        for _ in $(seq 1 50); do [ -z "$(ip netns pids "$ns")" ] && break; sleep 0.1; done   # 5 s more
        ip netns del "$ns"
    fi
    ip link del "$host_if" 2>/dev/null || true   # gone with the namespace's end, normally
    ;;
*)
    echo "usage: $0 up [ONE_WAY_MS] [DIR] | exec CMD [ARGS...] | check | down" >&2; exit 2 ;;
esac
