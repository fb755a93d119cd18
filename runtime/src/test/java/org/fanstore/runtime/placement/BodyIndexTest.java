package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.prep.format.table.MetadataTableWriter;
import org.fanstore.prep.format.table.NamespaceEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which entries lie in the partitions a puller asks about: every one, in table order, and nothing else. */
class BodyIndexTest {
    @TempDir
    Path dir;

    @Test
    void entriesByPartitionListsTheAskedPartitionsEntriesInTableOrder() throws Exception {
        int[] partitions = {2, 0, 2, -1, 3, 0, 2};   // -1 is broadcast partition 0
        List<NamespaceEntry> entries = new ArrayList<>();
        for (int i = 0; i < partitions.length; i++) {
            entries.add(NamespaceEntry.file(("ds/f" + (partitions.length - i)).getBytes(StandardCharsets.UTF_8),
                    0644, 1, 0, 0, 0, partitions[i]));
        }
        Path file = dir.resolve("t.tbl");
        MetadataTableWriter.write(file, entries, 1, 4, 1, 0);
        try (MetadataTable table = MetadataTable.openDataset(file)) {
            BodyIndex b = new BodyIndex(table);
            assertEquals(BodyIndex.NO_BODY, b.partition(0), "the root has no body");
            int[][] of = b.entriesByPartition(new int[] {2, 0});
            assertEquals(3, of.length, "indexed by partition id, up to the largest asked");
            assertArrayEquals(inPartition(table, 0), of[0]);
            assertNull(of[1], "not asked");
            assertArrayEquals(inPartition(table, 2), of[2]);
            assertEquals(3, of[2].length);
            assertEquals(2, of[0].length);
            assertEquals(0, b.entriesByPartition(new int[0]).length);
            assertArrayEquals(new int[0], b.entriesByPartition(new int[] {4})[4], "asked, but holding nothing");
        }
    }

    /** The entries of partition p, ascending, the simple way. */
    private static int[] inPartition(MetadataTable table, int p) {
        return IntStream.range(0, table.entryCount()).filter(i -> table.partition(i) == p).toArray();
    }
}
