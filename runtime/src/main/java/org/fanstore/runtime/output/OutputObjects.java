package org.fanstore.runtime.output;

/**
 * Object ids of committed output files ({@link OutputRecord#objectId}), as served to other ranks by remote
 * fetch. They live in their own range, far above the partition bodies (metadata entry indices, ints) and the
 * whole partition files ({@code 2^40 + partition}), so one fetch service can route a request by its id alone.
 * The holder hands them out, with its rank in bits 32..47, so an id is unique in the job: a reader keys its
 * fetches and copies by id alone.
 */
public final class OutputObjects {
    /** The first output object id: 2^48. */
    public static final long FIRST = 1L << 48;

    private OutputObjects() {
    }

    public static boolean isOutput(long objectId) {
        return objectId >= FIRST;
    }

    /** The object id of the {@code n}th file {@code rank} published. */
    public static long of(int rank, int n) {
        return FIRST + ((long) rank << 32) + Integer.toUnsignedLong(n);
    }
}
