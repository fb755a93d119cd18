package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.prep.format.table.MetadataTableWriter;
import org.fanstore.prep.format.table.NamespaceEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A partition truncated after prep (its manifest line forged to match) is found from the table alone. */
class BodyIndexTest {
    @TempDir
    Path dir;

    @Test
    void aPartitionShorterThanItsBodiesIsNamedBeforeAnyRead() throws Exception {
        List<NamespaceEntry> entries = List.of(
                body("ds/a", 0, 100, 50),       // partition 0: bytes 100..150
                body("ds/b", 1, 4096, 1000),    // partition 1: bytes 4096..5096
                body("ds/c", -1, 200, 10));     // broadcast 0: bytes 200..210
        Path file = dir.resolve("t.tbl");
        MetadataTableWriter.write(file, entries, 1, 2, 1, 0);
        try (MetadataTable table = MetadataTable.openDataset(file)) {
            BodyIndex b = new BodyIndex(table);
            assertEquals(BodyIndex.NO_BODY, b.partition(0), "the root has no body");
            assertNull(b.firstOverrun(List.of(part(0, 150, false), part(1, 5096, false), part(0, 210, true))));
            String line = b.firstOverrun(List.of(part(0, 150, false), part(1, 4150, false), part(0, 210, true)));
            assertTrue(line != null && line.contains("part-1.fsp has 4150 bytes") && line.contains("up to byte 5096"),
                    line);
            assertTrue(b.firstOverrun(List.of(part(0, 150, false), part(1, 5096, false), part(0, 209, true)))
                    .contains("bcast-0.fsp"));
        }
    }

    private static NamespaceEntry body(String key, int partition, long offset, long length) {
        return new NamespaceEntry(key.getBytes(StandardCharsets.UTF_8), 0100644, length, 0, 0, 0, 0, 0, partition,
                null, offset, length, 0, 0);
    }

    private static PartitionInfo part(int index, long bytes, boolean broadcast) {
        return new PartitionInfo(index, (broadcast ? "bcast-" : "part-") + index + ".fsp", bytes, 0, 1, broadcast);
    }
}
