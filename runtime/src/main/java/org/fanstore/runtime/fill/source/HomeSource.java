package org.fanstore.runtime.fill.source;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The dataset's home as a range source (runtime/home/README.md): the partition files on a shared FS
 * ({@link SharedFsSource}) or the partition objects in a bucket ({@link ObjectStoreSource}). It holds every byte
 * for the whole job, so the fill never marks it down.
 */
public interface HomeSource extends RangeSource, AutoCloseable {
    /**
     * Checks partition p (id: regular p, or -1-i for broadcast i) against the manifest now (size and fixed header):
     * a missing, foreign or damaged partition is refused before the command starts.
     */
    void check(int p) throws IOException;

    /** Partitions {@link #checkAll} checks at once: one round trip each to a store, a small read to a shared FS. */
    int CHECKS_IN_FLIGHT = 8;

    /**
     * {@link #check}s partitions {@code ps}, up to {@link #CHECKS_IN_FLIGHT} at once on short-lived daemon threads
     * ({@code fanstore-check-N}): a bucket's checks cost round trips each (runtime/home/README.md). The failure is
     * the one a check in list order meets first, with its own message; the checks not started yet are dropped.
     */
    default void checkAll(List<Integer> ps) throws IOException {
        if (ps.size() <= 1) {
            for (int p : ps) {
                check(p);
            }
            return;
        }
        AtomicInteger n = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(CHECKS_IN_FLIGHT, ps.size()), r -> {
            Thread t = new Thread(r, "fanstore-check-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> checks = new ArrayList<>();
            for (int p : ps) {
                checks.add(pool.submit(() -> {
                    check(p);
                    return null;
                }));
            }
            for (Future<?> f : checks) {
                f.get();
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new IOException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while checking the partitions", e);
        } finally {
            pool.shutdownNow();
        }
    }

    @Override
    void close();
}
