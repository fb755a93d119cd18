package org.fanstore.runtime.stats;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Durations in nanoseconds counted in fixed log-scale buckets: four buckets per power of two (each at most 25%
 * wide), so p50/p99 cost no sorting and no memory growth, and recording is one atomic increment. Values below 4
 * ns have a bucket each. Histograms of several ranks merge by adding bucket counts (the launcher does so from
 * {@link #encode()}).
 */
public final class LatencyHistogram {
    /** Buckets per power of two, as bits. */
    private static final int SUB_BITS = 2;
    private static final int SUB = 1 << SUB_BITS;
    /** Enough for any positive long. */
    public static final int BUCKETS = SUB * (64 - SUB_BITS);

    private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);

    public void record(long nanos) {
        counts.incrementAndGet(bucketOf(nanos));
    }

    public long count() {
        long n = 0;
        for (int i = 0; i < BUCKETS; i++) {
            n += counts.get(i);
        }
        return n;
    }

    /** A copy of the bucket counts. */
    public long[] snapshot() {
        long[] out = new long[BUCKETS];
        for (int i = 0; i < BUCKETS; i++) {
            out[i] = counts.get(i);
        }
        return out;
    }

    /** Non-empty buckets as {@code index:count,...} (empty string for none): compact for a key=value line. */
    public String encode() {
        return encode(snapshot());
    }

    static String encode(long[] buckets) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < buckets.length; i++) {
            if (buckets[i] != 0) {
                sb.append(sb.length() == 0 ? "" : ",").append(i).append(':').append(buckets[i]);
            }
        }
        return sb.toString();
    }

    /** Adds the buckets of an {@link #encode()}d histogram into {@code into}; malformed pairs are skipped. */
    public static void decodeInto(String encoded, long[] into) {
        if (encoded == null || encoded.isEmpty()) {
            return;
        }
        for (String pair : encoded.split(",")) {
            int colon = pair.indexOf(':');
            try {
                int i = Integer.parseInt(pair.substring(0, colon));
                if (i >= 0 && i < into.length) {
                    into[i] += Long.parseLong(pair.substring(colon + 1));
                }
            } catch (NumberFormatException | IndexOutOfBoundsException ignored) {
                // not ours: a newer runtime's format is not guessed at
            }
        }
    }

    static int bucketOf(long nanos) {
        if (nanos < SUB) {
            return (int) Math.max(0, nanos);
        }
        int exponent = 63 - Long.numberOfLeadingZeros(nanos);
        int sub = (int) (nanos >>> (exponent - SUB_BITS)) & (SUB - 1);
        return SUB * (exponent - SUB_BITS + 1) + sub;
    }

    /** Smallest value of bucket i. */
    static long lowerBound(int i) {
        if (i < SUB) {
            return i;
        }
        int exponent = i / SUB + SUB_BITS - 1;
        return (long) (SUB + i % SUB) << (exponent - SUB_BITS);
    }

    /** The mean as bucket midpoints weigh it (within 12.5%, like the percentiles); 0 for no data. */
    public static long mean(long[] buckets) {
        long total = 0;
        double sum = 0;
        for (int i = 0; i < buckets.length; i++) {
            if (buckets[i] != 0) {
                long lo = lowerBound(i);
                long hi = i + 1 < BUCKETS ? lowerBound(i + 1) : lo;
                total += buckets[i];
                sum += buckets[i] * (lo + (hi - lo) / 2.0);
            }
        }
        return total == 0 ? 0 : Math.round(sum / total);
    }

    /**
     * The value below which a fraction q of the counted durations lie, as the middle of the bucket holding it
     * (within 12.5% of the truth); 0 for no data.
     */
    public static long percentile(long[] buckets, double q) {
        long total = 0;
        for (long c : buckets) {
            total += c;
        }
        if (total == 0) {
            return 0;
        }
        long rank = (long) Math.ceil(q * total);
        long seen = 0;
        for (int i = 0; i < buckets.length; i++) {
            seen += buckets[i];
            if (seen >= Math.max(1, rank)) {
                long lo = lowerBound(i);
                long hi = i + 1 < BUCKETS ? lowerBound(i + 1) : Long.MAX_VALUE;
                return lo + (hi - lo) / 2;
            }
        }
        return lowerBound(BUCKETS - 1);
    }
}
