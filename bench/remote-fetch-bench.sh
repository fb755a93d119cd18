#!/usr/bin/env bash
# Remote fetch vs raw MPJ Send/Recv between two rank JVMs on this machine (loopback).
# Usage: bench/remote-fetch-bench.sh [protocolSwitchLimit] [chunkBytes]
set -euo pipefail
cd "$(dirname "$0")/.."
PSL=${1:-$(( 512 << 10 ))}
CHUNK=${2:-$(( 4 << 20 ))}
mvn -B -o -q -pl bench -am package -DskipTests
CP="bench/target/classes:runtime/target/classes:launcher/target/classes:prep/format/target/classes:prep/target/classes:/usr/share/java/mpj.jar:$(ls bench/target/lib/*.jar | tr '\n' ':')"
export MPJ_HOME=${MPJ_HOME:-/usr/share/mpj}
DIR=$(mktemp -d)
JOB="bench-$$"
# shellcheck disable=SC2207
JAVA=(java $(scripts/jvm-flags runtime) -Xmx512m -cp "$CP" org.fanstore.bench.RemoteFetchBench)
timeout 300 "${JAVA[@]}" 1 "$DIR" "$JOB" "$PSL" "$CHUNK" &
OWNER=$!
trap 'kill -9 $OWNER 2>/dev/null || true; rm -rf "$DIR"' EXIT
timeout 300 "${JAVA[@]}" 0 "$DIR" "$JOB" "$PSL" "$CHUNK"
wait $OWNER
