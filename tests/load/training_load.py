"""training_load.py: the training side of the load test (launcher TrainingLoadTest), run under `fanstore run`.

  training_load.py rank  --expected F --local-dir D --done-dir R [--procs 2] [--workers 4] [--epochs 2]
  training_load.py train --expected F --local-dir D --tag T --seed S [--workers 4] [--epochs 2]

`rank` is the command of one rank: it starts --procs `train` processes (through subprocess, so under the shim's
vfork path), waits for them, waits until every rank of the job has written its file in --done-dir, then reads
the peak memory (VmHWM) of its own rank's runtime JVM from /proc and prints
  RUNTIME rank=R pid=P vmhwm_kb=N vmrss_kb=N rss_anon_kb=N rss_file_kb=N rss_shmem_kb=N
(the peak, then what the resident set is made of now: heap and other anonymous memory, mapped files, tmpfs).

`train` is one training process: it lists /fanstore/<name> with os.walk, checks the listing and every size
against the expected map (lines "sha256<TAB>size<TAB>/fanstore/path", computed from the source tree before the
job), then runs --epochs epochs of a torch DataLoader(num_workers=W, multiprocessing_context="fork",
shuffle=True) whose samples read whole files (stdio read, pread, or mmap, by index) and hash them with SHA-256.
Each worker counts, after every sample, the descriptors of /proc/self/fd that point into fanstore's mount,
shared-memory or local directories (all of a sample's descriptors are closed by then, so the count must be
back to the worker's baseline); the process counts its own at the end of every epoch. Per epoch it prints
  EPOCH tag=T epoch=E samples=N distinct=N bytes=N mismatches=N errors=N worker_fd_leaks=N fd_leak=N seconds=S
and, for the first few problems, MISMATCH/ERROR lines naming the file. Exit status 0 only if all was clean.
"""
import argparse
import hashlib
import mmap
import os
import subprocess
import sys
import time

SHM_PREFIX = "/dev/shm/fanstore-"
CHUNK = 1 << 20
REPORT_LIMIT = 20


def load_expected(path):
    expected = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            sha, size, name = line.rstrip("\n").split("\t", 2)
            expected[name] = (sha, int(size))
    return expected


def fanstore_fds(prefixes):
    """Descriptors of this process that point into fanstore's mount, shared-memory or local directories. The shim
    keeps one descriptor of the rank's ctl.clients per process (its liveness lock, opened on the process's first
    request): that one is the shim's, not a leak, and is left out; a second one would be listed."""
    found = []
    own_lock = False
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue  # the descriptor of the listing itself, closed by now
        if target.startswith(prefixes):
            if target.endswith("/ctl.clients") and not own_lock:
                own_lock = True
                continue
            found.append("%s -> %s" % (fd, target))
    return found


def read_whole(path, method):
    """The file's bytes and the size fstat gave, read one of three ways a data loader does."""
    if method == 0:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            h = hashlib.sha256()
            total = 0
            while True:
                b = f.read(CHUNK)
                if not b:
                    break
                h.update(b)
                total += len(b)
            return h.hexdigest(), total, size
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if method == 1 or size == 0:
            h = hashlib.sha256()
            off = 0
            while True:
                b = os.pread(fd, CHUNK, off)
                if not b:
                    break
                h.update(b)
                off += len(b)
            return h.hexdigest(), off, size
        with mmap.mmap(fd, size, prot=mmap.PROT_READ) as m:
            return hashlib.sha256(m).hexdigest(), len(m), size
    finally:
        os.close(fd)


def run_train(args):
    import warnings
    warnings.filterwarnings("ignore", message="This DataLoader will create")  # more workers than cores: on purpose
    import torch
    from torch.utils.data import DataLoader, Dataset, get_worker_info

    expected = load_expected(args.expected)
    prefixes = (SHM_PREFIX, os.path.join(os.path.abspath(args.local_dir), "fanstore-"),
                os.environ["FANSTORE_MOUNT"].rstrip("/") + "/")
    roots = sorted({"/".join(k.split("/")[:3]) for k in expected})

    def check_listing():
        """Problems of a fresh os.walk of the tree and os.stat of every file, against the expected map."""
        listed = []
        for root in roots:
            for d, _, names in os.walk(root):
                listed.extend(os.path.join(d, n) for n in names)
        found = ["ERROR %s listing: %s" % (n, "missing" if n in expected else "unexpected")
                 for n in sorted(set(expected) ^ set(listed))]
        for name in sorted(set(expected) & set(listed)):
            size = os.stat(name).st_size
            if size != expected[name][1]:
                found.append("ERROR %s stat size %d, expected %d" % (name, size, expected[name][1]))
        return found

    # The first directory opened makes the shim keep one descriptor on its (deleted) void directory for the
    # life of the process (shim_state.c, fs_state_void_dup): the baseline is taken after the first listing.
    problems = check_listing()
    baseline = set(fanstore_fds(prefixes))
    files = sorted(expected)

    class Files(Dataset):
        def __len__(self):
            return len(files)

        def __getitem__(self, i):
            path = files[i]
            try:
                sha, got, size = read_whole(path, i % 3)
                err = "" if got == size else "read %d bytes, fstat says %d" % (got, size)
            except OSError as e:
                sha, got, err = "", 0, "%s: %s" % (type(e).__name__, e)
            leaked = sorted(set(fanstore_fds(prefixes)) - get_worker_info().dataset.worker_baseline)
            return path, sha, got, err, leaked

    def remember_baseline(_):
        get_worker_info().dataset.worker_baseline = set(fanstore_fds(prefixes))

    loader = DataLoader(Files(), batch_size=4, shuffle=True, num_workers=args.workers,
                        multiprocessing_context="fork", collate_fn=list, worker_init_fn=remember_baseline,
                        generator=torch.Generator().manual_seed(args.seed), timeout=120)
    clean = True
    for epoch in range(args.epochs):
        t0 = time.monotonic()
        samples = total = mismatches = worker_leaks = 0
        seen = set()
        if epoch > 0:
            problems = check_listing()  # listed again, as a training script may: no descriptor may pile up
        errors = len(problems)
        for batch in loader:
            for path, sha, got, err, leaked in batch:
                samples += 1
                seen.add(path)
                total += got
                worker_leaks += len(leaked)
                if err:
                    errors += 1
                    problems.append("ERROR %s %s" % (path, err))
                elif (sha, got) != expected[path]:
                    mismatches += 1
                    problems.append("MISMATCH %s got %s %d expected %s %d" % ((path, sha, got) + expected[path]))
                if leaked:
                    problems.append("ERROR %s still open after the sample: %s" % (path, ", ".join(leaked)))
        left = sorted(set(fanstore_fds(prefixes)) - baseline)
        if left:
            problems.append("ERROR descriptors open at the end of the epoch: " + ", ".join(left))
        fd_leak = len(left)
        for p in problems[:REPORT_LIMIT]:
            say("tag=%s epoch=%d %s" % (args.tag, epoch, p))
        say("EPOCH tag=%s epoch=%d samples=%d distinct=%d bytes=%d mismatches=%d errors=%d worker_fd_leaks=%d"
              " fd_leak=%d seconds=%.2f" % (args.tag, epoch, samples, len(seen), total, mismatches, errors,
                                             worker_leaks, fd_leak, time.monotonic() - t0))
        clean = clean and not problems and mismatches == 0 and errors == 0 and fd_leak == 0 \
            and samples == len(files) == len(seen)
    return 0 if clean else 1


def runtime_pid(rank, job):
    """The pid of this rank's runtime JVM: the process whose arguments name this rank and this job."""
    want = {"org.fanstore.runtime.RuntimeMain", "--rank=%d" % rank, "--job-id=" + job}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = set(a.decode("utf-8", "replace") for a in f.read().split(b"\0"))
        except OSError:
            continue
        if want <= argv:
            return int(pid)
    return None


def status_kb(pid, field):
    with open("/proc/%d/status" % pid, encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def say(line):
    """One line in one write(2): processes sharing stdout never split each other's lines, even under
    PYTHONUNBUFFERED=1, where print() writes the text and its newline separately."""
    os.write(1, (line + "\n").encode())


def run_rank(args):
    rank = int(os.environ["FANSTORE_RANK"])
    size = int(os.environ["FANSTORE_SIZE"])
    job = os.environ["FANSTORE_JOB_ID"]
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "train", "--expected", args.expected,
                               "--local-dir", args.local_dir, "--workers", str(args.workers),
                               "--epochs", str(args.epochs), "--tag", "%d.%d" % (rank, p),
                               "--seed", str(1000 * rank + p)])
             for p in range(args.procs)]
    status = 0
    for p in procs:
        status = max(status, p.wait())
    # Peak memory at the end of the job: once every rank's training is over (so no more remote fetches).
    with open(os.path.join(args.done_dir, "rank-%d" % rank), "w", encoding="ascii"):
        pass
    deadline = time.monotonic() + 300
    while len([n for n in os.listdir(args.done_dir) if n.startswith("rank-")]) < size:
        if time.monotonic() > deadline:
            say("RANK %d: not every rank finished within 300 s" % rank)
            return 1
        time.sleep(0.1)
    pid = runtime_pid(rank, job)
    if pid is None:
        say("RANK %d: no runtime process found for job %s" % (rank, job))
        return 1
    say("RUNTIME rank=%d pid=%d vmhwm_kb=%d vmrss_kb=%d rss_anon_kb=%d rss_file_kb=%d rss_shmem_kb=%d"
          % ((rank, pid) + tuple(status_kb(pid, f) for f in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem"))))
    return status


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["rank", "train"])
    ap.add_argument("--expected", required=True)
    ap.add_argument("--local-dir", required=True)
    ap.add_argument("--done-dir")
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--tag", default="0.0")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sys.exit(run_rank(args) if args.mode == "rank" else run_train(args))


if __name__ == "__main__":
    main()
