"""Checks that files under the mount read exactly like their source copies through every call a slice descriptor
must window or materialise (docs/slices.md). Run under the shim: slice_checks.py MOUNT_DIR SOURCE_DIR [--expect-slices]
with the same relative file names below both. Prints "PASS name" / "FAIL name: why" and a final "N passed, N failed";
exits 1 on any failure. --expect-slices also requires that plain opens are slices (their descriptor names a partition
copy, *.fsp), so a shim that silently fell back to whole files does not pass."""
import hashlib
import mmap
import os
import shutil
import subprocess
import sys
import tempfile
import threading

mount, source = sys.argv[1], sys.argv[2]
expect_slices = "--expect-slices" in sys.argv
names = sorted(os.path.relpath(os.path.join(d, f), source) for d, _, fs in os.walk(source) for f in fs
               if not os.path.islink(os.path.join(d, f)))
results = {"passed": 0, "failed": 0}


def check(label, ok, why=""):
    results["passed" if ok else "failed"] += 1
    print(("PASS " if ok else "FAIL ") + label + ("" if ok else ": " + why), flush=True)


def src_bytes(name):
    with open(os.path.join(source, name), "rb", buffering=0) as f:
        return f.read()


def each(label, fn):
    """fn(name, path, want) -> None or a failure reason; one result per label over all files."""
    for name in names:
        try:
            why = fn(name, os.path.join(mount, name), src_bytes(name))
        except Exception as e:  # noqa: BLE001 - any error is this check's failure, named
            why = "%s: %r" % (name, e)
        if why:
            check(label, False, "%s: %s" % (name, why))
            return
    check(label, True)


def plain(name, path, want):
    fd = os.open(path, os.O_RDONLY)
    try:
        if expect_slices and os.path.getsize(os.path.join(source, name)) > 0:
            target = os.readlink("/proc/self/fd/%d" % fd)
            if not target.endswith(".fsp"):
                return "descriptor is not a slice of a partition copy: " + target
        got = b""
        while True:
            chunk = os.read(fd, 7777)
            if not chunk:
                break
            got += chunk
        if got != want:
            return "read() gave %d bytes, want %d (or other bytes)" % (len(got), len(want))
        if os.read(fd, 10) != b"":
            return "read past the end returned bytes"
        st, pst = os.fstat(fd), os.stat(path)
        if st.st_size != len(want) or st.st_ino != pst.st_ino:
            return "fstat size/ino %d/%d vs stat %d/%d" % (st.st_size, st.st_ino, pst.st_size, pst.st_ino)
    finally:
        os.close(fd)


def positioned(name, path, want):
    n = len(want)
    fd = os.open(path, os.O_RDONLY)
    try:
        for off in (0, 1, n // 2, max(0, n - 1), n, n + 5, 1 << 40):
            if os.pread(fd, 4096, off) != want[off:off + 4096]:
                return "pread at %d" % off
        if os.lseek(fd, 0, os.SEEK_END) != n or os.read(fd, 1) != b"":
            return "SEEK_END"
        if os.lseek(fd, -min(n, 3), os.SEEK_END) != n - min(n, 3) or os.read(fd, 10) != want[n - min(n, 3):]:
            return "SEEK_END - 3 then read"
        os.lseek(fd, n // 3, os.SEEK_SET)
        if os.lseek(fd, 0, os.SEEK_CUR) != n // 3 or os.read(fd, 100) != want[n // 3:n // 3 + 100]:
            return "SEEK_SET/SEEK_CUR"
        if n > 0 and (os.lseek(fd, 0, os.SEEK_DATA) != 0 or os.lseek(fd, 0, os.SEEK_HOLE) != n):
            return "SEEK_DATA/SEEK_HOLE"
        try:
            os.lseek(fd, -1, os.SEEK_SET)
            return "negative seek accepted"
        except OSError:
            pass
        a, b = bytearray(1000), bytearray(max(1, n))
        os.lseek(fd, 10, os.SEEK_SET)
        got = os.readv(fd, [a, b])
        if bytes(a + b)[:got] != want[10:10 + got] or got != max(0, min(n - 10, 1000 + len(b))):
            return "readv gave %d" % got
        got = os.preadv(fd, [a, b], 5)
        if bytes(a + b)[:got] != want[5:5 + got] or got != max(0, min(n - 5, 1000 + len(b))):
            return "preadv gave %d" % got
    finally:
        os.close(fd)


def python_file(name, path, want):
    with open(path, "rb") as f:
        if f.read() != want:
            return "open().read()"
        f.seek(0)
        buf = bytearray(len(want) + 10)
        if f.readinto(buf) != len(want) or bytes(buf[:len(want)]) != want:
            return "readinto"
        f.seek(len(want) // 2)
        if f.tell() != len(want) // 2 or f.read() != want[len(want) // 2:]:
            return "seek/tell"


def copies(name, path, want):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "copy")
        shutil.copyfile(path, out)            # sendfile or copy_file_range
        if open(out, "rb").read() != want:
            return "shutil.copyfile"
        fd, ofd = os.open(path, os.O_RDONLY), os.open(out, os.O_WRONLY | os.O_TRUNC)
        try:
            os.lseek(fd, 3, os.SEEK_SET)
            total = 0
            while True:
                k = os.sendfile(ofd, fd, None, 1 << 20)
                if k == 0:
                    break
                total += k
            if os.lseek(fd, 0, os.SEEK_CUR) != max(3, len(want)) and len(want) >= 3:
                return "sendfile did not move the position"
            if open(out, "rb").read() != want[3:]:
                return "sendfile from the position"
            os.ftruncate(ofd, 0)
            os.lseek(ofd, 0, os.SEEK_SET)
            try:
                k = os.copy_file_range(fd, ofd, 1 << 30, 1)
            except OSError as e:   # EXDEV: a file the runtime materialised on tmpfs; the kernel refuses, as natively
                if e.errno != 18:
                    raise
                k = None
            os.close(ofd)
            ofd = -1
            if k is not None and (open(out, "rb").read() != want[1:1 + k] or k != max(0, len(want) - 1)):
                return "copy_file_range at offset 1 gave %d" % k
            r, w = os.pipe()
            try:
                k = os.splice(fd, w, 64, 2) if len(want) > 2 else 0
                if k and os.read(r, 64) != want[2:2 + k]:
                    return "splice"
            finally:
                os.close(r)
                os.close(w)
        finally:
            os.close(fd)
            if ofd >= 0:
                os.close(ofd)


def mapped(name, path, want):
    if not want:
        return None
    with open(path, "rb") as f:
        f.seek(len(want) // 2)
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            if m[:] != want:
                return "mmap of the whole file"
        if f.tell() != len(want) // 2 or f.read() != want[len(want) // 2:]:
            return "position after mmap"
        if os.fstat(f.fileno()).st_ino != os.stat(path).st_ino:
            return "fstat after mmap"


def stdio(name, path, want):
    try:
        import numpy as np
    except ImportError:
        return "numpy missing (install python3-numpy)"
    with open(path, "rb") as f:
        start = min(1, len(want))
        f.seek(start)
        got = np.fromfile(f, dtype=np.uint8)     # dup + fdopen + fread
        if got.tobytes() != want[start:]:
            return "np.fromfile after seek(1)"


def proc_reopen(name, path, want):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.lseek(fd, len(want) // 2, os.SEEK_SET)
        with open("/proc/self/fd/%d" % fd, "rb") as g:
            if g.read() != want:
                return "/proc/self/fd reopen"
    finally:
        os.close(fd)


def shared_position(name, path, want):
    if len(want) < 20:
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        d = os.dup(fd)
        if os.read(fd, 5) + os.read(d, 5) != want[:10]:
            return "dup does not share the position"
        os.close(d)
        pid = os.fork()
        if pid == 0:
            os._exit(0 if os.read(fd, 10) == want[10:20] else 1)
        _, status = os.waitpid(pid, 0)
        if status != 0 or os.lseek(fd, 0, os.SEEK_CUR) != 20:
            return "fork child did not read on from the shared position"
    finally:
        os.close(fd)


def inherited(name, path, want):
    """An exec'd image inherits the slice: it must see the window from the same position, not the partition."""
    h = hashlib.sha256(want[len(want) // 2:]).hexdigest()
    for how in ("subprocess", "posix_spawn", "shell"):
        with open(path, "rb", buffering=0) as f:
            f.seek(len(want) // 2)
            if how == "subprocess":     # fork or vfork, dup2 onto 0, exec (Python's default path)
                out = subprocess.run(["sha256sum"], stdin=f, capture_output=True, check=True).stdout
            elif how == "posix_spawn":  # close_fds=False: CPython may use posix_spawn with a dup2 file action
                out = subprocess.run(["sha256sum"], stdin=f, capture_output=True, check=True,
                                     close_fds=False).stdout
            else:                       # the shell opens it (a slice in bash), dup2s it onto 0, forks and execs
                out = subprocess.run(["bash", "-c", "exec 3<\"$1\"; sha256sum <&3", "x", path],
                                     capture_output=True, check=True).stdout
                h = hashlib.sha256(want).hexdigest()
            if out.split()[0].decode() != h:
                return how + ": the exec'd image read other bytes"


def threads_one_fd(name, path, want):
    if len(want) < 4096:
        return None
    fd = os.open(path, os.O_RDONLY)
    bad = []

    def reader():
        while True:
            chunk = os.read(fd, 1000)
            if not chunk:
                return
            if want.find(chunk) < 0:
                bad.append(len(chunk))

    try:
        ts = [threading.Thread(target=reader) for _ in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        os.close(fd)
    if bad:
        return "%d chunks are not bytes of the file (read outside the window)" % len(bad)


def tools(name, path, want):
    h = hashlib.sha256(want).hexdigest()
    for cmd in (["sha256sum", path], ["bash", "-c", "cat \"$1\" | sha256sum", "x", path],
                ["bash", "-c", "sha256sum < \"$1\"", "x", path]):
        out = subprocess.run(cmd, capture_output=True, check=True).stdout
        if out.split()[0].decode() != h:
            return " ".join(cmd[:2]) + " gave another digest"
    out = subprocess.run(["tail", "-c", "100", path], capture_output=True, check=True).stdout
    if out != want[-100:]:
        return "tail -c 100"
    out = subprocess.run(["dd", "if=" + path, "bs=1000", "skip=1", "status=none"], capture_output=True,
                         check=True).stdout
    if out != want[1000:]:
        return "dd skip=1"
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["cp", path, tmp + "/c"], check=True)
        if open(tmp + "/c", "rb").read() != want:
            return "cp"


for label, fn in (("read/fstat", plain), ("pread/lseek/readv/preadv", positioned), ("python file", python_file),
                  ("sendfile/copy_file_range/splice", copies), ("mmap", mapped), ("fdopen+fread (numpy)", stdio),
                  ("/proc/self/fd reopen", proc_reopen), ("dup/fork position", shared_position),
                  ("exec inherits the window", inherited), ("threads on one fd", threads_one_fd),
                  ("coreutils", tools)):
    each(label, fn)
print("%d passed, %d failed" % (results["passed"], results["failed"]))
sys.exit(1 if results["failed"] else 0)
