"""MLPerf Storage's training loop without DLIO's dependencies (bench/mlperf-shape.sh runs it).

  mlperf_shape.py gen DIR COUNT MEAN_BYTES          COUNT files of random bytes, sizes MEAN +-10%, seeded
  mlperf_shape.py run DIR EPOCHS THREADS BATCH COMPUTE_S   the training loop over every file under DIR

One sample is one file, read whole (DLIO's unet3d and a file-per-sample resnet50). A torch DataLoader with THREADS
persistent worker processes reads the samples of each batch (a shuffled order per epoch, seeded, drop_last); the
main loop takes a batch, then sleeps COMPUTE_S (DLIO's emulated accelerator is a sleep). Steps per epoch:
floor(files / BATCH), as DLIO's with one simulated accelerator.

AU per epoch is computed as DLIO's StatsCounter does (dlio_benchmark/utils/statscounter.py, compute_metrics_train,
with its default metric_exclude_start_steps=1, metric_exclude_end_steps=0): the epoch's clock starts before the
loader is asked for its first batch and stops after the last step; the first step (its wait for the batch and its
compute) is taken out of both sides; AU = sum of the other steps' compute time / (epoch time - first step's time).
So AU is the share of the epoch, after its first step, in which the simulated accelerator was busy.

Prints one line per epoch:
  epoch E au_pct A time_s T steps S samples_per_s R open_p50_ms O50 open_p99_ms O99 wait_s W bytes B
open_* is open(2) as the reader saw it (every sample's), wait_s the main loop's total wait for batches.
With MLPERF_OPEN_LOG=FILE each sample also appends "START OPEN_S READ_S PID PATH" to FILE (perf_counter seconds).
"""
import os
import warnings
import random
import sys
import time

OPEN_LOG = os.environ.get("MLPERF_OPEN_LOG")


def gen(d, count, mean):
    os.makedirs(d, exist_ok=True)
    rnd = random.Random(11)
    block = os.urandom(1 << 20)
    for i in range(count):
        size = int(mean * (0.9 + 0.2 * rnd.random()))
        path = os.path.join(d, "s%06d.bin" % i)
        with open(path + ".tmp", "wb") as f:
            chunk = i.to_bytes(8, "little") + block[8:]
            left = size
            while left > 0:
                f.write(chunk[:left])
                left -= min(left, len(chunk))
        os.rename(path + ".tmp", path)


def collate(samples):
    return samples


class Files:
    """The samples: each item opens its file, reads it whole into this worker's buffer, closes it."""

    def __init__(self, paths, biggest):
        self.paths = paths
        self.biggest = biggest
        self.buf = None

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        if self.buf is None:
            self.buf = bytearray(self.biggest + 4096)
        view = memoryview(self.buf)
        t0 = time.perf_counter()
        fd = os.open(self.paths[i], os.O_RDONLY)
        t_open = time.perf_counter() - t0
        try:
            got = 0
            while True:
                n = os.readv(fd, [view[got:]])
                if n == 0:
                    break
                got += n
        finally:
            os.close(fd)
        if OPEN_LOG:  # one line per sample: when its open began, the open's and the whole read's seconds
            with open(OPEN_LOG, "a") as log:
                log.write(f"{t0:.6f} {t_open:.6f} {time.perf_counter() - t0:.6f} {os.getpid()} {self.paths[i]}\n")
        return got, t_open


class EpochOrder:
    """DLIO's file_shuffle: seed, a new permutation each epoch (seed_change_epoch)."""

    def __init__(self, n):
        self.n = n
        self.epoch = 0

    def __iter__(self):
        order = list(range(self.n))
        random.Random(1234 + self.epoch).shuffle(order)
        return iter(order)

    def __len__(self):
        return self.n


def pct(values, q):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def run(d, epochs, threads, batch, compute):
    warnings.filterwarnings("ignore", message=".*worker processes in total.*")
    import torch.utils.data as tud
    paths = []
    for root, _, names in os.walk(d):
        paths += [os.path.join(root, n) for n in names]
    paths.sort()
    if len(paths) < batch:
        sys.exit(f"mlperf_shape: {d} holds {len(paths)} files, fewer than one batch of {batch}")
    biggest = max(os.stat(p).st_size for p in paths)
    steps = len(paths) // batch
    order = EpochOrder(len(paths))
    loader = tud.DataLoader(Files(paths, biggest), batch_size=batch, sampler=order, num_workers=threads,
                            persistent_workers=True, prefetch_factor=2, drop_last=True, collate_fn=collate)
    for epoch in range(1, epochs + 1):
        order.epoch = epoch
        start = time.time()                      # DLIO's start_block: before the loader's first batch
        proc, comp, opens = [], [], []
        waited, nbytes = 0.0, 0
        t0 = time.time()
        it = iter(loader)
        for step in range(steps):
            samples = next(it)
            loaded = time.time()
            waited += loaded - t0
            nbytes += sum(s[0] for s in samples)
            opens += [s[1] for s in samples]
            c0 = time.time()
            time.sleep(compute)
            done = time.time()
            comp.append(done - c0)
            proc.append(done - t0)
            t0 = time.time()
        del it
        end = time.time()
        total = end - start - proc[0]            # metric_exclude_start_steps = 1
        au = 100.0 * sum(comp[1:]) / total if total > 0 else 0.0
        print(f"epoch {epoch} au_pct {au:.2f} time_s {end - start:.3f} steps {steps} "
              f"samples_per_s {steps * batch / (end - start):.1f} open_p50_ms {1000 * pct(opens, 0.5):.3f} "
              f"open_p99_ms {1000 * pct(opens, 0.99):.3f} wait_s {waited:.3f} bytes {nbytes}", flush=True)


def main(argv):
    if len(argv) == 4 and argv[0] == "gen":
        gen(argv[1], int(argv[2]), int(argv[3]))
    elif len(argv) == 6 and argv[0] == "run":
        run(argv[1], int(argv[2]), int(argv[3]), int(argv[4]), float(argv[5]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
