"""Flag files in a directory outside the mount (SYNC), for the ranks of one job's e2e scripts to take turns:
e2e_cluster_writes.py, e2e_name_races.py, e2e_refused_publish.py (each imports it from its own directory)."""
import os
import time


def mark(sync, flag):
    open(os.path.join(sync, flag), "w").close()


def wait(sync, flag, seconds=60, rank="?"):
    deadline = time.monotonic() + seconds
    while not os.path.exists(os.path.join(sync, flag)):
        if time.monotonic() > deadline:
            raise SystemExit("rank %s: gave up waiting for %s" % (rank, flag))
        time.sleep(0.02)
