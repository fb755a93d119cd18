"""Outputs under stress, run INSIDE a job on every rank:
    fanstore run --ranks N --output-dir OUT -- python3 this.py NAME MANIFEST_DIR SEED [PROCS THREADS OPS]

Forked processes, each with threads, create, rewrite in place, replace (tmp + os.replace), rename over, link,
symlink, chmod, truncate and delete files and directories in random order under /fanstore/NAME/stress/r<rank>/,
while readers in every process (and on the other ranks) open random files and check every byte: a file named a*
is only ever written whole (tmp + os.replace), and its first 32 bytes are the SHA-256 of the rest. Meanwhile the
runtime drains to --output-dir. At the end each rank writes the manifest of its final subtree (path -> kind, mode,
size, sha256 or link target; fifos excluded) to MANIFEST_DIR/rank-<rank>.json, for the test to compare with the
output directory. Prints "stress rank R: N ops, M verified reads, K errors"; exits non-zero on any error.
"""
import hashlib
import json
import os
import random
import stat
import sys
import threading
import time

name, manifest_dir, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
procs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
threads = int(sys.argv[5]) if len(sys.argv) > 5 else 3
ops = int(sys.argv[6]) if len(sys.argv) > 6 else 150
rank = int(os.environ.get("FANSTORE_RANK", "0"))
size = int(os.environ.get("FANSTORE_SIZE", "1"))
base = os.path.join(os.environ.get("FANSTORE_MOUNT", "/fanstore"), name, "stress")
root = os.path.join(base, "r%d" % rank)


def body(rng):
    rest = rng.randbytes(rng.choice([0, 1, 100, 4096, 65536, 300000]))
    return hashlib.sha256(rest).digest() + rest


def verify(path):
    """1 when path read whole and checked, 0 when it vanished; raises on a bad byte."""
    try:
        f = open(path, "rb")
    except (FileNotFoundError, IsADirectoryError):
        return 0
    except OSError as e:
        raise AssertionError("open %s: %r" % (path, e))
    with f:
        try:
            data = f.read()
        except OSError as e:
            raise AssertionError("read %s: %r" % (path, e))
    if len(data) < 32 or hashlib.sha256(data[32:]).digest() != data[:32]:
        raise AssertionError("%s: %d bytes fail their checksum" % (path, len(data)))
    return 1


def worker(wdir, rng, counts, errors):
    os.makedirs(wdir, exist_ok=True)
    held = []
    for i in range(ops):
        try:
            names = os.listdir(wdir)
            files = [n for n in names if os.path.isfile(os.path.join(wdir, n)) and not n.startswith("l")]
            op = rng.randrange(12)
            target = os.path.join(wdir, "a%d" % rng.randrange(12))
            if op <= 2:                                   # replace whole: the checkpoint idiom
                tmp = os.path.join(wdir, ".tmp%d" % i)
                with open(tmp, "wb") as f:
                    f.write(body(rng))
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, target)
            elif op == 3:                                 # rewrite in place (scratch names)
                with open(os.path.join(wdir, "s%d" % rng.randrange(6)), "wb") as f:
                    f.write(rng.randbytes(rng.randrange(70000)))
            elif op == 4 and files:                       # rename over another name
                src = rng.choice(files)
                dst = ("a%d" if src.startswith("a") else "s%d") % rng.randrange(12)
                os.rename(os.path.join(wdir, src), os.path.join(wdir, dst))
            elif op == 5 and files:
                os.unlink(os.path.join(wdir, rng.choice(files)))
            elif op == 6:
                d = os.path.join(wdir, "d%d" % rng.randrange(3))
                os.makedirs(os.path.join(d, "e"), exist_ok=True)
                with open(os.path.join(d, "e", "a0"), "wb") as f:
                    f.write(body(rng))
            elif op == 7:                                 # rm -r of a directory tree
                d = os.path.join(wdir, "d%d" % rng.randrange(3))
                for top, dirs, fs in os.walk(d, topdown=False):
                    for n in fs:
                        os.unlink(os.path.join(top, n))
                    for n in dirs:
                        os.rmdir(os.path.join(top, n))
                if os.path.isdir(d):
                    os.rmdir(d)
            elif op == 8 and files:
                src = rng.choice(files)
                if src.startswith("a"):
                    link = os.path.join(wdir, "l%d" % rng.randrange(3))
                    if os.path.lexists(link):
                        os.unlink(link)
                    os.symlink(src, link) if rng.random() < 0.5 else os.link(os.path.join(wdir, src), link)
            elif op == 9 and files:
                os.chmod(os.path.join(wdir, rng.choice(files)), rng.choice([0o600, 0o640, 0o644, 0o755]))
            elif op == 10:                                # a file held open across later operations
                f = open(os.path.join(wdir, "s%d" % rng.randrange(6)), "ab")
                f.write(rng.randbytes(1000))
                held.append(f)
                if len(held) > 3:
                    held.pop(0).close()
            elif op == 11 and files:
                n = rng.choice(files)
                if n.startswith("a"):
                    counts[1] += verify(os.path.join(wdir, n))
                else:
                    os.truncate(os.path.join(wdir, n), rng.randrange(5000))
            counts[0] += 1
        except Exception as e:  # noqa: BLE001 - a worker's directory is its own: any failure is a finding
            errors.append("%s op %d: %r" % (wdir, i, e))
    for f in held:
        f.close()


def reader(dirs, rng, stop, counts, errors):
    while not stop.is_set():
        try:
            d = rng.choice(dirs)
            names = [n for n in os.listdir(d) if n.startswith("a")] if os.path.isdir(d) else []
            if names:
                counts[1] += verify(os.path.join(d, rng.choice(names)))
        except (FileNotFoundError, NotADirectoryError):
            pass
        except Exception as e:  # noqa: BLE001
            errors.append("reader: %r" % (e,))
        time.sleep(0.001)


def process(p):
    rng = random.Random(seed * 1000 + rank * 100 + p)
    counts, errors = [0, 0], []
    mine = [os.path.join(root, "p%dt%d" % (p, t)) for t in range(threads)]
    others = [os.path.join(base, "r%d" % r, "p%dt%d" % (q, t))
              for r in range(size) for q in range(procs) for t in range(threads)]
    stop = threading.Event()
    rd = threading.Thread(target=reader, args=(others, random.Random(rng.random()), stop, counts, errors))
    rd.start()
    ws = [threading.Thread(target=worker, args=(mine[t], random.Random(rng.random()), counts, errors))
          for t in range(threads)]
    for w in ws:
        w.start()
    for w in ws:
        w.join()
    stop.set()
    rd.join()
    with open(os.path.join(manifest_dir, "counts-%d-%d" % (rank, p)), "w") as f:
        json.dump({"ops": counts[0], "reads": counts[1], "errors": errors}, f)


def manifest():
    out = {}
    for top, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(top, n)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = {"kind": "link", "target": os.readlink(p)}
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = {"kind": "dir", "mode": stat.S_IMODE(st.st_mode)}
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
                out[rel] = {"kind": "file", "mode": stat.S_IMODE(st.st_mode), "size": st.st_size, "sha256": digest}
    return out


os.makedirs(root, exist_ok=True)
os.makedirs(os.path.join(root, "empty"), exist_ok=True)
children = []
for p in range(procs):
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            process(p)
            code = 0
        finally:
            os._exit(code)
    children.append(pid)
bad = sum(os.waitpid(pid, 0)[1] != 0 for pid in children)
total_ops = total_reads = 0
errors = []
for p in range(procs):
    with open(os.path.join(manifest_dir, "counts-%d-%d" % (rank, p))) as f:
        c = json.load(f)
    total_ops += c["ops"]
    total_reads += c["reads"]
    errors += c["errors"]
with open(os.path.join(manifest_dir, "rank-%d.json" % rank), "w") as f:
    json.dump(manifest(), f, indent=0, sort_keys=True)
for e in errors[:20]:
    print("ERROR", rank, e, flush=True)
print("stress rank %d: %d ops, %d verified reads, %d errors" % (rank, total_ops, total_reads, len(errors) + bad),
      flush=True)
sys.exit(1 if errors or bad else 0)
