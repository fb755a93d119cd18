package org.fanstore.runtime.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** Log-scale buckets: every value lands in the bucket whose bounds hold it, percentiles within a bucket. */
class LatencyHistogramTest {
    @Test
    void everyValueLiesWithinItsBucketsBounds() {
        Random random = new Random(11);
        for (int n = 0; n < 100_000; n++) {
            long v = n < 1000 ? n : (random.nextLong() >>> 1) >>> random.nextInt(63);
            int b = LatencyHistogram.bucketOf(v);
            assertTrue(LatencyHistogram.lowerBound(b) <= v, v + " below bucket " + b);
            if (b + 1 < LatencyHistogram.BUCKETS) {
                assertTrue(v < LatencyHistogram.lowerBound(b + 1), v + " above bucket " + b);
            }
        }
        assertTrue(LatencyHistogram.bucketOf(Long.MAX_VALUE) < LatencyHistogram.BUCKETS);
    }

    @Test
    void percentilesOfAKnownSpreadAreWithinABucket() {
        LatencyHistogram h = new LatencyHistogram();
        for (int i = 1; i <= 1000; i++) {
            h.record(i * 1000L);  // 1 us .. 1 ms, uniform
        }
        long[] buckets = h.snapshot();
        assertEquals(1000, h.count());
        long p50 = LatencyHistogram.percentile(buckets, 0.5);
        long p99 = LatencyHistogram.percentile(buckets, 0.99);
        assertTrue(Math.abs(p50 - 500_000) <= 500_000 / 8, "p50 " + p50);
        assertTrue(Math.abs(p99 - 990_000) <= 990_000 / 8, "p99 " + p99);
        assertEquals(0, LatencyHistogram.percentile(new long[LatencyHistogram.BUCKETS], 0.99));
        long mean = LatencyHistogram.mean(buckets);  // 500.5 us; a skewed tail must pull the mean, not the p50
        assertTrue(Math.abs(mean - 500_500) <= 500_500 / 8, "mean " + mean);
        h.record(1_000_000_000L);
        assertTrue(LatencyHistogram.mean(h.snapshot()) > 1_400_000, "one 1 s outlier in 1001 adds ~1 ms");
        assertEquals(0, LatencyHistogram.mean(new long[LatencyHistogram.BUCKETS]));
    }

    @Test
    void encodedHistogramsMergeByAddingBuckets() {
        LatencyHistogram a = new LatencyHistogram();
        LatencyHistogram b = new LatencyHistogram();
        a.record(100);
        a.record(5_000);
        b.record(5_000);
        long[] merged = new long[LatencyHistogram.BUCKETS];
        LatencyHistogram.decodeInto(a.encode(), merged);
        LatencyHistogram.decodeInto(b.encode(), merged);
        assertEquals(1, merged[LatencyHistogram.bucketOf(100)]);
        assertEquals(2, merged[LatencyHistogram.bucketOf(5_000)]);
        assertEquals("", new LatencyHistogram().encode());
    }
}
