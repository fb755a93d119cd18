package org.fanstore.runtime.output;

/**
 * Object ids of committed output files ({@link OutputRecord#objectId}), as served to other ranks by remote
 * fetch. They live in their own range, far above the partition bodies (metadata entry indices, ints) and the
 * whole partition files ({@code 2^40 + partition}), so one fetch service can route a request by its id alone.
 * The holder hands them out; an id is never reused for other bytes within a job.
 */
public final class OutputObjects {
    /** The first output object id: 2^48. */
    public static final long FIRST = 1L << 48;

    private OutputObjects() {
    }

    public static boolean isOutput(long objectId) {
        return objectId >= FIRST;
    }

    /** The object id of the {@code n}th file this rank published. */
    public static long nth(int n) {
        return FIRST + Integer.toUnsignedLong(n);
    }
}
