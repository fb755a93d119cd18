#!/usr/bin/env bash
# The paper's measurements in one run (issue 11): single node (Figure 3), metadata, several nodes in network
# namespaces (Figures 5-6), LZ4 (Figures 10-11), a torchvision input pipeline, JMH and the shim's per-call cost;
# then the scaling model, the plots and a section written to bench/journal/<date>-run-paper-<commit>.md (the
# path is printed; bench/RESULTS.md holds the current numbers and is edited by hand).
#   bench/run-paper.sh [--quick] [--work DIR] [--keep-data]
# --quick: small data (64 MiB per file size, a 50,000-file tree in the same 2,002 directories, 2,000 JPEGs),
# under 10 minutes on 2 cores. Full: 512 MiB per size, 1.3M-file tree, 10,000 JPEGs; as long as it takes.
# Raw CSV: bench/results/<stamp>/; plots: bench/plots/. Needs root for drop_caches and netns (else says so).
# Everything this run creates (mounts, namespaces, /dev/shm, data) is removed on exit, also on Ctrl-C.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
quick=0; keep=0; work="/tmp/fanstore-paper-$$"
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --keep-data) keep=1 ;;
    --work) work=$2; shift ;;
    *) echo "usage: bench/run-paper.sh [--quick] [--work DIR] [--keep-data]" >&2; exit 2 ;;
  esac
  shift
done
if [ $quick = 1 ]; then
  mib=64; tree_train=40; tree_val=10; jpeg_classes=10; jpeg_per=200; jpeg_side=128; mn_sizes=(128K 2M)
  mn_mib=32; passes=5; jmh=(-f 1 -wi 1 -i 2 -w 1s -r 1s); shim_calls=1000000; mpj_mib=32; mode=quick
else
  mib=512; tree_train=1250; tree_val=50; jpeg_classes=20; jpeg_per=500; jpeg_side=256; mn_sizes=(128K 512K 2M 8M)
  mn_mib=256; passes=5; jmh=(-f 1 -wi 3 -i 5 -w 2s -r 2s); shim_calls=10000000; mpj_mib=256; mode=full
fi
sizes=(128K 512K 2M 8M)
# Warm rows: the median of the passes after the first (bench/native/reader.c): a warm pass over 512 MiB lasts
# ~60 ms here, and "the last pass" once gave 0.12x for a hiccup of the machine.
export READER_REPORT=median
py=/usr/bin/python3   # Debian's python3: torch, torchvision, matplotlib
stamp="$(date -u +%Y%m%d-%H%M%S)"
out="$repo/bench/results/$stamp-$mode"; mkdir -p "$out" "$work" "$repo/bench/plots"
csv="$out/paper.csv"; log="$out/run.log"
echo "section,setup,size,ranks,threads,pass,metric,value" > "$csv"
fs="$repo/fanstore"; tag="paper$$"; uid=$(id -u)
mounts=(); namespaces=(); pids=()

cleanup() {
  set +e
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for m in "${mounts[@]}"; do fusermount -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
  for n in "${namespaces[@]}"; do ip netns del "$n" 2>/dev/null; done
  rm -rf /dev/shm/fanstore-"$uid"-"$tag"* /dev/shm/fanstore-jmh* 2>/dev/null
  [ $keep = 1 ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "run-paper: interrupted, cleaning up" >&2; exit 130' INT TERM

say() { echo "run-paper: $*" | tee -a "$log" >&2; }
emit() { echo "$1,$2,$3,$4,$5,$6,$7,$8" >> "$csv"; }   # section setup size ranks threads pass metric value
bytes_of() { case $1 in 128K) echo 131072;; 512K) echo 524288;; 2M) echo 2097152;; 8M) echo 8388608;; esac; }
machine() { echo "$(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg)"; }

say "$mode run, $(date -u '+%F %H:%M') UTC, commit $(git -C "$repo" rev-parse --short HEAD), $(machine), work $work"
{ echo "date=$(date -u '+%F %H:%M') UTC"; echo "commit=$(git -C "$repo" rev-parse --short HEAD)"
  echo "mode=$mode"; echo "cores=$(nproc)"; echo "mem_gib=$(free -g | awk '/Mem:/{print $2}')"
  echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"; echo "kernel=$(uname -r)"; echo "mib_per_size=$mib"; } > "$out/machine.txt"

# ---- build and data ----
(cd "$repo" && nice mvn -B -q -o -DskipTests package >/dev/null)
gcc -O2 -Wall -Wextra -Werror -pthread -o "$work/reader" "$repo/bench/native/reader.c"
reader="$work/reader"
src="$work/src"
for s in "${sizes[@]}"; do
  b=$(bytes_of "$s"); n=$(( mib * 1048576 / b ))
  "$py" "$repo/bench/paper/gen_files.py" "$src/rnd/$s" "$n" "$b" random
  "$py" "$repo/bench/paper/gen_files.py" "$src/txt/$s" "$n" "$b" text
  emit data count "$s" - - - files "$n"
done
emit meta - - - - - cores "$(nproc)"
"$fs" prep --input "$src/rnd" --output "$work/rnd.fs" --name rnd --partitions 8 --force >/dev/null
"$fs" prep --input "$src/txt" --output "$work/txt.fs" --name txt --partitions 8 --compress lz4 --force >/dev/null
raw=$(awk '/^raw_bytes/{print $2}' "$work/txt.fs/manifest.txt"); stored=$(awk '/^stored_bytes/{print $2}' "$work/txt.fs/manifest.txt")
emit data txt all 1 0 - lz4_ratio "$(awk -v a="$raw" -v b="$stored" 'BEGIN{printf "%.2f", a / b}')"
say "data: ${mib} MiB per size, random + text (LZ4 ratio $(awk -v a="$raw" -v b="$stored" 'BEGIN{printf "%.2f", a / b}'))"
for set in rnd txt; do
  for s in "${sizes[@]}"; do
    find "$src/$set/$s" -type f | sort > "$work/native-$set-$s.list"
    sed "s|^$src/$set|$work/fuse|" "$work/native-$set-$s.list" > "$work/fuse-$set-$s.list"
    sed "s|^$src/$set|/fanstore/$set|" "$work/native-$set-$s.list" > "$work/fs-$set-$s.list"
  done
done

can_drop=0
if sync && echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; then can_drop=1; fi
[ $can_drop = 1 ] || say "drop_caches is not permitted here: the cold rows are NOT cold (page cache kept)"
emit meta - - - - - drop_caches $can_drop

# reads.sh KIND SET THREADS SETUP: one line per size and pass kind, run natively or inside `fanstore run` (so
# one job serves every size). KIND: warm (PASSES passes, the median after the first reported), cold (drop caches, one pass),
# first (one pass, what the first epoch sees) then warm.
cat > "$work/reads.sh" <<EOF
#!/bin/sh
kind=\$1; set=\$2; t=\$3; setup=\$4; prefix=\$5
for s in ${sizes[*]}; do
  case \$kind in
    cold) sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; echo "\$setup \$s \$t cold \$($reader read 1 $work/\$prefix-\$set-\$s.list \$t)"
          echo "\$setup \$s \$t warm \$($reader read $passes $work/\$prefix-\$set-\$s.list \$t)" ;;
    first) echo "\$setup \$s \$t first \$($reader read 1 $work/\$prefix-\$set-\$s.list \$t)"
          echo "\$setup \$s \$t warm \$($reader read $passes $work/\$prefix-\$set-\$s.list \$t)" ;;
    warm) echo "\$setup \$s \$t warm \$($reader read $passes $work/\$prefix-\$set-\$s.list \$t)" ;;
  esac
done
EOF
chmod +x "$work/reads.sh"
# "SETUP SIZE THREADS PASS files N seconds S files_per_s F MB_per_s M" lines -> CSV
read_rows() { awk -v sec="$1" -v r="${2:-1}" '$5=="files" {printf "%s,%s,%s,%s,%s,%s,files_per_s,%s\n%s,%s,%s,%s,%s,%s,MB_per_s,%s\n", sec,$1,$2,r,$3,$4,$10, sec,$1,$2,r,$3,$4,$12}' >> "$csv"; }

# ---- 1. single node (Figure 3; LZ4: Figures 10-11) ----
mounts+=("$work/fuse"); mkdir -p "$work/fuse"
say "single node: native, bindfs, fanstore plain and LZ4, 1 and 2 reader threads"
for t in 1 2; do
  { if [ $can_drop = 1 ]; then "$work/reads.sh" cold rnd $t native native; else "$work/reads.sh" warm rnd $t native native; fi
    "$work/reads.sh" warm txt $t native-text native
    bindfs -o ro "$src/rnd" "$work/fuse"; "$work/reads.sh" warm rnd $t bindfs fuse; fusermount -u "$work/fuse"
    "$fs" run --ranks 1 --unpack eager --prefetch off --data "$work/rnd.fs" --local-dir "$work" -- \
      "$work/reads.sh" "$([ $can_drop = 1 ] && echo cold || echo warm)" rnd $t fanstore fs 2>>"$log" || echo "FAILED fanstore"
    "$fs" run --ranks 1 --prefetch off --cache-mb $(( mib * 8 )) --data "$work/txt.fs" --local-dir "$work" -- \
      "$work/reads.sh" first txt $t fanstore-lz4 fs 2>>"$log" || echo "FAILED fanstore-lz4"
  } | tee -a "$log" | read_rows single
done

# ---- 2. metadata: stat/s, os.walk + stat, ls -lR ----
tree_files=$(( (tree_train + tree_val) * 1000 ))
say "metadata: tree of $tree_files files in 2,002 directories"
"$py" "$repo/bench/paper/gen_files.py" tree "$work/tree/in1k" "$tree_train" "$tree_val"
"$fs" prep --input "$work/tree/in1k" --output "$work/tree.fs" --name in1k --partitions 16 --force >/dev/null
emit meta tree - - - - files "$tree_files"
find "$work/tree/in1k" -type f | sort > "$work/native-tree.list"
sed "s|^$work/tree/in1k|$work/fuse2|" "$work/native-tree.list" > "$work/fuse-tree.list"
sed "s|^$work/tree/in1k|/fanstore/in1k|" "$work/native-tree.list" > "$work/fs-tree.list"
cat > "$work/meta.sh" <<EOF
#!/bin/sh
setup=\$1; lists=\$2; root=\$3
echo "\$setup stat \$($reader stat 3 $work/\$lists-tree.list 1)"
echo "\$setup walk \$($py $repo/bench/paper/walk_stat.py \$root)"
t0=\$(date +%s.%N); n=\$(ls -lR \$root | wc -l); t1=\$(date +%s.%N)
echo "\$setup lslR lines \$n seconds \$(echo "\$t1 - \$t0" | bc)"
EOF
chmod +x "$work/meta.sh"
{ "$work/meta.sh" native native "$work/tree/in1k"
  mkdir -p "$work/fuse2"; mounts+=("$work/fuse2"); bindfs -o ro "$work/tree/in1k" "$work/fuse2"
  "$work/meta.sh" bindfs fuse "$work/fuse2"; fusermount -u "$work/fuse2"
  # The tree job: 2 ranks (all-gather of the whole namespace), reads on rank 0; stat/s against the rnd set.
  FANSTORE_VERBOSE=1 "$fs" run --ranks 2 --only-rank 0 --unpack lazy --prefetch off --data "$work/tree.fs" \
    --local-dir "$work" -- "$work/meta.sh" fanstore fs /fanstore/in1k 2> "$work/tree.err" || echo "FAILED tree job"
} | tee -a "$log" > "$work/meta.out"
cat "$work/tree.err" >> "$log"
awk '$2=="stat" && $3=="files" {print "metadata," $1 ",tree,1,1,-,stat_per_s," $8}
     $2=="walk" {print "metadata," $1 ",tree,1,1,-,walk_entries," $4; print "metadata," $1 ",tree,1,1,-,walk_per_s," $10}
     $2=="lslR" {print "metadata," $1 ",tree,1,1,-,lslR_lines," $4; print "metadata," $1 ",tree,1,1,-,lslR_seconds," $6}' \
  "$work/meta.out" >> "$csv"
# load phases of the tree job (model inputs): entries, table bytes, copy / all-gather / table build ms
sed -n 's/^fanstore rank \([0-9]*\): files=.* entries=\([0-9]*\) meta_bytes=\([0-9]*\) load_ms=\([0-9]*\) copy_ms=\([0-9]*\) gather_ms=\([0-9]*\) table_ms=\([0-9]*\).*/\1 \2 \3 \4 \5 \6 \7/p' \
  "$work/tree.err" | while read -r r e mb l c g tb; do
    for kv in entries:$e meta_bytes:$mb load_ms:$l copy_ms:$c gather_ms:$g table_ms:$tb; do
      emit load tree - 2 - "rank$r" "${kv%%:*}" "${kv#*:}"; done; done
# bytes of one rank's all-gather contribution (IndexCodec: 65 fixed bytes + the key per entry)
emit load tree - 2 - - gather_bytes_per_entry "$(find "$work/tree/in1k" | awk -v n=in1k '{k=length(n) + length($0) - length("'"$work/tree/in1k"'"); s+=65+k} END{printf "%.1f", s/NR}')"

# ---- 3. several nodes: 1, 2, 4 ranks, one network namespace each ----
say "several nodes: 1, 2, 4 ranks, each reading the whole dataset"
netns=1; p="fsp$$"
if ip netns add "$p-br" 2>/dev/null; then
  namespaces+=("$p-br"); ip -n "$p-br" link add br0 type bridge; ip -n "$p-br" link set br0 up
  for r in 0 1 2 3; do
    ip netns add "$p-r$r"; namespaces+=("$p-r$r"); ip -n "$p-r$r" link set lo up
    ip link add "v$p$r" type veth peer name "b$p$r"
    ip link set "v$p$r" netns "$p-r$r"; ip link set "b$p$r" netns "$p-br"
    ip -n "$p-br" link set "b$p$r" master br0; ip -n "$p-br" link set "b$p$r" up
    ip -n "$p-r$r" addr add "198.19.0.$((r + 1))/24" dev "v$p$r"; ip -n "$p-r$r" link set "v$p$r" up
  done
  say "namespaces $p-r0..3 on a bridge (198.19.0.1-4/24, veth links)"
else
  netns=0; say "ip netns is not permitted here: ranks talk over loopback (FALLBACK, the rows say so)"
fi
emit meta - - - - - netns $netns
# Data of its own: 32 groups, each with 1/32 of every size's files, so prep's contiguous, byte-balanced partitions
# hold every size in the same proportion and a rank's local share is the same for every size.
for s in "${mn_sizes[@]}"; do
  b=$(bytes_of "$s"); n=$(( mn_mib * 1048576 / b / 32 )); [ $n -gt 0 ] || n=1
  for grp in $(seq -w 0 31); do "$py" "$repo/bench/paper/gen_files.py" "$src/mn/g$grp/$s" "$n" "$b" random; done
  emit data mn "$s" - - - files $(( n * 32 ))
  find "$src/mn" -path "*/$s/*" -type f | sort | sed "s|^$src/mn|/fanstore/mn|" > "$work/fs-mn-$s.list"
done
"$fs" prep --input "$src/mn" --output "$work/mn.fs" --name mn --partitions 8 --force >/dev/null
in_ns() { local r=$1; shift; if [ $netns = 1 ]; then ip netns exec "$p-r$r" "$@"; else "$@"; fi; }
cat > "$work/mn.sh" <<EOF
#!/bin/sh
for s in ${mn_sizes[*]}; do
  echo "rank\$FANSTORE_RANK \$s 2 first \$($reader read 1 $work/fs-mn-\$s.list 2)"
  echo "rank\$FANSTORE_RANK \$s 2 warm \$($reader read $passes $work/fs-mn-\$s.list 2)"
done
EOF
chmod +x "$work/mn.sh"
mn_job() { # mn_job RANKS on|off: every rank reads the whole dataset; its logs in $work/mn$RANKS$SUFFIX-*
  local n=$1 mode=$2 sfx; sfx=$([ "$2" = on ] && echo -pull || echo ""); local -a jp=()
  rm -rf "$work/rdv"; mkdir -p "$work/rdv"
  for r in $(seq 0 $((n - 1))); do
    in_ns "$r" env PMI_RANK="$r" PMI_SIZE="$n" PMI_JOBID="$tag-mn$n$sfx" FANSTORE_VERBOSE=1 \
      "$fs" run --data "$work/mn.fs" --local-dir "$work/node$r" --rendezvous-dir "$work/rdv" --unpack eager \
      --prefetch "$mode" --cache-mb $(( mib * 8 )) --stats "$work/mn$n$sfx-stats.json" -- "$work/mn.sh" \
      > "$work/mn$n$sfx-$r.out" 2> "$work/mn$n$sfx-$r.err" &
    jp+=($!); pids+=($!)
  done
  local ok=1; for j in "${jp[@]}"; do wait "$j" || ok=0; done
  [ $ok = 1 ] || say "FAILED: a rank of the $n-rank job (--prefetch $mode) exited non-zero (see $log)"
  cat "$work"/mn$n$sfx-*.out "$work"/mn$n$sfx-*.err >> "$log"
  cat "$work"/mn$n$sfx-*.out | read_rows "multinode$sfx" "$n"
}
for n in 1 2 4; do
  mn_job "$n" off
  # where remote opens spent their time (docs/stats.md, remote_open_stages_us; rank 0's launcher wrote it)
  "$py" - "$work/mn$n-stats.json" <<'PY' 2>>"$log" | while read -r k v; do emit stages mn all "$n" 2 first "$k" "$v"; done
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
print("remote_opens", t["open_latency_us"]["remote"]["count"])
print("remote_p50_us", t["open_latency_us"]["remote"]["p50"])
for k, v in t.get("remote_open_stages_us", {}).items():
    print(k + "_mean_us", v["mean"])
PY
  for r in $(seq 0 $((n - 1))); do
    sed -n 's/^fanstore rank [0-9]*: files=.* entries=\([0-9]*\) meta_bytes=\([0-9]*\) load_ms=\([0-9]*\) copy_ms=\([0-9]*\) gather_ms=\([0-9]*\) table_ms=\([0-9]*\).*/\1 \2 \3 \4 \5 \6/p' \
      "$work/mn$n-$r.err" | while read -r e mb l c g tb; do
        for kv in entries:$e meta_bytes:$mb load_ms:$l copy_ms:$c gather_ms:$g table_ms:$tb; do
          emit load mn - "$n" - "rank$r" "${kv%%:*}" "${kv#*:}"; done; done
    # local share: files in the partitions this rank holds (p % n == r) over all files, from the manifest
    emit multinode fanstore all "$n" 2 "rank$r" local_share "$(awk -v n="$n" -v r="$r" '$1=="partition"{t+=$6; if ($2 % n == r) l+=$6} END{printf "%.4f", l/t}' "$work/mn.fs/manifest.txt")"
  done
done
# The default, --prefetch on: each rank also pulls every partition it does not hold, readers ride those pulls
# (first pass), and warm passes read what has become local.
say "several nodes again with the default --prefetch on: 2 and 4 ranks"
for n in 2 4; do mn_job "$n" on; done
emit multinode fanstore all - - - netns $netns
# raw MPJ Send/Recv between two namespaces (RemoteFetchBench: raw and through RemoteFetcher)
say "MPJ Send/Recv between two namespaces"
cp_bench="$repo/bench/target/classes:$(ls "$repo"/bench/target/lib/*.jar | tr '\n' ':')/usr/share/java/mpj.jar"
host0=$([ $netns = 1 ] && echo 198.19.0.1 || echo 127.0.0.1)
rm -rf "$work/rdv"; mkdir -p "$work/rdv"
mpj=(java $("$repo/scripts/jvm-flags" runtime) -Xmx512m -Dbench.mib=$mpj_mib -Dbench.host=$host0 -cp "$cp_bench" org.fanstore.bench.RemoteFetchBench)
MPJ_HOME=/usr/share/mpj in_ns 1 timeout 300 "${mpj[@]}" 1 "$work/rdv" "$tag-mpj" $((512 << 10)) $((508 << 10)) > "$work/mpj1.out" 2>&1 &
mp=$!; pids+=($mp)
MPJ_HOME=/usr/share/mpj in_ns 0 timeout 300 "${mpj[@]}" 0 "$work/rdv" "$tag-mpj" $((512 << 10)) $((508 << 10)) > "$work/mpj0.out" 2>&1 || say "FAILED: MPJ benchmark"
wait $mp || true
cat "$work/mpj0.out" >> "$log"
awk '$2=="KiB" && $3 ~ /^[0-9.]+$/ {print "mpj,raw," $1 "K,2,1,-,MB_per_s," $3; print "mpj,fetch," $1 "K,2,1,-,MB_per_s," $4}' "$work/mpj0.out" >> "$csv"

# ---- 4. input pipeline: ImageFolder + DataLoader(num_workers=2) ----
njpeg=$(( jpeg_classes * jpeg_per ))
say "input pipeline: $njpeg JPEGs, ImageFolder + DataLoader(num_workers=2), 2 epochs"
"$py" "$repo/bench/paper/gen_files.py" jpeg "$work/jpeg/img" "$jpeg_classes" "$jpeg_per" "$jpeg_side"
"$fs" prep --input "$work/jpeg/img" --output "$work/img.fs" --name img --partitions 4 --force >/dev/null
emit pipeline - - - - - images "$njpeg"
{ "$py" "$repo/bench/paper/imagefolder_epochs.py" "$work/jpeg/img" 2 | sed 's/^/native /'
  mkdir -p "$work/fuse3"; mounts+=("$work/fuse3"); bindfs -o ro "$work/jpeg/img" "$work/fuse3"
  "$py" "$repo/bench/paper/imagefolder_epochs.py" "$work/fuse3" 2 | sed 's/^/bindfs /'; fusermount -u "$work/fuse3"
  "$fs" run --ranks 1 --data "$work/img.fs" --local-dir "$work" -- "$py" "$repo/bench/paper/imagefolder_epochs.py" /fanstore/img 2 \
    2>>"$log" | sed 's/^/fanstore /'
  if [ $can_drop = 1 ]; then sync; echo 3 > /proc/sys/vm/drop_caches
    "$py" "$repo/bench/paper/imagefolder_epochs.py" "$work/jpeg/img" 1 | sed 's/^/native-cold /'; fi
} | tee -a "$log" | awk '$2=="epoch" {print "pipeline," $1 ",jpeg,1,2," $3 ",samples_per_s," $9}' >> "$csv"

# ---- 5. JMH (hot Java paths) and the shim's per-call cost ----
say "JMH (runtime JVM flags) and the C shim micro-benchmark"
flags="$("$repo/scripts/jvm-flags" runtime)"
# shellcheck disable=SC2086
nice java $flags -cp "$cp_bench" org.openjdk.jmh.Main HotPathsBench "${jmh[@]}" -jvmArgsAppend "$flags" \
  -rf csv -rff "$out/jmh.csv" >> "$log" 2>&1 || say "FAILED: JMH"
awk -F, 'NR>1 {gsub(/"/,""); n=$1; sub(/.*\./,"",n); print "jmh,java," n ",1,1,-,ns_per_op," $5}' "$out/jmh.csv" >> "$csv"
FANSTORE_BENCH_CALLS=$shim_calls "$repo/interpose-native/tests/bench_shim.sh" > "$work/shim.out" 2>&1 || say "FAILED: shim bench"
cat "$work/shim.out" >> "$log"
awk '/^off-prefix/ {m=$2; sub(/\(.*/,"",m); print "shim,native,off-" m ",1,1,-,ns_per_call," $6; print "shim,shim,off-" m ",1,1,-,ns_per_call," $10}
     /^table entries/ {print "shim,native," $3 ",1,1,-,ns_per_call," $10; print "shim,shim," $3 ",1,1,-,ns_per_call," $15}
     /^fs_path_classify/ {print "shim,classify,off,1,1,-,ns_per_call," $5}' "$work/shim.out" >> "$csv"

echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
# ---- model, plots, journal ----
say "scaling model, plots, journal"
"$py" "$repo/bench/model/scaling.py" --csv "$csv" --out "$out" --plot "$repo/bench/plots/scaling-model.png" > "$out/model.md"
mkdir -p "$repo/bench/journal"
journal="$repo/bench/journal/$(date -u +%F)-run-paper$([ "$quick" = 1 ] && echo -quick)-$(git -C "$repo" rev-parse --short HEAD).md"
"$py" "$repo/bench/paper/report.py" "$out" "$repo/bench/plots" >> "$journal"
say "done: $out, bench/plots/, section written to ${journal#"$repo"/} ($(machine))"
echo "journal: ${journal#"$repo"/}"
