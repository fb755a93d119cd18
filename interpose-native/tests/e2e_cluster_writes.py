"""Writes across two ranks, run INSIDE a job: fanstore run --ranks 2 --output-dir OUT -- python3 this.py NAME SYNC.

Every rank runs it; FANSTORE_RANK says which side it plays. SYNC is a directory outside the mount the two ranks
use to take turns (flag files). Prints PASS/FAIL lines and "N passed, M failed"; exits non-zero on a failure.
Rank 0 writes a file and holds it open while rank 1 checks it is invisible, then closes it (rank 1 must see it at
once), saves a torch checkpoint with the mkstemp + os.replace idiom, creates an O_EXCL file; rank 1 loads the
checkpoint, sees O_EXCL refused, and writes a numpy array and a shutil.copy that rank 0 reads back. A writer on
rank 0 killed mid-file leaves what it wrote (its node's outputs behave like a local disk).
"""
import errno
import functools
import hashlib
import os
import shutil
import sys
import tempfile
import time

import e2e_flags

name, sync = sys.argv[1], sys.argv[2]
rank = int(os.environ["FANSTORE_RANK"])
mount = os.path.join(os.environ["FANSTORE_MOUNT"], name)
out = os.path.join(mount, "out")
passed = failed = 0


def check(label, expected, actual):
    global passed, failed
    if expected == actual:
        passed += 1
        print("PASS", rank, label, flush=True)
    else:
        failed += 1
        print("FAIL", rank, label, "expected", repr(expected), "actual", repr(actual), flush=True)


signal = functools.partial(e2e_flags.mark, sync)
wait = functools.partial(e2e_flags.wait, sync, rank=rank)


payload = hashlib.sha256(b"fanstore").digest() * 40000  # 1.28 MB: several fetch messages

if rank == 0:
    os.makedirs(out, exist_ok=True)
    signal("dir")
    f = open(os.path.join(out, "a.bin"), "wb")
    f.write(payload)
    f.flush()
    signal("written")
    wait("checked-invisible")
    f.close()
    signal("closed")

    import torch
    t = torch.arange(0, 100000, dtype=torch.float32).reshape(100, 1000)
    fd, tmp = tempfile.mkstemp(dir=out, prefix=".ckpt-")
    import io
    buf = io.BytesIO()
    torch.save({"step": 7, "w": t}, buf)
    with os.fdopen(fd, "wb") as g:
        g.write(buf.getvalue())
    with open(os.path.join(sync, "ckpt.sha256"), "w") as g:
        g.write(hashlib.sha256(buf.getvalue()).hexdigest())
    os.replace(tmp, os.path.join(out, "ckpt.pt"))
    check("temp name gone after os.replace", False, os.path.exists(tmp))
    signal("saved")

    with open(os.path.join(out, "excl"), "x") as g:
        g.write("first")
    signal("excl")

    wait("numpy")
    import numpy as np
    a = np.load(os.path.join(out, "arr.npy"))
    check("np.load of rank 1's array", 4950, int(a.sum()))
    with open(os.path.join(out, "copy.txt"), "rb") as g:
        with open(os.path.join(mount, "a.txt"), "rb") as h:
            check("shutil.copy by rank 1 reads back", h.read(), g.read())
    check("readdir shows both ranks' outputs", ["a.bin", "arr.npy", "ckpt.pt", "copy.txt", "excl"],
          sorted(os.listdir(out)))
    import signal as sig
    import subprocess
    child = subprocess.Popen([sys.executable, "-c", "import time\nf = open(%r, 'wb')\nf.write(b'half' * 100000)\n"
                              "f.flush()\nprint('open', flush=True)\ntime.sleep(60)" % os.path.join(out, "killed.bin")],
                             stdout=subprocess.PIPE)
    child.stdout.readline()
    child.send_signal(sig.SIGKILL)
    child.wait()
    with open(os.path.join(out, "killed.bin"), "rb") as g:
        check("a writer killed before close leaves what it wrote, as on a disk", b"half" * 100000, g.read())
    signal("done0")
else:
    wait("dir")
    check("a directory made on rank 0", True, os.path.isdir(out))
    wait("written")
    check("invisible before close", False, os.path.exists(os.path.join(out, "a.bin")))
    signal("checked-invisible")
    wait("closed")
    with open(os.path.join(out, "a.bin"), "rb") as g:
        check("visible and whole right after close", hashlib.sha256(payload).hexdigest(),
              hashlib.sha256(g.read()).hexdigest())

    wait("saved")
    import torch
    ck = torch.load(os.path.join(out, "ckpt.pt"))
    same = torch.equal(ck["w"], torch.arange(0, 100000, dtype=torch.float32).reshape(100, 1000))
    check("torch.load of rank 0's checkpoint", (7, True), (ck["step"], same))

    wait("excl")
    try:
        open(os.path.join(out, "excl"), "x").close()
        check("O_EXCL on a path committed by rank 0", "EEXIST", "created")
    except OSError as e:
        check("O_EXCL on a path committed by rank 0", "EEXIST", errno.errorcode[e.errno])

    import numpy as np
    np.save(os.path.join(out, "arr.npy"), np.arange(100))
    shutil.copy(os.path.join(mount, "a.txt"), os.path.join(out, "copy.txt"))
    signal("numpy")
    wait("done0")

print("%d passed, %d failed" % (passed, failed), flush=True)
sys.exit(1 if failed else 0)
