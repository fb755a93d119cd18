package org.fanstore.runtime.fill;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.fanstore.runtime.fill.source.RangeSource;
import org.fanstore.runtime.liveness.RankFailedException;
import org.fanstore.runtime.timing.Timing;

/**
 * The fill's threads (README.md, "Threads"): the driver ({@code fanstore-fill}) asks the scheduler what to start
 * whenever something happened, transfers run on {@code fanstore-fill-transfer-N} and land back here, completed
 * partitions are published on {@code fanstore-fill-publish}. The scheduler, the landings queue and what is being
 * published are guarded by {@link Fill}'s lock; the times are on the governor's clock.
 */
final class FillDriver {
    private final Fill fill;
    private final Path doneMarker;
    private final ArrayDeque<Landing> landings = new ArrayDeque<>();
    private final Set<Integer> publishing = new HashSet<>();
    private final Set<Integer> warnedDown = ConcurrentHashMap.newKeySet();
    private final ExecutorService transfers;
    private final ExecutorService publisher;
    private final Thread driver;
    private final long started;
    private volatile long completedBytes;
    private volatile int completed;
    private volatile long finishedNanos;

    FillDriver(Fill fill, Path doneMarker) {
        this.fill = fill;
        this.doneMarker = doneMarker;
        this.started = fill.governor().now();
        AtomicInteger n = new AtomicInteger();
        this.transfers = Executors.newCachedThreadPool(r -> daemon(r, "fanstore-fill-transfer-" + n.incrementAndGet()));
        this.publisher = Executors.newSingleThreadExecutor(r -> daemon(r, "fanstore-fill-publish"));
        this.driver = daemon(this::drive, "fanstore-fill");
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    void start() {
        driver.start();
    }

    long completedBytes() {
        return completedBytes;
    }

    int completed() {
        return completed;
    }

    long finishedNanos() {
        return finishedNanos;
    }

    private void drive() {
        List<FillFile> toPublish = new ArrayList<>();
        Map<FillFile, String> toDrop = new LinkedHashMap<>();
        List<FillScheduler.Transfer> toStart = new ArrayList<>();
        List<Runnable> toAnswer = new ArrayList<>();
        Object lock = fill.lock;
        try {
            while (!fill.stopping) {
                synchronized (lock) {
                    long now = fill.governor().now();
                    takeLandings(now, toPublish, toDrop);
                    toStart.addAll(fill.scheduler.next(now));
                    fill.waits.settled(now, toAnswer);
                    if (toStart.isEmpty() && toPublish.isEmpty() && toDrop.isEmpty() && toAnswer.isEmpty()) {
                        if (fill.scheduler.finished() && publishing.isEmpty()) {
                            break;
                        }
                        long wake = Math.min(fill.scheduler.wakeAt(now), fill.waits.wakeAt());
                        long ms = wake == Long.MAX_VALUE ? Timing.FILL_DRIVER_IDLE_MILLIS
                                : Math.max(1, (wake - now) / 1_000_000);
                        lock.wait(Math.min(Timing.FILL_DRIVER_IDLE_MILLIS, ms));
                        continue;
                    }
                }
                toAnswer.forEach(Runnable::run);   // each only hands its open off (Fill.whenBytes)
                toAnswer.clear();
                toStart.forEach(this::run);
                toStart.clear();
                for (FillFile f : toPublish) {
                    publisher.execute(() -> publish(f));
                }
                toPublish.clear();
                toDrop.forEach(fill.files::drop);
                toDrop.clear();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            System.err.println("fanstore rank " + fill.rank + ": the fill stopped: " + e.getMessage()
                    + "; files are read from their sources on each open");
        }
        synchronized (lock) {
            fill.waits.driverGone(toAnswer);   // no wait outlives the driver
        }
        toAnswer.forEach(Runnable::run);
        finishedNanos = fill.governor().now() - started;
        if (!fill.stopping) {
            writeMarker();
        }
        if (fill.verbose && !fill.stopping) {
            System.err.printf("fanstore rank %d: fill done in %.1f s: %d of %d kept partitions local (%.0f MiB);"
                    + " %.0f MiB from peers, %.0f MiB from the home (landed ranges: %s)%n", fill.rank,
                    finishedNanos / 1e9, completed, fill.plan().kept().size(), completedBytes / 1048576.0,
                    fill.bytesFrom("peer") / 1048576.0,
                    (fill.bytesFrom("sharedfs") + fill.bytesFrom("objectstore")) / 1048576.0, describeLocked());
        }
    }

    private String describeLocked() {
        synchronized (fill.lock) {
            return fill.scheduler.describe();
        }
    }

    private void writeMarker() {
        try {
            Path tmp = doneMarker.resolveSibling(doneMarker.getFileName() + ".tmp");
            String line = String.format("partitions=%d of=%d bytes=%d seconds=%.3f%n", completed,
                    fill.plan().kept().size(), completedBytes, finishedNanos / 1e9);
            Files.writeString(tmp, line, StandardCharsets.US_ASCII);
            Files.move(tmp, doneMarker, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            System.err.println("fanstore rank " + fill.rank + ": cannot write " + doneMarker + ": " + e.getMessage());
        }
    }

    /**
     * Applies the landed and failed transfers to the scheduler (holding the lock); a partition given up goes into
     * {@code toDrop} with the reason.
     */
    private void takeLandings(long now, List<FillFile> toPublish, Map<FillFile, String> toDrop) {
        FillScheduler scheduler = fill.scheduler;
        for (Landing l; (l = landings.poll()) != null; ) {
            FillScheduler.Transfer t = l.transfer();
            int p = t.part();
            IOException e = l.failure();
            FillFile f = fill.files.get(p);
            if (e == null) {
                scheduler.landed(t);
                if (scheduler.keeps(p) && scheduler.complete(p) && publishing.add(p)) {
                    toPublish.add(f);
                }
            } else if (l.localWrite()) {
                boolean kept = scheduler.keeps(p);
                scheduler.abandon(t);
                if (kept) {
                    System.err.println("fanstore rank " + fill.rank + ": keeping partition " + fill.plan().info(p)
                            .fileName() + " stopped: " + e.getMessage() + "; its files are read from their sources"
                            + " instead");
                    toDrop.put(f, "its local file cannot take more bytes");
                }
            } else {
                boolean down = e instanceof RangeSource.SourceDownException;
                // the home's outage has its own line (HomeWatch); its ranges wait for it, not the next source
                if (down && !(e instanceof HomeOutage.DownException) && warnedDown.add(t.source())) {
                    System.err.println(RankFailedException.logLine(fill.rank, e.getMessage()) + "; reading from the"
                            + " next source instead");
                } else if (!down && !(e instanceof RangeSource.NotHeldException)) {
                    System.err.println(RankFailedException.logLine(fill.rank, e.getMessage()) + "; trying the next"
                            + " source");
                }
                boolean left = e instanceof RangeSource.NotHeldException n ? scheduler.notHeld(t, now, n.filling())
                        : scheduler.failed(t, down);
                if (!left && f != null) {
                    toDrop.put(f, "no source of it is left");
                }
            }
        }
        fill.lock.notifyAll();
    }

    /** Starts one transfer on a transfer thread; its landing goes back to the driver. */
    private void run(FillScheduler.Transfer t) {
        FillFile f;
        try {
            f = fill.files.file(t.part());
        } catch (IOException e) {
            land(new Landing(t, e, true));
            return;
        }
        long position = (long) t.range() * Fill.RANGE_BYTES;
        long length = Math.min((long) (t.range() + t.count()) * Fill.RANGE_BYTES, f.info.bytes()) - position;
        try {
            transfers.execute(() -> {
                PositionalSink sink = PositionalSink.draining(f.channel, f.tmp, position);
                try {
                    fill.read(t.source(), t.part(), position, length, f.crcs.summing(sink, position), t.foreground());
                } catch (IOException e) {
                    land(new Landing(t, e, false));
                    return;
                } catch (RuntimeException e) {
                    land(new Landing(t, new IOException(e.getMessage(), e), false));
                    return;
                }
                try {
                    sink.rethrow();
                    land(new Landing(t, null, false));
                } catch (IOException e) {
                    land(new Landing(t, e, true));
                }
            });
        } catch (RejectedExecutionException stopped) {
            land(new Landing(t, new IOException("the job is ending"), false));
        }
    }

    private void land(Landing l) {
        synchronized (fill.lock) {
            landings.add(l);
            fill.lock.notifyAll();
        }
    }

    /** Publishes a complete file (the publish thread): a local partition from now on, or given up. */
    private void publish(FillFile f) {
        boolean added = false;
        try {
            fill.files.install(f);
            added = true;
            fill.files.settle(f);   // before its slices: publishing them reads no body back
            fill.whenAdded.accept(f.id);
        } catch (IOException | RuntimeException e) {
            System.err.println("fanstore rank " + fill.rank + ": partition " + f.info.fileName() + " could not be"
                    + " kept: " + e.getMessage() + "; its files are read from their sources instead");
            if (!added) {
                synchronized (fill.lock) {
                    fill.scheduler.abandon(f.id);
                }
                fill.files.drop(f, null);
            }
        } finally {
            synchronized (fill.lock) {
                if (added) {
                    completed++;
                    completedBytes += f.info.bytes();
                }
                publishing.remove(f.id);
                fill.lock.notifyAll();
            }
        }
    }

    /** Stops the threads: the driver first, then the pools, each for a bounded time (Timing, "fill"). */
    void stop() {
        try {
            driver.join(Timing.FILL_DRIVER_JOIN.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        transfers.shutdown();
        publisher.shutdown();
        try {
            transfers.awaitTermination(Timing.FILL_POOL_DRAIN.toMillis(), TimeUnit.MILLISECONDS);
            publisher.awaitTermination(Timing.FILL_POOL_DRAIN.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        transfers.shutdownNow();
    }

    /** A transfer that ended: landed (failure null), failed at its source, or failed writing locally. */
    private record Landing(FillScheduler.Transfer transfer, IOException failure, boolean localWrite) {
    }
}
