#!/usr/bin/env python3
"""A PyTorch DataLoader over one file per sample, from a bucket (boto3) or a directory (open/read): the way users
read training data from an object store today, and the same pipeline over fanstore's mount or a local disk.

  s3_dataloader.py SOURCE LIST EPOCHS [WORKERS]
    SOURCE   s3://BUCKET/PREFIX (sample i is the object PREFIX/<line i of LIST>) or a directory (DIR/<line i>)
    LIST     relative paths, one a line
    WORKERS  DataLoader workers (default 8); with a bucket each worker has its own boto3 client (botocore clients
             are not fork-safe), made on its first sample and kept (persistent_workers: the baseline's best case)

Shuffled (seed 0), batch 32, each sample's bytes read whole and counted (no decode: the store is what is measured).
Before epoch 1 it reads LIST's first sample once in the main process: `first_byte_ms` is from $LAUNCH_NS (date
+%s%N before the job was launched; the script's own start if unset) to that sample's last byte; `start_ms` from
$LAUNCH_NS to the script's first statement (the command has started). Prints:
  start_ms S
  first_byte_ms F
  epoch E files N bytes B seconds S files/s X MiB/s Y
Endpoint and keys for a bucket: the AWS_* environment.
"""
import os
import sys
import time
import warnings

START_NS = time.time_ns()             # the command has started (before torch's ~1 s import)

import torch                          # noqa: E402
import torch.utils.data               # noqa: E402
# 8 workers on 2 cores is the point (each waits on the network most of the time): not a warning per epoch
warnings.filterwarnings("ignore", message="This DataLoader will create")


def s3_client():
    import boto3
    import botocore.config
    return boto3.session.Session().client(
        "s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL"),
        config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"mode": "standard"}))


class Samples(torch.utils.data.Dataset):
    def __init__(self, source, names):
        self.names = names
        self.bucket = None
        if source.startswith("s3://"):
            self.bucket, _, prefix = source[5:].partition("/")
            self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        else:
            self.root = source
        self.s3 = None
        self.pid = None

    def __len__(self):
        return len(self.names)

    def read(self, i):
        if self.bucket is None:
            with open(os.path.join(self.root, self.names[i]), "rb") as f:
                return len(f.read())
        if self.s3 is None or self.pid != os.getpid():
            self.s3, self.pid = s3_client(), os.getpid()
        body = self.s3.get_object(Bucket=self.bucket, Key=self.prefix + self.names[i])["Body"]
        return len(body.read())

    def __getitem__(self, i):
        return self.read(i)


def main(argv):
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    source, listing, epochs = argv[1], argv[2], int(argv[3])
    workers = int(argv[4]) if len(argv) == 5 else 8
    with open(listing) as f:
        names = [line.strip() for line in f if line.strip()]
    data = Samples(source, names)
    data.read(0)
    launch = int(os.environ.get("LAUNCH_NS", START_NS))
    print(f"start_ms {(START_NS - launch) / 1e6:.0f}")
    print(f"first_byte_ms {(time.time_ns() - launch) / 1e6:.0f}", flush=True)
    data.s3 = None                    # the workers make their own
    loader = torch.utils.data.DataLoader(data, batch_size=32, shuffle=True, num_workers=workers,
                                         persistent_workers=workers > 0,
                                         generator=torch.Generator().manual_seed(0))
    for e in range(1, epochs + 1):
        t = time.perf_counter()
        files = total = 0
        for batch in loader:
            files += len(batch)
            total += int(batch.sum())
        s = time.perf_counter() - t
        print(f"epoch {e} files {files} bytes {total} seconds {s:.3f} files/s {files / s:.1f}"
              f" MiB/s {total / s / (1 << 20):.1f}", flush=True)


if __name__ == "__main__":
    main(sys.argv)
