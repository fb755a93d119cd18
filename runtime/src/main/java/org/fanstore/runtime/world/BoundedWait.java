package org.fanstore.runtime.world;

import static org.fanstore.runtime.timing.Timing.*;
import mpi.MPIException;
import mpi.Request;
import mpi.Status;

/**
 * The only way this package waits for an MPJ request: a timed wait against a deadline. MPJ 0.44 has no
 * working {@code Cancel()} and a blocking {@code Wait()} never returns when the peer died, so every wait
 * must be able to give up.
 *
 * <p>It sleeps on the monitor of the device request ({@code mpi.Request.req}): niodev's selector thread
 * marks a request complete and calls {@code notify()} on that monitor ({@code NIORequest.notifyMe}), which
 * is exactly how MPJ's own blocking {@code Wait()} wakes up. Waking on that notification instead of polling
 * with {@code parkNanos} matters: on Linux a park of a few microseconds sleeps for the timer slack (50 us by
 * default) or longer, so a yield-then-park backoff would overshoot each reply by tens of microseconds, a large
 * part of a small fetch's time. Each sleep is capped at {@code BOUNDED_WAIT_SLICE_MILLIS}, so a completion that arrives
 * without a notification (niodev marks a request that matches an already-arrived message complete while
 * posting it, without notifying) or a missed wake-up costs at most one slice, never the deadline.
 */
public final class BoundedWait {
    private BoundedWait() {
    }

    /**
     * Waits until {@code request} completes or {@code deadlineNanos} (a {@link System#nanoTime()} value)
     * passes. An interrupt does not end the wait (the deadline does); the thread's interrupt status is kept.
     *
     * @return the completion status, or {@code null} if the deadline passed first (the request stays
     *     posted: MPJ cannot cancel it)
     * @throws MPIException if MPJ reports a failure, typically a closed channel after a peer died
     */
    static Status until(Request request, long deadlineNanos) throws MPIException {
        Status status = request.Test();
        if (status != null) {
            return status;
        }
        mpjdev.Request device = request.req;
        Object monitor = device != null ? device : new Object();
        boolean interrupted = false;
        try {
            while (true) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                synchronized (monitor) {
                    // itest() only reads the completion flag under this same monitor, and niodev sets the
                    // flag and notifies while holding it: no notification can slip between check and wait.
                    if (device == null || device.itest() == null) {
                        try {
                            monitor.wait(Math.min(BOUNDED_WAIT_SLICE_MILLIS, Math.max(1, left / 1_000_000)));
                        } catch (InterruptedException e) {
                            interrupted = true;
                        }
                    }
                }
                // outside the monitor: Test() completes a receive by copying the data into the caller's array
                status = request.Test();
                if (status != null) {
                    return status;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    public static long deadlineAfter(java.time.Duration timeout) {
        long nanos = timeout.toNanos();
        long now = System.nanoTime();
        return nanos > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + nanos;
    }
}
