#!/usr/bin/env bash
# Load benchmark: how long from `fanstore run` to the command starting, phase by phase, now that prep builds the
# metadata table once (namespace.tbl) and each job only lands it; and what the table costs prep.
#   bench/load-bench.sh [WORK_DIR] [FILES] [SYNTH_ENTRIES]
# FILES real tiny files in ImageNet-1k's shape (default 1.3M, 1,300 per directory) are generated once under
# WORK_DIR/src; SYNTH_ENTRIES (default 10M, 0 to skip) more are written straight into partitions
# (bench SyntheticDataset: this machine has 16M inodes in all). Each is run with 1 and 2 ranks, the table
# broadcast by rank 0 (the default) and read by every rank (--table-load read).
# Baselines in the same run: native `find -printf %s` over the tree (a stat of every file: the metadata a job
# without fanstore pays before its first epoch); and with OLD=<dir of an older fanstore checkout, built>, that
# build's prep and start on the same tree, alternating with this one (ROUNDS rounds, default 2). SKIP_PREP=1 reuses
# the datasets a previous run prepped (the starts only). SYNTH_DIRS spreads the synthetic files evenly over that many
# directories (21841: ImageNet-21k's shape; default 1,300 files per directory). OLD_SYNTH: the synthetic dataset the
# old build starts (default the same one; another when the table format changed, e.g. one it wrote itself). Each start also reports the peak
# RSS of the largest process of the job (GNU time: a rank JVM), the landed table's shared memory, and how long the
# first and the second process to touch /fanstore take (`ls /fanstore`: the first one validates the table).
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
work="${1:-/tmp/fanstore-load-bench}"
files="${2:-1300000}"
synth="${3:-10000000}"
rounds="${ROUNDS:-2}"
old="${OLD:-}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
src="$work/src/in1k"
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }

if [ ! -f "$work/src/.done-$files" ]; then
  rm -rf "$work/src"; mkdir -p "$src"
  /usr/bin/python3 - "$src" "$files" <<'PY'
import os, sys, random
root, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(1); per_dir = 1300
body = bytes(rnd.getrandbits(8) for _ in range(4096))
for i in range(n):
    d = os.path.join(root, "train", "n%08d" % (i // per_dir))
    if i % per_dir == 0:
        os.makedirs(d, exist_ok=True)
    fd = os.open(os.path.join(d, "n%08d_%d.JPEG" % (i // per_dir, i)), os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, body[: 64 + (i * 37) % 1024]); os.close(fd)
PY
  touch "$work/src/.done-$files"
fi

echo "# $(date -u '+%F %H:%M UTC'), commit $(git -C "$repo" rev-parse --short HEAD), $(nproc) cores," \
  "$(free -g | awk '/Mem:/{print $2}') GiB, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $files files in $(( (files + 1299) / 1300 )) directories, 32 partitions, --local-dir on $(df --output=fstype "$work" | tail -1)"
t0=$(now); find "$src" -type f -printf '%s\n' | wc -l >/dev/null; t1=$(now)
echo "native: find -printf %s (stat of every file, warm cache): $(secs "$t0" "$t1") s"

# prep: this build (which writes the table) and, with OLD, the older build (which does not), alternating.
builds=("$repo")
[ -n "$old" ] && builds+=("$old")
for r in $(seq "$rounds"); do
  [ -n "${SKIP_PREP:-}" ] && break
  for b in "${builds[@]}"; do
    tag=$([ "$b" = "$repo" ] && echo new || echo old)
    ds="$work/in1k-$tag.fs"
    rm -rf "$ds"
    t0=$(now); "$b/fanstore" prep --input "$src" --output "$ds" --partitions 32 >/dev/null; t1=$(now)
    echo "prep ($tag build) round $r: $(secs "$t0" "$t1") s"
  done
done
ds="$work/in1k-new.fs"
cp -r "$ds" "$work/upgrade.fs"
t0=$(now); "$repo/fanstore" upgrade "$work/upgrade.fs" >/dev/null; t1=$(now)
cmp -s "$ds/namespace.tbl" "$work/upgrade.fs/namespace.tbl" || echo "upgrade wrote another table than prep!"
rm -rf "$work/upgrade.fs"
table_bytes=$(stat -c %s "$ds/namespace.tbl")
echo "table alone (fanstore upgrade: read the partitions' tables, build, write): $(secs "$t0" "$t1") s;" \
  "namespace.tbl $table_bytes bytes, $(echo "scale=1; $table_bytes / $files" | bc) bytes/file"

# One start: prints launch -> the last rank's command start, and rank 0's (and 1's) ready-line phases.
start() { # start LABEL BUILD DATASET RANKS [run options...]
  local label="$1" b="$2" data="$3" ranks="$4"; shift 4
  rm -f "$work"/started.* "$work/shm.out"
  local t0 t1 log="$work/run.log"
  t0=$(now)
  FANSTORE_VERBOSE=1 /usr/bin/time -f 'peak_rss_kb=%M' -o "$work/time.out" "$b/fanstore" run --ranks "$ranks" \
    --data "$data" --local-dir "$work" "$@" -- sh -c "date +%s.%N > $work/started.\$FANSTORE_RANK;
    [ \$FANSTORE_RANK != 0 ] || { a=\$(date +%s.%N); ls /fanstore > /dev/null; b=\$(date +%s.%N);
    ls /fanstore > /dev/null; c=\$(date +%s.%N);
    echo \"first ls (maps, validates, seals the table) \$(echo \$b - \$a | bc) s, second ls \$(echo \$c - \$b | bc) s\" \
    > $work/shm.out;
    du -k --apparent-size \$FANSTORE_SHM_DIR/meta.tbl | cut -f1 >> $work/shm.out; }" > "$log" 2>&1 \
    || { echo "$label: FAILED"; grep -v '^\s*at ' "$log" | tail -3; return; }
  t1=$(cat "$work"/started.* | sort -n | tail -1)
  echo "$label: launch -> command start $(secs "$t0" "$t1") s; $(tail -1 "$work/time.out");" \
    "$(head -1 "$work/shm.out" 2>/dev/null); meta.tbl $(tail -1 "$work/shm.out" 2>/dev/null) KiB; $(grep -o 'fanstore rank [0-9]*: files=.*' "$log" \
    | sed -E 's/files=[0-9]+ dirs=[0-9]+ bytes=[0-9]+ //' | tr '\n' ';')"
}
for r in $(seq "$rounds"); do
  for ranks in 1 2; do
    start "1.3M new, $ranks rank(s), broadcast, round $r" "$repo" "$work/in1k-new.fs" "$ranks"
    [ "$ranks" = 2 ] && start "1.3M new, 2 ranks, read itself, round $r" "$repo" "$work/in1k-new.fs" 2 --table-load read
    if [ -n "$old" ]; then start "1.3M old build, $ranks rank(s), round $r" "$old" "$work/in1k-old.fs" "$ranks"; fi
  done
done

if [ "$synth" -gt 0 ]; then
  sds="$work/synth-$synth.fs"
  if [ ! -f "$sds/manifest.txt" ]; then
    agrona="$(ls "${M2_REPO:-$HOME/.m2/repository}"/org/agrona/agrona/2.6.0/agrona-2.6.0.jar)"
    lz4="$(ls "${M2_REPO:-$HOME/.m2/repository}"/at/yawk/lz4/lz4-java/*/lz4-java-*.jar | head -1)"
    rm -rf "$sds"
    t0=$(now)
    /usr/bin/time -f 'synthesis peak RSS %M KiB' -o "$work/synth-time.out" \
    java $(sed -n 's/^runtime=//p' "$repo/launcher/target/classes/org/fanstore/launcher/run/jvm.flags") -Xmx14g \
      -cp "$repo/bench/target/classes:$repo/prep/format/target/classes:$agrona:$lz4" \
      org.fanstore.bench.SyntheticDataset "$sds" in10m "$synth" 32 ${SYNTH_DIRS:-}
    echo "synthetic dataset written in $(secs "$t0" "$(now)") s; $(cat "$work/synth-time.out")"
  fi
  echo "synthetic: namespace.tbl $(stat -c %s "$sds/namespace.tbl") bytes for $synth files," \
    "$(echo "scale=1; $(stat -c %s "$sds/namespace.tbl") / $synth" | bc) bytes/file"
  for r in $(seq "$rounds"); do
    for ranks in 1 2; do
      start "$synth synthetic, $ranks rank(s), broadcast, round $r" "$repo" "$sds" "$ranks"
      [ "$ranks" = 2 ] && start "$synth synthetic, 2 ranks, read itself, round $r" "$repo" "$sds" 2 --table-load read
      if [ -n "$old" ]; then
        start "$synth synthetic, old build, $ranks rank(s), round $r" "$old" "${OLD_SYNTH:-$sds}" "$ranks"
      fi
    done
  done
fi
