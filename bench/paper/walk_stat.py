"""os.walk + stat of every entry under ROOT (the metadata pass a job makes before its first epoch).

  walk_stat.py ROOT      prints "entries N dirs D seconds S entries_per_s R"
"""
import os
import sys
import time

root = sys.argv[1]
t0 = time.monotonic()
entries = dirs = 0
for top, dnames, fnames in os.walk(root):
    dirs += 1
    for name in dnames + fnames:
        os.stat(os.path.join(top, name))
        entries += 1
dt = time.monotonic() - t0
print("entries %d dirs %d seconds %.4f entries_per_s %.1f" % (entries, dirs, dt, entries / dt))
