"""Two ranks race for names, run INSIDE a job:
fanstore run --ranks 2 --output-dir OUT -- python3 this.py SYNC N SEED [MODE].

Rank 1 writes files (open, write, close) in a random order while rank 0, in another random order:
- MODE mkdir (default): makes directories of the same names (race/nNNN). One side wins each name: a file whose
  close returned 0 is a file with its bytes on both ranks (and the mkdir failed with EEXIST); a directory whose
  mkdir returned 0 is a directory on both ranks (and the file's open or close failed).
- MODE rmdir: removes the directories (race/nNNN, made by rank 0 first) the files are written in (race/nNNN/f).
  A file whose close returned 0 is there on both ranks (and the rmdir failed with ENOTEMPTY); a directory whose
  rmdir returned 0 is gone on both ranks (and the file's open or close failed).
- MODE subdir: the same directories; rank 1 makes a directory in each (race/nNNN/sub) instead of a file. A mkdir
  that returned 0 is there on both ranks (and the rmdir failed); an rmdir that returned 0 left nothing of the name.
- MODE rename: the same directories; rank 1 writes race/tNNN and renames it to race/nNNN/ckpt (the checkpoint
  idiom). A rename that returned 0 left the file at its new name only, on both ranks (and the rmdir failed); an
  rmdir that returned 0 made the rename fail, and the file is still at its first name on both ranks.
Each rank writes what it did and what it sees to SYNC/rank-R.txt; rank 0 compares and prints
"names N files F dirs D disagreements X" and the first few.
"""
import errno
import functools
import os
import random
import sys

import e2e_flags

sync, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
mode = sys.argv[4] if len(sys.argv) > 4 else "mkdir"
rank = int(os.environ["FANSTORE_RANK"])
base = "/fanstore/race"


mark = functools.partial(e2e_flags.mark, sync)
wait = functools.partial(e2e_flags.wait, sync, seconds=120, rank=rank)


def name(i):
    return "%s/n%03d" % (base, i)


def file_of(i):
    return name(i) if mode == "mkdir" else name(i) + {"rmdir": "/f", "subdir": "/sub", "rename": "/ckpt"}[mode]


def tmp_of(i):
    return "%s/t%03d" % (base, i)


def body(i):
    return ("name %d written by rank 1\n" % i) * 100


os.makedirs(base, exist_ok=True)
if mode != "mkdir" and rank == 0:
    for i in range(n):
        os.mkdir(name(i))
mark("ready-%d" % rank)
wait("ready-%d" % (1 - rank))
order = list(range(n))
random.Random(seed * 2 + rank).shuffle(order)
did = {}
for i in order:
    if rank == 1 and mode == "subdir":
        try:
            os.mkdir(file_of(i))
            did[i] = "file-ok"
        except OSError as e:
            did[i] = "mkdir-" + errno.errorcode.get(e.errno, str(e.errno))
    elif rank == 1:
        try:
            f = open(file_of(i) if mode != "rename" else tmp_of(i), "w")
        except OSError as e:
            did[i] = "open-" + errno.errorcode.get(e.errno, str(e.errno))
            continue
        f.write(body(i))
        try:
            f.close()
            did[i] = "file-ok"
        except OSError as e:
            did[i] = "close-" + errno.errorcode.get(e.errno, str(e.errno))
            continue
        if mode == "rename":
            try:
                os.rename(tmp_of(i), file_of(i))
            except OSError as e:
                did[i] = "rename-" + errno.errorcode.get(e.errno, str(e.errno))
    else:
        try:
            (os.mkdir if mode == "mkdir" else os.rmdir)(name(i))
            did[i] = "dir-ok"
        except OSError as e:
            did[i] = ("mkdir" if mode == "mkdir" else "rmdir") + "-" + errno.errorcode.get(e.errno, str(e.errno))
mark("done-%d" % rank)
wait("done-%d" % (1 - rank))


def seen_at(p, i):
    if mode == "mkdir" and os.path.isdir(p):
        return "dir"
    try:
        with open(p) as f:
            return "file" if f.read() == body(i) else "file-wrong"
    except OSError as e:
        return "none-" + errno.errorcode.get(e.errno, str(e.errno))


def seen(i):
    if mode == "subdir":
        return "file" if os.path.isdir(file_of(i)) else "none-" + ("dir" if os.path.exists(name(i)) else "ENOENT")
    return seen_at(file_of(i), i) + ("/" + seen_at(tmp_of(i), i) if mode == "rename" else "")


with open(os.path.join(sync, "rank-%d.tmp" % rank), "w") as out:
    for i in range(n):
        out.write("%d %s %s\n" % (i, did[i], seen(i)))
os.rename(os.path.join(sync, "rank-%d.tmp" % rank), os.path.join(sync, "rank-%d.txt" % rank))
if rank == 0:
    wait("rank-1.txt")
    rows = {}
    for r in (0, 1):
        with open(os.path.join(sync, "rank-%d.txt" % r)) as f:
            for line in f:
                i, d, s = line.split()
                rows.setdefault(int(i), {})[r] = (d, s)
    bad = []
    for i in range(n):
        (d0, s0), (d1, s1) = rows[i][0], rows[i][1]
        lost, gone = ("mkdir-EEXIST", "dir") if mode == "mkdir" else ("rmdir-ENOTEMPTY", "none-ENOENT")
        won = "file" + ("/none-ENOENT" if mode == "rename" else "")
        gone += "/file" if mode == "rename" else ""
        ok = s0 == s1 and ((d1 == "file-ok" and d0 == lost and s0 == won)
                           or (d0 == "dir-ok" and d1 != "file-ok" and s0 == gone))
        if not ok:
            bad.append("n%03d rank0 %s sees %s / rank1 %s sees %s" % (i, d0, s0, d1, s1))
    files = sum(1 for i in range(n) if rows[i][1][0] == "file-ok")
    print("names %d files %d dirs %d disagreements %d" % (n, files, n - files, len(bad)), flush=True)
    for b in bad[:10]:
        print("  " + b, flush=True)
