"""Outputs behave like a local file system: real programs write under the mount as they would on a local disk.

Run INSIDE a job on every rank: fanstore run --ranks N --output-dir OUT -- /usr/bin/python3 this.py [NAME]
(NAME: the dataset, default ds; it must hold a.txt = "hello\\n", as OutputsLikeLocalFsTest preps it). Each rank
works under $FANSTORE_MOUNT/NAME/out/r<rank>/. Environment:
  E2E_SIDE  a directory OUTSIDE the mount: the ranks' flag files (the cross-rank case) and, at the end, each
            rank's manifest-r<rank>.json (its final tree; see manifest()). Default: a new temp directory.
  E2E_ROOT  run natively instead: the ranks' trees go under E2E_ROOT/r<rank> (a plain local directory), so the
            script can be checked against a real file system: E2E_ROOT=/tmp/x python3 e2e_outputs.py
  E2E_INPUT the dataset directory (inputs, read-only); default $FANSTORE_MOUNT/NAME, natively none (the case
            is skipped with a note unless it is given, e.g. a read-only bind mount holding a.txt).
Every case runs in its own forked child (a crash or hang of one, killed after E2E_CASE_TIMEOUT s, default 120,
fails that case only) and prints `ok <case>` or `FAIL <case>: <reason>`; the script exits non-zero at the end
if any failed. `this.py --manifest DIR OUT.json` writes DIR's manifest only (the test compares the output dir).
"""
import errno
import hashlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import traceback

RANK = int(os.environ.get("FANSTORE_RANK", "0"))
SIZE = int(os.environ.get("FANSTORE_SIZE", "1"))
NATIVE = "E2E_ROOT" in os.environ
NAME = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "ds"
MOUNT = os.environ.get("FANSTORE_MOUNT", "/fanstore")
ROOT = os.environ["E2E_ROOT"] if NATIVE else os.path.join(MOUNT, NAME, "out")
INPUT = os.environ.get("E2E_INPUT") or (None if NATIVE else os.path.join(MOUNT, NAME))
BASE = os.path.join(ROOT, "r%d" % RANK)
CASE_TIMEOUT = float(os.environ.get("E2E_CASE_TIMEOUT", "120"))
TMP_PREFIX = "e2etmp-"  # every temporary name the cases make; none may remain


class Fail(Exception):
    pass


def expect(what, expected, actual):
    if expected != actual:
        raise Fail("%s: expected %r, got %r" % (what, expected, actual))


def sha(data):
    return hashlib.sha256(data).hexdigest()


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data, mode=None):
    with open(path, "wb") as f:
        f.write(data)
    if mode is not None:
        os.chmod(path, mode)


def case_dir(name):
    d = os.path.join(BASE, name)
    os.makedirs(d, exist_ok=True)
    return d


def no_temp_names(d):
    left = [n for n in os.listdir(d) if n.startswith(TMP_PREFIX)]
    expect("temporary names left in " + d, [], left)


# ---------------------------------------------------------------------------------------------------------- cases

def case_h5py():
    import h5py
    import numpy as np
    p = os.path.join(case_dir("h5py"), "x.h5")
    data = np.arange(1000, dtype=np.float64).reshape(10, 100)
    with h5py.File(p, "w") as f:
        f.create_dataset("d", data=data)
    with h5py.File(p, "r") as f:
        expect("values read back", True, bool(np.array_equal(f["d"][...], data)))
    with h5py.File(p, "a") as f:
        f["d"].attrs["note"] = "appended"
    with h5py.File(p, "r") as f:
        expect("attribute appended with mode a", "appended", f["d"].attrs["note"])
        expect("values after append", True, bool(np.array_equal(f["d"][...], data)))


def case_sqlite():
    import sqlite3
    p = os.path.join(case_dir("sqlite"), "db.sqlite")
    c = sqlite3.connect(p)
    expect("journal_mode", "wal", c.execute("PRAGMA journal_mode=WAL").fetchone()[0])
    c.execute("CREATE TABLE t (i INTEGER PRIMARY KEY, s TEXT)")
    with c:
        c.executemany("INSERT INTO t VALUES (?, ?)", [(i, "row %d" % i) for i in range(1000)])
    c.close()
    c = sqlite3.connect(p)
    expect("rows after reopen", (1000, 499500), c.execute("SELECT count(*), sum(i) FROM t").fetchone())
    expect("journal_mode after reopen", "wal", c.execute("PRAGMA journal_mode").fetchone()[0])
    c.close()


def case_lmdb():
    import lmdb
    d = os.path.join(case_dir("lmdb"), "env")
    env = lmdb.open(d, map_size=16 << 20)
    with env.begin(write=True) as txn:
        for i in range(100):
            txn.put(b"key%03d" % i, b"value %d" % i * 10)
    env.close()
    env = lmdb.open(d, readonly=True, lock=True)
    with env.begin() as txn:
        got = {bytes(k): bytes(v) for k, v in txn.cursor()}
    env.close()
    expect("keys read back", {b"key%03d" % i: b"value %d" % i * 10 for i in range(100)}, got)


def case_tempfile():
    d = case_dir("tempfile")
    before = sorted(os.listdir(d))
    data = os.urandom(100000)
    with tempfile.TemporaryFile(dir=d, prefix=TMP_PREFIX) as f:
        f.write(data)
        f.seek(0)
        expect("TemporaryFile read back", sha(data), sha(f.read()))
        f.seek(1000)
        expect("TemporaryFile read after seek", data[1000:1010], f.read(10))
    fd, p = tempfile.mkstemp(dir=d, prefix=TMP_PREFIX)
    try:
        os.unlink(p)
        expect("mkstemp name after unlink", False, os.path.lexists(p))
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
        got = b""
        while len(got) < len(data):
            chunk = os.read(fd, len(data))
            if not chunk:
                break
            got += chunk
        expect("unlinked mkstemp file read back through its fd", sha(data), sha(got))
        expect("fstat size of the unlinked file", len(data), os.fstat(fd).st_size)
    finally:
        os.close(fd)
    expect("names in the directory", before, sorted(os.listdir(d)))
    no_temp_names(d)


def case_named_tempfile():
    d = case_dir("named")
    data = os.urandom(50000)
    f = tempfile.NamedTemporaryFile(dir=d, prefix="named-", delete=False)
    try:
        f.write(data)
        f.flush()
        expect("read by name while still open", sha(data), sha(read(f.name)))
    finally:
        f.close()
    expect("after close", sha(data), sha(read(f.name)))
    os.rename(f.name, os.path.join(d, "kept.bin"))  # a fixed name for the manifest check
    expect("names", ["kept.bin"], sorted(os.listdir(d)))


def case_memmap():
    import numpy as np
    p = os.path.join(case_dir("memmap"), "m.bin")
    m = np.memmap(p, dtype=np.uint8, mode="w+", shape=(1 << 20,))
    m[:] = (np.arange(1 << 20) * 7 % 251).astype(np.uint8)
    m.flush()
    a = np.fromfile(p, dtype=np.uint8)
    expect("np.fromfile size while the memmap is open", 1 << 20, a.size)
    expect("np.fromfile equals the memmap while it is open", True, bool(np.array_equal(a, m)))
    del m
    expect("size on disk", 1 << 20, os.stat(p).st_size)


SRC_TREE = None


def source_tree():
    """A small tree outside the mount: modes 0600/0755/0644, a subdirectory, a symlink, whole-second mtimes."""
    global SRC_TREE
    if SRC_TREE is None:
        s = tempfile.mkdtemp(prefix="e2e-src-")
        os.chmod(s, 0o755)
        write(os.path.join(s, "secret.txt"), b"only me\n", 0o600)
        write(os.path.join(s, "run.sh"), b"#!/bin/sh\necho run\n", 0o755)
        os.mkdir(os.path.join(s, "sub"), 0o750)
        os.chmod(os.path.join(s, "sub"), 0o750)
        write(os.path.join(s, "sub", "data.bin"), os.urandom(70000), 0o644)
        os.mkdir(os.path.join(s, "sub", "deeper"))
        write(os.path.join(s, "sub", "deeper", "z.txt"), b"z\n", 0o640)
        os.symlink("sub/data.bin", os.path.join(s, "link"))
        t = 1600000000
        for rel in ["secret.txt", "run.sh", "sub/data.bin", "sub/deeper/z.txt", "sub/deeper", "sub"]:
            t += 1000
            os.utime(os.path.join(s, rel), (t, t))
        SRC_TREE = s
    return SRC_TREE


def tree(root, mtimes=False):
    """{relative path: (type, mode, sha256 or link target[, mtime_ns])} of everything under root."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("symlink", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", oct(st.st_mode & 0o7777))
            else:
                out[rel] = ("file", oct(st.st_mode & 0o7777), sha(read(p))) + ((st.st_mtime_ns,) if mtimes else ())
    return out


def compare_trees(what, src, dst, mtimes=False):
    a, b = tree(src, mtimes), tree(dst, mtimes)
    if a != b:
        diff = ["%s: %s vs %s" % (k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        raise Fail("%s differs from the source: %s" % (what, "; ".join(diff)))


def case_rsync():
    src = source_tree()
    dst = os.path.join(BASE, "rsync")
    os.mkdir(dst)
    r = subprocess.run(["rsync", "-a", src + "/", dst + "/"], capture_output=True, text=True, timeout=60)
    expect("rsync -a exit status (stderr %r)" % r.stderr.strip(), 0, r.returncode)
    compare_trees("rsync -a copy", src, dst)
    no_temp_names(dst)


def case_cp_a():
    src = source_tree()
    dst = os.path.join(BASE, "cp")
    r = subprocess.run(["cp", "-a", src, dst], capture_output=True, text=True, timeout=60)
    expect("cp -a exit status (stderr %r)" % r.stderr.strip(), 0, r.returncode)
    compare_trees("cp -a copy (content, modes, mtimes)", src, dst, mtimes=True)


def case_subprocess_cwd():
    d = case_dir("subproc")
    write(os.path.join(d, "known_file"), b"known\n")
    r = subprocess.run(["sh", "-c", "pwd; ls; exit 7"], cwd=d, capture_output=True, text=True, timeout=60)
    expect("exit status of sh in cwd=%s (stderr %r)" % (d, r.stderr.strip()), 7, r.returncode)
    lines = r.stdout.splitlines()
    expect("pwd of the child", d, lines[0] if lines else None)
    expect("ls of the child", ["known_file"], lines[1:])
    old = os.getcwd()
    os.chdir(d)
    try:
        expect("os.getcwd() after chdir", d, os.getcwd())
        env = {k: v for k, v in os.environ.items() if k == "LD_PRELOAD" or k.startswith("FANSTORE_")}
        env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
        r = subprocess.run(["sh", "-c", "test -f known_file && exit 5"], env=env, capture_output=True, text=True,
                           timeout=60)
        expect("child with the job's variables sees known_file (stderr %r)" % r.stderr.strip(), 5, r.returncode)
        r = subprocess.run(["sh", "-c", "pwd -P && test -f known_file"], env={"PATH": "/usr/bin:/bin"},
                           capture_output=True, text=True, timeout=60)
        expect("child without LD_PRELOAD runs in the directory, sees the output (stdout %r stderr %r)"
               % (r.stdout.strip(), r.stderr.strip()), 0, r.returncode)
    finally:
        os.chdir(old)


def case_umask():
    d = case_dir("umask")
    old = os.umask(0o002)
    try:
        p = os.path.join(d, "f")
        os.close(os.open(p, os.O_WRONLY | os.O_CREAT, 0o666))
        expect("mode of a file made with 0666 under umask 002", oct(0o664), oct(os.stat(p).st_mode & 0o7777))
        q = os.path.join(d, "dir")
        os.mkdir(q, 0o777)
        expect("mode of a directory made with 0777 under umask 002", oct(0o775), oct(os.stat(q).st_mode & 0o7777))
    finally:
        os.umask(old)


def case_checkpoint_loop():
    d = case_dir("ckpt")
    tmp, final = os.path.join(d, "ckpt.tmp"), os.path.join(d, "ckpt.pt")
    last = None
    for i in range(20):
        data = os.urandom(256 << 10)
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
        last = sha(data)
        expect("round %d: ckpt.tmp after os.replace" % i, False, os.path.lexists(tmp))
        expect("round %d: ckpt.pt holds the bytes just written" % i, last, sha(read(final)))
    expect("names", ["ckpt.pt"], sorted(os.listdir(d)))


def case_mv_over():
    d = case_dir("mv")
    write(os.path.join(d, "old"), b"the old contents, longer than the new\n")
    write(os.path.join(d, "new"), b"new\n", 0o640)
    r = subprocess.run(["mv", os.path.join(d, "new"), os.path.join(d, "old")], capture_output=True, text=True,
                       timeout=60)
    expect("mv exit status (stderr %r)" % r.stderr.strip(), 0, r.returncode)
    expect("contents after mv over", b"new\n", read(os.path.join(d, "old")))
    expect("mode after mv over", oct(0o640), oct(os.stat(os.path.join(d, "old")).st_mode & 0o7777))
    expect("names", ["old"], sorted(os.listdir(d)))


def case_rm_r():
    d = case_dir("rm")
    t = os.path.join(d, "tree")
    os.makedirs(os.path.join(t, "a", "b", "c"))
    os.makedirs(os.path.join(t, "empty"))
    for rel in ["f1", "a/f2", "a/b/f3", "a/b/c/f4"]:
        write(os.path.join(t, rel), rel.encode() * 100)
    r = subprocess.run(["rm", "-r", t], capture_output=True, text=True, timeout=60)
    expect("rm -r exit status (stderr %r)" % r.stderr.strip(), 0, r.returncode)
    expect("tree exists after rm -r", False, os.path.lexists(t))
    expect("names left", [], os.listdir(d))


def case_empty_dir():
    d = os.path.join(BASE, "empty")
    os.mkdir(d)
    expect("is a directory", True, os.path.isdir(d))
    expect("entries", [], os.listdir(d))


def xattr_supported():
    d = tempfile.mkdtemp(prefix="e2e-xattr-")
    try:
        p = os.path.join(d, "probe")
        write(p, b"x")
        os.setxattr(p, "user.probe", b"1")
        return True
    except OSError as e:
        print("note: user xattrs unsupported on %s (%s): the xattr check is skipped" % (d, e), flush=True)
        return False
    finally:
        shutil.rmtree(d, ignore_errors=True)


def case_symlink():
    d = case_dir("symlink")
    write(os.path.join(d, "target.txt"), b"target contents\n")
    os.symlink("target.txt", os.path.join(d, "sym"))
    expect("readlink", "target.txt", os.readlink(os.path.join(d, "sym")))
    expect("lstat is a link", True, stat.S_ISLNK(os.lstat(os.path.join(d, "sym")).st_mode))
    expect("read through the symlink", b"target contents\n", read(os.path.join(d, "sym")))
    os.symlink("../symlink", os.path.join(d, "dirlink"))
    expect("listdir through a symlink to a directory", ["dirlink", "sym", "target.txt"],
           sorted(os.listdir(os.path.join(d, "dirlink"))))


def case_dirfd_walk():
    """os.fwalk walks by descriptors (openat, fstatat relative to a directory descriptor): a symlink to a directory,
    named by its absolute path under the mount (which only the shim can follow), is a directory there."""
    d = case_dir("fwalk")
    os.makedirs(os.path.join(d, "real", "sub"))
    write(os.path.join(d, "real", "sub", "f"), b"f")
    os.symlink(os.path.join(d, "real"), os.path.join(d, "abs-link"))
    os.symlink("real", os.path.join(d, "rel-link"))
    top = [(sorted(dirs), sorted(files)) for root, dirs, files, fd in os.fwalk(d) if root == d]
    expect("fwalk's top directory", [(["abs-link", "real", "rel-link"], [])], top)
    seen = sorted(os.path.relpath(root, d) for root, dirs, files, fd in os.fwalk(d, follow_symlinks=True))
    expect("fwalk with follow_symlinks", [".", "abs-link", "abs-link/sub", "real", "real/sub", "rel-link",
                                          "rel-link/sub"], seen)
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        expect("stat(dir_fd) through the absolute link", True, stat.S_ISDIR(os.stat("abs-link", dir_fd=fd).st_mode))
        expect("open(dir_fd) through the absolute link", b"f", read("/proc/self/fd/%d" % os.open(
            "abs-link/sub/f", os.O_RDONLY, dir_fd=fd)))
    finally:
        os.close(fd)


def case_scandir_inode():
    """scandir's entries agree with lstat (inode and type), also in a directory other ranks know of."""
    d = case_dir("scandir")
    os.mkdir(os.path.join(d, "dir"))
    write(os.path.join(d, "file"), b"x")
    os.symlink("dir", os.path.join(d, "link"))
    for e in os.scandir(d):
        st = os.lstat(e.path)
        expect("inode of " + e.name, st.st_ino, e.inode())
        expect("is_symlink of " + e.name, stat.S_ISLNK(st.st_mode), e.is_symlink())
        expect("is_dir of " + e.name, e.name != "file", e.is_dir())


def case_symlink_loops():
    """Links in a loop answer ELOOP (relative ones and absolute ones through the mount), as pathlib expects."""
    import pathlib
    d = case_dir("loops")
    os.symlink("rel/../rel", os.path.join(d, "rel"))
    os.symlink(os.path.join(d, "abs/../abs"), os.path.join(d, "abs"))
    os.symlink("self", os.path.join(d, "self"))
    for name in ["rel/foo", "abs/foo", "self", "abs"]:
        try:
            os.stat(os.path.join(d, name))
            raise Fail("stat %s: no error" % name)
        except OSError as e:
            expect("errno of stat " + name, errno.ELOOP, e.errno)
    try:
        pathlib.Path(d, "abs", "foo").resolve()
        raise Fail("resolve of a loop: no error")
    except RuntimeError:
        pass


def case_copytree_symlink_dir():
    """shutil.copytree of a tree holding an absolute symlink to one of its directories: followed, or kept."""
    d = case_dir("copytree")
    src = os.path.join(d, "src")
    os.makedirs(os.path.join(src, "real"))
    write(os.path.join(src, "real", "t.txt"), b"t")
    os.symlink(os.path.join(src, "real"), os.path.join(src, "link"))
    shutil.copytree(src, os.path.join(d, "followed"), symlinks=False)
    expect("followed: a directory", (False, ["t.txt"]), (os.path.islink(os.path.join(d, "followed", "link")),
                                                         os.listdir(os.path.join(d, "followed", "link"))))
    shutil.copytree(src, os.path.join(d, "kept"), symlinks=True)
    expect("kept: a link", True, os.path.islink(os.path.join(d, "kept", "link")))


def case_link_to_input():
    """A relative link from an output to an input file (outside the upper tree: only the shim can follow it);
    O_CREAT | O_EXCL on a dangling link is EEXIST and creates nothing."""
    d = case_dir("links")
    if INPUT is not None:
        rel = os.path.relpath(os.path.join(INPUT, "a.txt"), d)
        os.symlink(rel, os.path.join(d, "to-input"))
        expect("read through a link to an input", b"hello\n", read(os.path.join(d, "to-input")))
    os.symlink("missing", os.path.join(d, "dangling"))
    try:
        os.close(os.open(os.path.join(d, "dangling"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        raise Fail("O_EXCL through a dangling link: no error")
    except FileExistsError:
        pass
    expect("the dangling link's target", False, os.path.lexists(os.path.join(d, "missing")))


def case_hard_link():
    d = case_dir("hardlink")
    target = os.path.join(d, "target.txt")
    write(target, b"target contents\n")
    os.link(target, os.path.join(d, "hard"))
    st1, st2 = os.stat(target), os.stat(os.path.join(d, "hard"))
    expect("st_nlink after os.link", 2, st1.st_nlink)
    expect("same inode", (st1.st_dev, st1.st_ino), (st2.st_dev, st2.st_ino))
    with open(os.path.join(d, "hard"), "ab") as f:
        f.write(b"appended via the hard link\n")
    expect("write through the hard link seen by the other name", b"target contents\nappended via the hard link\n",
           read(target))


def case_mkfifo():
    d = case_dir("fifo")
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo, 0o600)
    expect("mkfifo makes a fifo", True, stat.S_ISFIFO(os.stat(fifo).st_mode))
    pid = os.fork()
    if pid == 0:
        try:
            with open(fifo, "wb") as w:
                w.write(b"through the fifo")
        finally:
            os._exit(0)
    with open(fifo, "rb") as r:
        got = r.read()
    os.waitpid(pid, 0)
    expect("bytes through the fifo", b"through the fifo", got)


def case_unix_socket():
    d = case_dir("sock")
    sp = os.path.join(d, "s")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(sp)
        s.listen(1)
        expect("bind makes a socket", True, stat.S_ISSOCK(os.stat(sp).st_mode))
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(sp)
        a, _ = s.accept()
        c.sendall(b"ping")
        expect("bytes through the socket", b"ping", a.recv(4))
        a.close()
        c.close()
    finally:
        s.close()
    os.unlink(sp)
    expect("socket after unlink", False, os.path.lexists(sp))
    expect("names", [], os.listdir(d))


def case_xattr():
    xf = os.path.join(case_dir("xattr"), "x.txt")
    write(xf, b"x")
    if xattr_supported():
        os.setxattr(xf, "user.x", b"value")
        expect("getxattr user.x", b"value", os.getxattr(xf, "user.x"))
        expect("listxattr has user.x", True, "user.x" in os.listxattr(xf))


def case_truncate():
    tf = os.path.join(case_dir("truncate"), "t.bin")
    data = os.urandom(100000)
    write(tf, data)
    os.truncate(tf, 1000)
    expect("size after os.truncate", 1000, os.stat(tf).st_size)
    expect("contents after os.truncate", data[:1000], read(tf))
    os.truncate(tf, 3000)
    expect("extended by os.truncate", data[:1000] + bytes(2000), read(tf))


def case_chmod_utime():
    d = case_dir("meta")
    cf = os.path.join(d, "f.txt")
    write(cf, b"c")
    os.chmod(cf, 0o604)
    expect("mode after os.chmod", oct(0o604), oct(os.stat(cf).st_mode & 0o7777))
    os.utime(cf, (1500000000, 1500000100))
    st = os.stat(cf)
    # The access time is the kernel's (relatime): any reader may move it after utime, here the drain copying the
    # published file to --output-dir, as a backup reader would on a local disk. The modification time is exact.
    expect("mtime after os.utime", 1500000100, int(st.st_mtime))
    expect("atime after os.utime is the one set or a later read's", True, int(st.st_atime) >= 1500000000)
    os.chmod(d, 0o751)
    expect("mode of a directory after os.chmod", oct(0o751), oct(os.stat(d).st_mode & 0o7777))


def case_inputs():
    if INPUT is None:
        print("note: inputs: no E2E_INPUT in native mode, skipped", flush=True)
        return
    a = os.path.join(INPUT, "a.txt")
    expect("input a.txt", b"hello\n", read(a))
    for what, flags in [("open O_WRONLY", os.O_WRONLY), ("open O_RDWR", os.O_RDWR),
                        ("open O_WRONLY|O_TRUNC", os.O_WRONLY | os.O_TRUNC),
                        ("open O_WRONLY|O_APPEND", os.O_WRONLY | os.O_APPEND)]:
        try:
            os.close(os.open(a, flags))
            raise Fail("%s of an input succeeded" % what)
        except OSError as e:
            expect("errno of %s of an input" % what, "EROFS", errno.errorcode.get(e.errno))
    try:
        os.close(os.open(a, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        raise Fail("O_CREAT|O_EXCL with an input's name succeeded")
    except OSError as e:
        if e.errno not in (errno.EEXIST, errno.EROFS):
            raise Fail("O_CREAT|O_EXCL with an input's name: %s" % errno.errorcode.get(e.errno))
    try:
        os.close(os.open(a, os.O_WRONLY | os.O_CREAT, 0o644))
        raise Fail("O_CREAT with an input's name succeeded")
    except OSError as e:
        expect("errno of O_CREAT with an input's name", "EROFS", errno.errorcode.get(e.errno))
    expect("input a.txt unchanged", b"hello\n", read(a))


def flag(n):
    return os.path.join(SIDE, n)


def wait_flag(n, seconds=90):
    deadline = time.monotonic() + seconds
    while not os.path.exists(flag(n)):
        if time.monotonic() > deadline:
            raise Fail("gave up waiting %d s for the flag %s" % (seconds, n))
        time.sleep(0.05)
    return read(flag(n)).decode()


def raise_flag(n, text=""):
    with open(flag(n + ".tmp"), "w") as f:
        f.write(text)
    os.rename(flag(n + ".tmp"), flag(n))


def case_cross_rank():
    """Rank 0 writes and closes r0/shared/from0.bin then raises a flag outside the mount; rank 1 reads it by path."""
    if RANK == 0:
        data = hashlib.sha256(b"cross").digest() * 8192  # 256 KiB
        write(os.path.join(case_dir("shared"), "from0.bin"), data)
        raise_flag("r0-written", sha(data))
    elif RANK == 1:
        want = wait_flag("r0-written")
        if want == "failed":
            raise Fail("rank 0 could not write its file")
        expect("sha256 of rank 0's file read by path on rank 1", want,
               sha(read(os.path.join(ROOT, "r0", "shared", "from0.bin"))))


# ------------------------------------------------------------------------------------------------------- manifest

def manifest(root):
    """Sorted entries of root's tree: path, type, mode; size and sha256 for files (and mtime under cp/), target for
    symlinks; fifos and sockets are left out."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for n in sorted(dirnames + filenames):
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            e = {"path": rel}
            if stat.S_ISLNK(st.st_mode):
                e.update(type="symlink", target=os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                e.update(type="dir", mode=oct(st.st_mode & 0o7777))
            elif stat.S_ISREG(st.st_mode):
                e.update(type="file", mode=oct(st.st_mode & 0o7777), size=st.st_size, sha256=sha(read(p)))
                if rel.startswith("cp/"):
                    e["mtime"] = int(st.st_mtime)
            else:
                continue
            out.append(e)
    return sorted(out, key=lambda e: e["path"])


def write_manifest(root, path):
    entries = manifest(root)
    with open(path + ".tmp", "w") as f:  # one entry a line, so a test can diff them line by line
        f.write("[\n" + ",\n".join(json.dumps(e, sort_keys=True) for e in entries) + "\n]\n")
    os.replace(path + ".tmp", path)


# ----------------------------------------------------------------------------------------------------------- main

CASES = [
    ("cross-rank", case_cross_rank),
    ("h5py", case_h5py),
    ("sqlite-wal", case_sqlite),
    ("lmdb", case_lmdb),
    ("tempfile", case_tempfile),
    ("named-tempfile", case_named_tempfile),
    ("memmap", case_memmap),
    ("rsync", case_rsync),
    ("cp-a", case_cp_a),
    ("subprocess-cwd", case_subprocess_cwd),
    ("umask", case_umask),
    ("checkpoint-loop", case_checkpoint_loop),
    ("mv-over", case_mv_over),
    ("rm-r", case_rm_r),
    ("empty-dir", case_empty_dir),
    ("symlink", case_symlink),
    ("dirfd-walk", case_dirfd_walk),
    ("scandir-inode", case_scandir_inode),
    ("symlink-loops", case_symlink_loops),
    ("copytree-symlink-dir", case_copytree_symlink_dir),
    ("link-to-input", case_link_to_input),
    ("hard-link", case_hard_link),
    ("mkfifo", case_mkfifo),
    ("unix-socket", case_unix_socket),
    ("xattr", case_xattr),
    ("truncate", case_truncate),
    ("chmod-utime", case_chmod_utime),
    ("inputs", case_inputs),
]


def run_case(name, fn):
    """Runs fn in a forked child; returns None if it passed, else the reason."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code = 0
        try:
            fn()
            msg = b""
        except Fail as e:
            msg, code = str(e).encode(), 1
        except BaseException as e:  # noqa: B902 - any error is the case's failure
            tb = traceback.extract_tb(e.__traceback__)
            where = "%s:%d" % (os.path.basename(tb[-1].filename), tb[-1].lineno) if tb else "?"
            msg, code = ("%s: %s (at %s)" % (type(e).__name__, e, where)).encode(), 1
        try:
            os.write(w, msg[:4000])
        finally:
            sys.stdout.flush()
            os._exit(code)
    os.close(w)
    deadline = time.monotonic() + CASE_TIMEOUT
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(r)
            return "still running after %.0f s, killed" % CASE_TIMEOUT
        time.sleep(0.02)
    msg = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        msg += chunk
    os.close(r)
    if os.WIFSIGNALED(status):
        return "killed by signal %d %s" % (os.WTERMSIG(status), msg.decode(errors="replace"))
    if os.WEXITSTATUS(status) != 0:
        return msg.decode(errors="replace") or "exit status %d" % os.WEXITSTATUS(status)
    return None


def main():
    global SIDE
    if len(sys.argv) == 4 and sys.argv[1] == "--manifest":
        write_manifest(sys.argv[2], sys.argv[3])
        return 0
    SIDE = os.environ.get("E2E_SIDE") or tempfile.mkdtemp(prefix="e2e-side-")
    print("e2e_outputs: rank %d of %d, tree %s%s" % (RANK, SIZE, BASE, " (native)" if NATIVE else ""), flush=True)
    os.makedirs(BASE)
    source_tree()  # outside the mount, before the forks, so rsync and cp copy the same tree and it is removed
    failed = []
    ran = 0
    for name, fn in CASES:
        if name == "cross-rank" and SIZE < 2:
            continue
        if name == "cross-rank" and RANK == 1:
            continue  # rank 1 reads last, after its own cases, so rank 0 has had time to write
        why = run_case(name, fn)
        ran += 1
        if name == "cross-rank" and why is not None:
            raise_flag("r0-written", "failed")  # rank 1 need not wait
        if why is None:
            print("ok %s" % name, flush=True)
        else:
            print("FAIL %s: %s" % (name, why.replace("\n", " | ")), flush=True)
            failed.append(name)
    if SIZE >= 2 and RANK == 1:
        why = run_case("cross-rank", case_cross_rank)
        ran += 1
        raise_flag("r1-read")  # rank 0 waits for it before its manifest
        print("ok cross-rank" if why is None else "FAIL cross-rank: %s" % why, flush=True)
        if why is not None:
            failed.append("cross-rank")
    if SIZE >= 2 and RANK == 0:
        try:
            wait_flag("r1-read", 300)
        except Fail as e:
            print("note: %s" % e, flush=True)
    if SRC_TREE:
        shutil.rmtree(SRC_TREE, ignore_errors=True)
    try:
        write_manifest(BASE, os.path.join(SIDE, "manifest-r%d.json" % RANK))
    except Exception as e:  # noqa: B902
        print("FAIL manifest: %s: %s" % (type(e).__name__, e), flush=True)
        failed.append("manifest")
    print("e2e_outputs rank %d: %d ok, %d failed%s" % (RANK, ran - len(failed), len(failed),
                                                      (" (" + " ".join(failed) + ")") if failed else ""), flush=True)
    return 1 if failed else 0


SIDE = None
if __name__ == "__main__":
    sys.exit(main())
