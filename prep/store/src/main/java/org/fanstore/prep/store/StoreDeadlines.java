package org.fanstore.prep.store;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import software.amazon.awssdk.http.Abortable;

/**
 * A caller's deadline on a read (README.md, "A caller's deadline"): the request's own timeouts are cut to what is
 * left, and a body still open at the deadline is aborted (its connection closed), so the read ends then whatever the
 * store does. One timer thread, {@code fanstore-s3-timer}, which the SDK's own timeouts use too (instead of its
 * default pool of 5 {@code sdk-ScheduledExecutor} threads): its tasks only abort and interrupt.
 */
final class StoreDeadlines implements AutoCloseable {
    /** No deadline: the client's own bounds only. */
    static final long NONE = Long.MAX_VALUE;

    private final ScheduledThreadPoolExecutor timer;

    StoreDeadlines() {
        timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "fanstore-s3-timer");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);   // a read that ends in time leaves nothing queued
    }

    ScheduledThreadPoolExecutor timer() {
        return timer;
    }

    /** What is left until deadline (System.nanoTime()), or zero when it passed. */
    static Duration left(long deadline) {
        return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }

    static boolean passed(long deadline) {
        return deadline != NONE && System.nanoTime() - deadline >= 0;
    }

    /** Aborts {@code body} at the deadline unless the guard is closed first; nothing for {@link #NONE}. */
    Guard abortAt(long deadline, Abortable body) {
        if (deadline == NONE) {
            return new Guard(null, new AtomicBoolean());
        }
        AtomicBoolean fired = new AtomicBoolean();
        ScheduledFuture<?> f = timer.schedule(() -> {
            fired.set(true);
            body.abort();
        }, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        return new Guard(f, fired);
    }

    /** A scheduled abort: closing it cancels the abort; {@link #fired} says whether it came first. */
    record Guard(ScheduledFuture<?> task, AtomicBoolean aborted) implements AutoCloseable {
        boolean fired() {
            return aborted.get();
        }

        @Override
        public void close() {
            if (task != null) {
                task.cancel(false);
            }
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
