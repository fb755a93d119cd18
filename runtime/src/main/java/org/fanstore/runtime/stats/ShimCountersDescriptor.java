package org.fanstore.runtime.stats;

import java.nio.charset.StandardCharsets;

/**
 * Layout of {@code shim.counters} (spec: README.md in this folder; C twin: interpose-native/src/shim_counters.h;
 * golden image: tests/vectors/stats/shim-counters.bin). 64 native-endian bytes: a header, then u64 counters the
 * shim adds to with relaxed atomic adds.
 */
public final class ShimCountersDescriptor {
    /** "FANSCNT1". */
    public static final byte[] MAGIC = "FANSCNT1".getBytes(StandardCharsets.US_ASCII);
    public static final int VERSION = 2;
    public static final int MAGIC_OFFSET = 0;
    /** u32 {@link #VERSION}. */
    public static final int VERSION_OFFSET = 8;
    /** u32 {@link #COUNTER_COUNT}. */
    public static final int COUNT_OFFSET = 12;
    /** First u64 counter; counter i at {@code counterOffset(i)}. */
    public static final int COUNTERS_OFFSET = 16;
    /** Direct opens of unpacked local files. */
    public static final int LOCAL_OPENS = 0;
    /** Sum of those files' sizes. */
    public static final int LOCAL_BYTES = 1;
    /** Direct opens of cache files (hits the runtime never sees). */
    public static final int CACHE_OPENS = 2;
    /** Sum of those files' sizes. */
    public static final int CACHE_BYTES = 3;
    /** Every runtime answer a client took: ns from the answer stamp in the slot to the client seeing DONE. */
    public static final int WAKE_NANOS = 4;
    /** How many answers {@link #WAKE_NANOS} sums. */
    public static final int WAKES = 5;
    public static final int COUNTER_COUNT = 6;
    /** The whole file: the header and the counters. */
    public static final int FILE_BYTES = 64;

    private ShimCountersDescriptor() {
    }

    public static int counterOffset(int counter) {
        return COUNTERS_OFFSET + 8 * counter;
    }
}
