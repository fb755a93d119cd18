#!/usr/bin/env bash
# A real S3-compatible server for tests and benchmarks: S3Proxy (filesystem back end) as a process of its own.
#   tests/s3/s3proxy.sh start DIR [ADDR:PORT]   start it (DIR/data holds the buckets), print the AWS_* lines to use
#   tests/s3/s3proxy.sh stop DIR                stop it
# The class path comes from the Maven build (tests/s3/target/s3proxy-lib, made by `mvn package`). Each directory
# under DIR/data is a bucket; each file below it an object. Credentials are generated per start (DIR/s3proxy.env).
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
lib="$here/target/s3proxy-lib"
usage() { echo "usage: $0 start DIR [ADDR:PORT] | stop DIR" >&2; exit 2; }
# alive PID: runs and is not a zombie (a zombie's reaping by init can lag seconds here; kill -0 still succeeds)
alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && [ -n "$st" ] && [ "${st#Z}" = "$st" ]; }
[ $# -ge 2 ] || usage
cmd=$1
dir=$(readlink -f "$2")

case "$cmd" in
start)
    addr=${3:-127.0.0.1:0}
    [ -d "$lib" ] || { echo "no $lib: build first (mvn -B -q -DskipTests package)" >&2; exit 1; }
    mkdir -p "$dir/data"
    if [ -f "$dir/s3proxy.pid" ] && alive "$(cat "$dir/s3proxy.pid")"; then
        echo "S3Proxy already runs for $dir (pid $(cat "$dir/s3proxy.pid"))" >&2; exit 1
    fi
    host=${addr%:*}
    port=${addr##*:}
    if [ "$port" = 0 ]; then   # a free port: ask the kernel
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    fi
    key=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
    secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
    umask 077
    cat > "$dir/s3proxy.properties" <<PROPS
s3proxy.endpoint=http://$host:$port
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=$key
s3proxy.credential=$secret
jclouds.provider=filesystem
jclouds.filesystem.basedir=$dir/data
PROPS
    printf 'AWS_ENDPOINT_URL=http://%s:%s AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s AWS_REGION=us-east-1\n' \
        "$host" "$port" "$key" "$secret" > "$dir/s3proxy.env"
    # logback's default is DEBUG on the console: megabytes per test and a slower server
    printf '<configuration><appender name="o" class="ch.qos.logback.core.ConsoleAppender"><encoder><pattern>%%d %%-5level %%logger{20} %%msg%%n</pattern></encoder></appender><root level="WARN"><appender-ref ref="o"/></root></configuration>\n' \
        > "$dir/logback.xml"
    # setsid: its own session, so stopping it never touches the caller's process group
    setsid java -Xss512k -Dlogback.configurationFile="$dir/logback.xml" -cp "$lib/*" org.gaul.s3proxy.Main --properties "$dir/s3proxy.properties" \
        > "$dir/s3proxy.log" 2>&1 < /dev/null &
    echo $! > "$dir/s3proxy.pid"
    for _ in $(seq 1 150); do   # bounded: 15 s (it listens after about 1.5 s here)
        if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
            cat "$dir/s3proxy.env"
            exit 0
        fi
        if ! alive "$(cat "$dir/s3proxy.pid")"; then
            echo "S3Proxy exited at start; see $dir/s3proxy.log" >&2; exit 1
        fi
        sleep 0.1
    done
    echo "S3Proxy not listening on $host:$port within 15 s; see $dir/s3proxy.log" >&2
    kill "$(cat "$dir/s3proxy.pid")" 2>/dev/null || true
    exit 1
    ;;
stop)
    [ -f "$dir/s3proxy.pid" ] || { echo "no S3Proxy started for $dir" >&2; exit 1; }
    pid=$(cat "$dir/s3proxy.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do alive "$pid" || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/s3proxy.pid"
    ;;
*) usage ;;
esac
