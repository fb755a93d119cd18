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
    private final Request request;
    private Status status;

    Pending(Request request) {
        this.request = request;
    }

    /** Whether the request completed before {@code deadlineNanos}; if not it stays posted (MPJ cannot cancel it). */
    public boolean until(long deadlineNanos) {
        status = BoundedWait.until(request, deadlineNanos);
        return status != null;
    }

    /** The bytes a completed receive of a byte message got. */
    public int byteCount() {
        return status.Get_count(MPI.BYTE);
    }
}
