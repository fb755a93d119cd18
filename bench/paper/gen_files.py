"""Benchmark files for bench/run-paper.sh.

  gen_files.py DIR COUNT BYTES random|text     COUNT files f%06d.bin of BYTES each
  gen_files.py tree DIR TRAIN_PER_DIR VAL_PER_DIR   ImageNet-shaped tree: DIR/train/n%08d (1000) + DIR/val/n%08d
                                                    (1000): 2,002 directories, tiny files (64-191 bytes)
  gen_files.py jpeg DIR CLASSES PER_CLASS SIDE       ImageFolder tree of generated JPEGs (PIL)

"text" is CSV-like rows with a small vocabulary, which LZ4 compresses about 2.8x (the paper's SRGAN ratio);
"random" does not compress. Deterministic (seeded), so two runs read the same bytes.
"""
import os
import random
import sys


def files(d, count, size, kind):
    os.makedirs(d, exist_ok=True)
    rnd = random.Random(7)
    names = [b"n%08d" % rnd.randrange(10**8) for _ in range(40)]
    cats = [b"train", b"val", b"test"]
    for i in range(count):
        if kind == "random":
            body = os.urandom(size)
        else:
            out = bytearray()
            while len(out) < size:
                out += b"2026-11-%02d,%s,%s,%d,%d.%d,label_%d\n" % (
                    rnd.randrange(1, 29), rnd.choice(names), rnd.choice(cats), rnd.randrange(50),
                    rnd.randrange(100), rnd.randrange(10), rnd.randrange(20))
            body = bytes(out[:size])
        with open(os.path.join(d, "f%06d.bin" % i), "wb") as f:
            f.write(body)


def tree(root, train_per_dir, val_per_dir):
    body = bytes(random.Random(1).getrandbits(8) for _ in range(192))
    i = 0
    for split, per in (("train", train_per_dir), ("val", val_per_dir)):
        for c in range(1000):
            d = os.path.join(root, split, "n%08d" % c)
            os.makedirs(d, exist_ok=True)
            for k in range(per):
                fd = os.open(os.path.join(d, "n%08d_%d.JPEG" % (c, k)), os.O_WRONLY | os.O_CREAT, 0o644)
                os.write(fd, body[: 64 + (i * 37) % 128])
                os.close(fd)
                i += 1


def jpegs(root, classes, per_class, side):
    from PIL import Image
    rnd = random.Random(3)
    for c in range(classes):
        d = os.path.join(root, "class%03d" % c)
        os.makedirs(d, exist_ok=True)
        for k in range(per_class):
            # Smooth gradients plus noise: JPEG-sized like photos (a few KiB at 128 px), not flat colour.
            img = Image.effect_noise((side, side), 40 + rnd.randrange(40)).convert("RGB")
            grad = Image.linear_gradient("L").resize((side, side)).convert("RGB")
            img = Image.blend(img, grad, 0.5)
            img.save(os.path.join(d, "img%05d.JPEG" % k), quality=85)


if __name__ == "__main__":
    if sys.argv[1] == "tree":
        tree(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1] == "jpeg":
        jpegs(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        files(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
