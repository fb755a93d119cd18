#!/usr/bin/env bash
# Installs what fanstore needs on Debian (idempotent), then builds everything.
#   scripts/setup-debian.sh build   install + build (no tests)
#   scripts/setup-debian.sh deps    install only
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
# slurm-wlm, munge, openmpi-bin and mpich are for the launcher tests with real schedulers (tests/slurm/cluster.sh);
# python3-boto3 is the object-store bench's baseline (bench/object-store.sh, one object per sample);
# libpython3.11-testsuite holds CPython's own tests, run under the mount by tests/cpython/run-fs-tests.py;
# debootstrap, podman and bubblewrap are for the container tests (tests/containers/, an old-glibc root file system).
need=(libmpj-java liblog4j1.2-java gcc make maven openjdk-17-jdk-headless bindfs strace
      python3-torch python3-torchvision python3-numpy python3-pil python3-h5py python3-lmdb python3-boto3 rsync
      slurm-wlm slurmctld slurmd slurm-client munge openmpi-bin mpich libpython3.11-testsuite
      debootstrap podman bubblewrap)
missing=()
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q "${missing[@]}"
fi
[ "${1:-build}" = deps ] && exit 0
mvn -B -q -DskipTests package
echo "setup: built; the command is $(pwd)/fanstore"
