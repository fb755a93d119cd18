#!/usr/bin/env bash
# check_glibc_versions.sh LIB MAX: fails (exit 1, one line per offender) when LIB requires a GLIBC_x.y symbol
# version newer than MAX (e.g. 2.17), from its version references (objdump -p) and its undefined dynamic symbols
# (objdump -T): catches a new libc call, a fortified __*_chk or an __isoc23_* redirect that only a recent glibc has.
set -euo pipefail
lib="$1"; max="$2"
newer() { [ "$(printf '%s\n%s\n' "$1" "$max" | sort -V | tail -n 1)" != "$max" ]; }
bad=0
while read -r v; do
    newer "$v" && { echo "check-glibc: $lib requires GLIBC_$v (> $max):"; bad=1
        objdump -T "$lib" | awk -v v="(GLIBC_$v)" '$0 ~ /\*UND\*/ && index($0, v) { print "  " $NF }'; }
done < <( { objdump -p "$lib" | sed -n 's/.*GLIBC_\([0-9][0-9.]*\).*/\1/p'
            objdump -T "$lib" | sed -n 's/.*\*UND\*.*(GLIBC_\([0-9][0-9.]*\)).*/\1/p'; } | sort -uV)
for n in libdl.so.2 libpthread.so.0; do
    objdump -p "$lib" | grep -q "NEEDED *$n" || { echo "check-glibc: $lib does not record $n as NEEDED (glibc < 2.34 keeps dlsym/pthread_once there)"; bad=1; }
done
[ "$bad" -eq 0 ] && echo "check-glibc: $lib needs GLIBC <= $max"
exit "$bad"
