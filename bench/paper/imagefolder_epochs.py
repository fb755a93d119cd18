"""A real input pipeline: torchvision ImageFolder + DataLoader(num_workers=2) over ROOT, EPOCHS epochs.

  imagefolder_epochs.py ROOT [EPOCHS] [BATCH]

Each sample is opened, decoded by PIL, resized to 64x64 and turned into a tensor (the CPU work of a training
input pipeline, no model). Prints one line per epoch: "epoch E samples N seconds S samples_per_s R".
Run unmodified under `fanstore run` (ROOT under /fanstore/...) and natively for the baseline.
"""
import sys
import time

import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def main():
    root = sys.argv[1]
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    torch.set_num_threads(1)
    tf = transforms.Compose([transforms.Resize((64, 64)), transforms.ToTensor()])
    ds = datasets.ImageFolder(root, transform=tf)
    loader = DataLoader(ds, batch_size=batch, shuffle=True, num_workers=2,
                        generator=torch.Generator().manual_seed(0))
    for e in range(1, epochs + 1):
        t0 = time.monotonic()
        n = 0
        for x, _ in loader:
            n += x.shape[0]
        dt = time.monotonic() - t0
        print("epoch %d samples %d seconds %.4f samples_per_s %.1f" % (e, n, dt, n / dt), flush=True)


if __name__ == "__main__":
    main()
