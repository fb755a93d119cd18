#!/usr/bin/env python3
"""Launch -> command start and launch -> first byte of one file, for a job whose only work is that read.

  first_byte.py FILE
Prints (ms from $LAUNCH_NS, `date +%s%N` taken before the job was launched):
  start_ms S          this script's first statement (the job's command has started)
  first_byte_ms F     FILE opened and its first byte read
No imports beyond the standard library's os/sys/time: the command's own start costs ~20-40 ms, not torch's ~1 s.
"""
import os
import sys
import time

START_NS = time.time_ns()


def main(argv):
    if len(argv) != 2 or "LAUNCH_NS" not in os.environ:
        sys.exit(__doc__)
    launch = int(os.environ["LAUNCH_NS"])
    with open(argv[1], "rb") as f:
        got = f.read(1)
    done = time.time_ns()
    if len(got) != 1:
        sys.exit(f"first_byte.py: {argv[1]}: empty")
    print(f"start_ms {(START_NS - launch) / 1e6:.0f}")
    print(f"first_byte_ms {(done - launch) / 1e6:.0f}", flush=True)


if __name__ == "__main__":
    main(sys.argv)
