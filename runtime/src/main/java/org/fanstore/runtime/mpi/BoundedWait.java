package org.fanstore.runtime.mpi;

import java.util.concurrent.locks.LockSupport;

import mpi.MPIException;
import mpi.Request;
import mpi.Status;

/**
 * The only way this package waits for an MPJ request: {@code Test()} polling with a short park, against a
 * deadline. MPJ 0.44 has no working {@code Cancel()} and a blocking {@code Wait()} never returns when the
 * peer died, so every wait must be a poll that can give up.
 *
 * <p>The backoff starts with a few yields (a reply usually lands within tens of microseconds on a fast
 * link) and parks at most {@link #MAX_PARK_NANOS}, which bounds the latency a poll adds to a large
 * transfer while keeping an idle waiter off the two shared cores.
 */
final class BoundedWait {
    private static final int YIELDS_BEFORE_PARKING = 20;
    private static final long FIRST_PARK_NANOS = 5_000;
    private static final long MAX_PARK_NANOS = 200_000;

    private BoundedWait() {
    }

    /**
     * Waits until {@code request} completes or {@code deadlineNanos} (a {@link System#nanoTime()} value)
     * passes.
     *
     * @return the completion status, or {@code null} if the deadline passed first (the request stays
     *     posted: MPJ cannot cancel it)
     * @throws MPIException if MPJ reports a failure, typically a closed channel after a peer died
     */
    static Status until(Request request, long deadlineNanos) throws MPIException {
        int spins = 0;
        long park = FIRST_PARK_NANOS;
        while (true) {
            Status status = request.Test();
            if (status != null) {
                return status;
            }
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            if (spins < YIELDS_BEFORE_PARKING) {
                spins++;
                Thread.yield();
            } else {
                LockSupport.parkNanos(Math.min(park, left));
                park = Math.min(park * 2, MAX_PARK_NANOS);
            }
        }
    }

    static long deadlineAfter(java.time.Duration timeout) {
        long nanos = timeout.toNanos();
        long now = System.nanoTime();
        return nanos > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + nanos;
    }
}
