#!/usr/bin/env python3
"""Epochs over a tree for bench/node-loss.sh: every file read once per epoch, in a shuffled order (seed = epoch).
Usage: node_loss_epochs.py ROOT FIRST_EPOCH LAST_EPOCH [KILL_EPOCH KILL_FRACTION]: with KILL_*, when that share of
KILL_EPOCH's files is read, SIGKILLs the runtime of the job's last rank (found by its command line), as a lost node.
COMPUTE_MS (environment, default 1): a sleep after each file, as a training step's compute, so an epoch lasts longer
than the few seconds a loss takes to notice. Prints 'epoch E S' per epoch (seconds) and 'killed rank R'."""
import os, random, signal, sys, time

root, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
kill_epoch = int(sys.argv[4]) if len(sys.argv) > 4 else -1
kill_at = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
compute = float(os.environ.get('COMPUTE_MS', '1')) / 1000
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)


def kill_last_rank():
    job = os.path.dirname(os.environ['FANSTORE_SHM_DIR'])
    ranks = sorted(int(n[5:]) for n in os.listdir(job) if n.startswith('rank-') and n[5:].isdigit())
    victim = '%s/rank-%d ' % (job, ranks[-1])
    for pid in os.listdir('/proc'):
        try:
            cmd = open('/proc/%s/cmdline' % pid, 'rb').read().replace(b'\0', b' ').decode()
        except OSError:
            continue
        if 'org.fanstore.runtime.RuntimeMain' in cmd and victim in cmd:
            os.kill(int(pid), signal.SIGKILL)
            print('killed rank %d' % ranks[-1], flush=True)
            return


for epoch in range(first, last + 1):
    order = list(files)
    random.Random(epoch).shuffle(order)
    t0 = time.monotonic()
    for i, path in enumerate(order):
        if epoch == kill_epoch and i == int(kill_at * len(order)):
            kill_last_rank()
        with open(path, 'rb') as f:
            while f.read(1 << 20):
                pass
        time.sleep(compute)
    print('epoch %d %.3f' % (epoch, time.monotonic() - t0), flush=True)
