package org.fanstore.runtime.shm;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The floor under background work while it gives way to this node's readers: one piece of it (a pull range, a range
 * served to a peer's pull, an entry of the slice pass) still starts per {@link #INTERVAL_NANOS} across the threads
 * that share one floor. Pausing altogether would starve that work for as long as an epoch keeps reading, i.e. for
 * ever; one 508 KiB range per 10 ms is ~50 MB/s, and the readers keep nearly all of the CPU.
 */
public final class BackgroundFloor {
    /** One start per this long while background work gives way. */
    public static final long INTERVAL_NANOS = 10_000_000L;

    private final AtomicLong next = new AtomicLong(System.nanoTime());

    /** Takes the next start if its time has come ({@code now}: {@link System#nanoTime()}); true: the caller starts. */
    public boolean tryStart(long now) {
        long n = next.get();
        return now - n >= 0 && next.compareAndSet(n, now + INTERVAL_NANOS);
    }

    /** Nanoseconds from {@code now} until the next start may be taken (0 or less: now). */
    public long untilNext(long now) {
        return next.get() - now;
    }
}
