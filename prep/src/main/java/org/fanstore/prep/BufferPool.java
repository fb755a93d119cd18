package org.fanstore.prep;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Recycles the byte arrays that carry file bodies from the reader threads to the writer. Packing 100k small
 * files would otherwise allocate (and zero, and garbage-collect) every byte once more. Arrays come in power-of-
 * two sizes from 4 KiB up; each size keeps at most {@link #RETAINED_BYTES_PER_SIZE} bytes of idle arrays.
 */
final class BufferPool {
    private static final int MIN_SHIFT = 12;
    private static final int MAX_SHIFT = 31;
    private static final long RETAINED_BYTES_PER_SIZE = 64L << 20;

    /** Idle arrays of {@code 1 << shift} bytes at index {@code shift} (those below MIN_SHIFT stay empty). */
    private final List<ConcurrentLinkedQueue<byte[]>> idle = new ArrayList<>(MAX_SHIFT + 1);
    private final AtomicLongArray idleBytes = new AtomicLongArray(MAX_SHIFT + 1);

    BufferPool() {
        for (int i = 0; i <= MAX_SHIFT; i++) {
            idle.add(new ConcurrentLinkedQueue<>());
        }
    }

    /** An array of at least {@code length} bytes (contents undefined). */
    byte[] take(final int length) {
        final int shift = shiftFor(length);
        if (shift > 30) {
            return new byte[length];
        }
        final byte[] recycled = idle.get(shift).poll();
        if (recycled != null) {
            idleBytes.addAndGet(shift, -recycled.length);
            return recycled;
        }
        return new byte[1 << shift];
    }

    /** Returns an array from {@link #take} for reuse. */
    void give(final byte[] array) {
        final int shift = Integer.numberOfTrailingZeros(array.length);
        if (Integer.bitCount(array.length) != 1 || shift < MIN_SHIFT || shift > 30) {
            return;
        }
        if (idleBytes.addAndGet(shift, array.length) <= RETAINED_BYTES_PER_SIZE) {
            idle.get(shift).offer(array);
        } else {
            idleBytes.addAndGet(shift, -array.length);
        }
    }

    private static int shiftFor(final int length) {
        final int shift = length <= 1 ? 0 : 32 - Integer.numberOfLeadingZeros(length - 1);
        return Math.max(MIN_SHIFT, shift);
    }
}
