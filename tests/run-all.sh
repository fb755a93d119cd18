#!/usr/bin/env bash
# The whole test suite: install (idempotent), build, then every module's tests (Java via Surefire, C via make).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
scripts/setup-debian.sh deps
mvn -B verify
