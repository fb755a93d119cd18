package org.fanstore.runtime.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.runtime.placement.IndexRecord;
import org.junit.jupiter.api.Test;

class IndexCodecTest {

    @Test
    void roundTripKeepsEveryFieldAndRawKeyBytes() {
        byte[] oddName = {'d', '/', (byte) 0xff, (byte) 0xfe, 'x'};
        IndexRecord file = new IndexRecord(new PartitionEntry(oddName, PartitionDescriptor.TYPE_FILE, 1, 0100644,
                1000, 100, -5L, 999_999_999, 5L << 31, 1234, 1L << 40, 0xCAFEBABE), IndexRecord.broadcastPartition(2),
                null);
        IndexRecord link = new IndexRecord(new PartitionEntry("d/l".getBytes(StandardCharsets.UTF_8),
                PartitionDescriptor.TYPE_SYMLINK, 0, 0120777, 0, 0, 7, 0, 3, 3, 0, 0), 4,
                "../a".getBytes(StandardCharsets.UTF_8));
        List<IndexRecord> back = IndexCodec.decode(IndexCodec.encode(List.of(file, link)), 3);
        assertEquals(2, back.size());
        IndexRecord f = back.get(0);
        assertArrayEquals(oddName, f.key());
        assertEquals(file.entry(), f.entry());
        assertEquals(List.of(-5L, 5L << 31, 1234L, 1L << 40),
                List.of(f.entry().mtimeSec(), f.entry().rawLength(), f.entry().storedLength(), f.entry().bodyOffset()));
        assertEquals(file.partition(), f.partition());
        assertTrue(f.broadcast());
        assertNull(f.linkTarget());
        assertArrayEquals("../a".getBytes(StandardCharsets.UTF_8), back.get(1).linkTarget());
    }

    @Test
    void truncatedContributionNamesTheRank() {
        byte[] bytes = IndexCodec.encode(List.of(new IndexRecord(new PartitionEntry(new byte[] {'a'}, 1, 0, 0100644,
                0, 0, 0, 0, 1, 1, 0, 0), 0, null)));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> IndexCodec.decode(Arrays.copyOf(bytes, bytes.length - 3), 2));
        assertTrue(e.getMessage().contains("rank 2"), e.getMessage());
    }
}
