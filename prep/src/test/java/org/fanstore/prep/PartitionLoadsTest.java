package org.fanstore.prep;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;

import org.junit.jupiter.api.Test;

class PartitionLoadsTest {
    @Test
    void startsAtPartitionZeroAndBreaksTiesByLowestIndex() {
        final PartitionLoads loads = new PartitionLoads(3);
        assertEquals(0, loads.least());
        loads.addToLeast(10);
        assertEquals(1, loads.least());
        loads.addToLeast(10);
        assertEquals(2, loads.least());
        loads.addToLeast(5);
        assertEquals(2, loads.least(), "5 bytes is still the smallest load");
        loads.addToLeast(5);
        assertEquals(0, loads.least(), "all at 10: the lowest index wins");
    }

    @Test
    void alwaysPicksWhatALinearScanWouldPick() {
        final Random random = new Random(11);
        for (final int partitions : new int[] {1, 2, 7, 64}) {
            final PartitionLoads loads = new PartitionLoads(partitions);
            final long[] expected = new long[partitions];
            for (int i = 0; i < 2_000; i++) {
                int least = 0;
                for (int p = 1; p < partitions; p++) {
                    if (expected[p] < expected[least]) {
                        least = p;
                    }
                }
                assertEquals(least, loads.least(), "step " + i + " with " + partitions + " partitions");
                final long bytes = random.nextInt(4) == 0 ? 0 : random.nextInt(1000);
                expected[least] += bytes;
                loads.addToLeast(bytes);
            }
        }
    }
}
