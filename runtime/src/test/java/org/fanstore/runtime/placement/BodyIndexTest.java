package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.junit.jupiter.api.Test;

/** Which entries lie in the partitions a puller asks about: every one, in table order, and nothing else. */
class BodyIndexTest {
    private static void file(BodyIndex b, int index, int partition) {
        b.set(index, new IndexRecord(new PartitionEntry(new byte[] {'f'}, PartitionDescriptor.TYPE_FILE, 0, 0100644,
                0, 0, 0, 0, 1, 1, 4096 + index, 0), partition, null));
    }

    @Test
    void entriesByPartitionListsTheAskedPartitionsEntriesInTableOrder() {
        BodyIndex b = new BodyIndex(9);   // 0 and 8 have no body (directories); -1 is a broadcast partition
        int[] partitions = {BodyIndex.NO_BODY, 2, 0, 2, -1, 3, 0, 2, BodyIndex.NO_BODY};
        for (int i = 0; i < partitions.length; i++) {
            if (partitions[i] != BodyIndex.NO_BODY) {
                file(b, i, partitions[i]);
            }
        }
        int[][] of = b.entriesByPartition(new int[] {2, 0});
        assertEquals(3, of.length, "indexed by partition id, up to the largest asked");
        assertArrayEquals(new int[] {2, 6}, of[0]);
        assertNull(of[1], "not asked");
        assertArrayEquals(new int[] {1, 3, 7}, of[2]);
        assertEquals(0, b.entriesByPartition(new int[0]).length);
        assertArrayEquals(new int[0], b.entriesByPartition(new int[] {4})[4], "asked, but holding nothing");
    }
}
