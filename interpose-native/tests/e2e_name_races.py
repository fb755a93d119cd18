"""A file and a directory of the same name made at once on two ranks, run INSIDE a job:
fanstore run --ranks 2 --output-dir OUT -- python3 this.py SYNC N SEED.

Rank 1 writes files race/nNNN (open, write, close) in a random order while rank 0 makes directories of the same
names in another random order. Exactly one of the two may win each name, and what a caller was told must be what
every rank then sees: a file whose close returned 0 is a file with its bytes on both ranks (and rank 0's mkdir of it
failed with EEXIST); a directory whose mkdir returned 0 is a directory on both ranks (and rank 1's open or close
failed). Each rank writes what it did and what it sees to SYNC/rank-R.txt; rank 0 compares and prints
"names N disagreements D" and the first few.
"""
import errno
import os
import random
import sys
import time

sync, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rank = int(os.environ["FANSTORE_RANK"])
base = "/fanstore/race"


def mark(flag):
    open(os.path.join(sync, flag), "w").close()


def wait(flag, seconds=120):
    deadline = time.monotonic() + seconds
    while not os.path.exists(os.path.join(sync, flag)):
        if time.monotonic() > deadline:
            raise SystemExit("rank %d: gave up waiting for %s" % (rank, flag))
        time.sleep(0.02)


def name(i):
    return "%s/n%03d" % (base, i)


def body(i):
    return ("name %d written by rank 1\n" % i) * 100


os.makedirs(base, exist_ok=True)
mark("ready-%d" % rank)
wait("ready-%d" % (1 - rank))
order = list(range(n))
random.Random(seed * 2 + rank).shuffle(order)
did = {}
for i in order:
    if rank == 1:
        try:
            f = open(name(i), "w")
        except OSError as e:
            did[i] = "open-" + errno.errorcode.get(e.errno, str(e.errno))
            continue
        f.write(body(i))
        try:
            f.close()
            did[i] = "file-ok"
        except OSError as e:
            did[i] = "close-" + errno.errorcode.get(e.errno, str(e.errno))
    else:
        try:
            os.mkdir(name(i))
            did[i] = "dir-ok"
        except OSError as e:
            did[i] = "mkdir-" + errno.errorcode.get(e.errno, str(e.errno))
mark("done-%d" % rank)
wait("done-%d" % (1 - rank))


def seen(i):
    p = name(i)
    if os.path.isdir(p):
        return "dir"
    try:
        with open(p) as f:
            return "file" if f.read() == body(i) else "file-wrong"
    except OSError as e:
        return "none-" + errno.errorcode.get(e.errno, str(e.errno))


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
        ok = s0 == s1 and ((d1 == "file-ok" and d0 == "mkdir-EEXIST" and s0 == "file")
                           or (d0 == "dir-ok" and d1 != "file-ok" and s0 == "dir"))
        if not ok:
            bad.append("n%03d rank0 %s sees %s / rank1 %s sees %s" % (i, d0, s0, d1, s1))
    files = sum(1 for i in range(n) if rows[i][1][0] == "file-ok")
    print("names %d files %d dirs %d disagreements %d" % (n, files, n - files, len(bad)), flush=True)
    for b in bad[:10]:
        print("  " + b, flush=True)
