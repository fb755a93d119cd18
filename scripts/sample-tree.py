#!/usr/bin/python3
"""Writes the sample dataset the demo and the README use: DIR/train/classNN/imgNNNN.bin (8 classes x 250 files of
1-64 KiB of random bytes) and DIR/val/vNNN.txt (100 small text files). The same seed gives the same bytes."""
import os
import random
import sys

if len(sys.argv) != 2:
    sys.exit("usage: sample-tree.py DIR")
root = sys.argv[1]
rnd = random.Random(42)
for c in range(8):
    d = os.path.join(root, "train", f"class{c:02d}")
    os.makedirs(d, exist_ok=True)
    for i in range(250):
        with open(os.path.join(d, f"img{i:04d}.bin"), "wb") as f:
            f.write(rnd.randbytes(rnd.randint(1024, 64 * 1024)))
os.makedirs(os.path.join(root, "val"), exist_ok=True)
for i in range(100):
    with open(os.path.join(root, "val", f"v{i:03d}.txt"), "w") as f:
        f.write(("label %d\n" % i) * 200)
print(f"sample-tree: 2100 files under {root}")
