#!/usr/bin/python3
"""Reads every file under DIR once, as a training epoch would, and prints one line per node:
"node R: read N files, M MB in S s: F files/s" (R is FANSTORE_RANK, or "-" outside fanstore)."""
import os
import sys
import time

if len(sys.argv) != 2:
    sys.exit("usage: read-tree.py DIR")
t0 = time.perf_counter()
files = nbytes = 0
for d, _, names in os.walk(sys.argv[1]):
    for n in names:
        with open(os.path.join(d, n), "rb") as f:
            nbytes += len(f.read())
            files += 1
dt = time.perf_counter() - t0
node = os.environ.get("FANSTORE_RANK", "-")
line = f"node {node}: read {files} files, {nbytes / 1e6:.1f} MB in {dt:.2f} s: {files / dt:.0f} files/s\n"
# one write(2) of the whole line: print() under PYTHONUNBUFFERED writes the text and the newline apart, and two
# nodes' lines sharing one terminal or pipe could then join
os.write(sys.stdout.fileno(), line.encode())
