#!/usr/bin/env bash
# Builds and runs every tests/test_*.c (or only the names given as arguments, e.g. `run.sh test_meta_table`).
# A test declares what it needs in comment lines near its top (first 5 lines), so tests from different
# engineers never need this script edited:
#   // link: meta_table.c path_norm.c     sources from src/ compiled into the test (none: just the test file)
#   // valgrind: yes                      also run it under `valgrind --error-exitcode=1` when valgrind exists
#   // cflags: -fsanitize=address         extra compiler flags for this test (e.g. sanitizers for a fuzz driver)
# Each test gets FANSTORE_REPO (repository root, for tests/vectors/...) and FANSTORE_BUILD (interpose-native/
# build, where libfanstore.so lies) in its environment, runs from interpose-native/, and passes by exiting 0.
# Prints PASS/FAIL per test and a final line "N passed, N failed"; exits non-zero if anything failed.
set -uo pipefail
here="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
cd "$here"
export FANSTORE_REPO="$(cd .. && pwd)"
export FANSTORE_BUILD="$here/build"
CC="${CC:-gcc}"
TEST_CFLAGS="-O1 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc"
TIMEOUT="${FANSTORE_TEST_TIMEOUT:-300}"
out="build/tests"
mkdir -p "$out"

if [ $# -gt 0 ]; then
    tests=(); for n in "$@"; do tests+=("tests/${n%.c}.c"); done
else
    shopt -s nullglob; tests=(tests/test_*.c)
fi

passed=0; failed=0
have_valgrind=0; command -v valgrind >/dev/null 2>&1 && have_valgrind=1

for src in "${tests[@]}"; do
    name="$(basename "$src" .c)"
    if [ ! -f "$src" ]; then echo "FAIL $name (no such test)"; failed=$((failed + 1)); continue; fi
    link="$(head -n 5 "$src" | sed -n 's|^// link:\(.*\)$|\1|p' | head -n 1)"
    deps=(); for f in $link; do deps+=("src/$f"); done
    extra="$(head -n 5 "$src" | sed -n 's|^// cflags:\(.*\)$|\1|p' | head -n 1)"
    # shellcheck disable=SC2086
    if ! $CC $TEST_CFLAGS $extra -o "$out/$name" "$src" "${deps[@]}" -ldl -lpthread; then
        echo "FAIL $name (does not compile)"; failed=$((failed + 1)); continue
    fi
    if ! timeout "$TIMEOUT" "$out/$name"; then
        echo "FAIL $name"; failed=$((failed + 1)); continue
    fi
    if [ "$have_valgrind" = 1 ] && head -n 5 "$src" | grep -q '^// valgrind: yes'; then
        if ! timeout "$((TIMEOUT * 4))" valgrind -q --error-exitcode=1 --leak-check=full "$out/$name" >/dev/null; then
            echo "FAIL $name (under valgrind)"; failed=$((failed + 1)); continue
        fi
        echo "PASS $name (also under valgrind)"
    else
        echo "PASS $name"
    fi
    passed=$((passed + 1))
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
