package org.fanstore.runtime.world;

import mpi.MPI;
import mpi.Request;
import mpi.Status;

/**
 * A send or receive posted through {@link MpiWorld}: the handle on an MPJ request that code outside this package
 * holds, waited for only against a deadline ({@link BoundedWait}). MPJ reports failures as {@code MPIException}, a
 * RuntimeException.
 */
public final class Pending {
    /** How often a long wait looks whether its world was left meanwhile (it then never completes). */
    private static final long LEFT_POLL_NANOS = 100_000_000L;

    private final Request request;
    private final MpiWorld world;
    private Status status;

    Pending(Request request, MpiWorld world) {
        this.request = request;
        this.world = world;
    }

    /**
     * Whether the request completed before {@code deadlineNanos}; if not it stays posted (MPJ cannot cancel it). Ends
     * early, false, once the world was left after a node was lost (liveness/README.md): nothing completes then.
     */
    public boolean until(long deadlineNanos) {
        while (true) {
            long slice = System.nanoTime() + LEFT_POLL_NANOS;
            status = BoundedWait.until(request, slice - deadlineNanos < 0 ? slice : deadlineNanos);
            if (status != null) {
                return true;
            }
            if (world.hasLeft() || System.nanoTime() - deadlineNanos >= 0) {
                return false;
            }
        }
    }

    /** The bytes a completed receive of a byte message got. */
    public int byteCount() {
        return status.Get_count(MPI.BYTE);
    }
}
