package org.fanstore.runtime.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.fanstore.prep.format.TestVectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * slices.map as the shim reads it: the golden image (tests/vectors/slices/, also checked by
 * interpose-native/tests/test_slice_view.c), publication by racing threads, and what is never published.
 */
class SliceMapTest {
    private static final SliceMap.Layout PART = SliceMap.Layout.PARTITION;

    @Test
    void writesTheGoldenImage(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("slices.map");
        SliceMap map = SliceMap.create(file, 3, 4);
        assertTrue(map.publish(1, 0, Path.of("/l/parts/p0.fsp"), 4096, PART));
        assertTrue(map.publish(3, 2, Path.of("/l/parts/b0.fsp"), 123456789012L, PART));
        assertTrue(map.published(1) && map.published(3));
        assertFalse(map.published(0) || map.published(2));
        assertArrayEquals(Files.readAllBytes(TestVectors.dir("slices").resolve("slices-map-1.bin")),
                Files.readAllBytes(file));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    }

    @Test
    void racingPublishersLeaveEveryRecordRight(@TempDir Path dir) throws Exception {
        int entries = 20_000;
        int slots = 5;
        Path file = dir.resolve("slices.map");
        SliceMap map = SliceMap.create(file, slots, entries);
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int seed = t;
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int k = 0; k < entries; k++) {
                    int i = (k * 7919 + seed * 104729) % entries;   // each thread in another order
                    map.publish(i, i % slots, Path.of("/local/parts/part-" + (i % slots) + ".fsp"), 4096L * i + 7,
                            PART);
                }
            });
            th.start();
            threads.add(th);
        }
        go.countDown();
        for (Thread th : threads) {
            th.join(60_000);
        }
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(SliceMap.length(slots, entries), b.capacity());
        for (int s = 0; s < slots; s++) {
            int at = SliceMap.HEADER_BYTES + s * SliceMap.SLOT_BYTES;
            byte[] path = new byte[b.getInt(at)];
            b.get(at + 4, path);
            assertEquals("/local/parts/part-" + s + ".fsp", new String(path, java.nio.charset.StandardCharsets.UTF_8));
        }
        int records = SliceMap.HEADER_BYTES + slots * SliceMap.SLOT_BYTES;
        for (int i = 0; i < entries; i++) {
            assertEquals(i % slots + 1, b.getInt(records + i * SliceMap.ENTRY_BYTES), "slot word of entry " + i);
            assertEquals(4096L * i + 7, b.getLong(records + i * SliceMap.ENTRY_BYTES + 8), "offset of entry " + i);
        }
    }

    @Test
    void aPathTooLongForItsSlotIsNotPublished(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("slices.map");
        SliceMap map = SliceMap.create(file, 2, 3);
        Path tooLong = Path.of("/" + "x".repeat(SliceMap.PATH_MAX));
        assertFalse(map.publishSlot(0, tooLong, PART));
        assertFalse(map.publish(0, 0, tooLong, 0, PART));
        assertFalse(map.publish(1, 0, tooLong, 64, PART), "a refused slot stays refused");
        assertFalse(map.published(0));
        assertFalse(map.published(1));
        Path longest = Path.of("/" + "x".repeat(SliceMap.PATH_MAX - 1));
        assertTrue(map.publish(2, 1, longest, 0, PART));
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(0, bytes.getInt(SliceMap.HEADER_BYTES), "slot 0's length word");
        assertEquals(SliceMap.PATH_MAX, bytes.getInt(SliceMap.HEADER_BYTES + SliceMap.SLOT_BYTES), "slot 1's");
        assertEquals(2, bytes.getInt(SliceMap.HEADER_BYTES + 2 * SliceMap.SLOT_BYTES + 2 * SliceMap.ENTRY_BYTES));
    }

    @Test
    void aSlotAnswersOnlyItsOwnLayout(@TempDir Path dir) throws Exception {
        SliceMap map = SliceMap.create(dir.resolve("slices.map"), 2, 4);
        Path decoded = Path.of("/l/parts/part-00001.fsp.raw");
        Path pulled = Path.of("/l/parts/.pull-part-00001.fsp");
        assertFalse(map.slotPublished(0));
        assertTrue(map.publish(0, 0, decoded, 8192, SliceMap.Layout.DECODED));
        assertTrue(map.slotPublished(0));
        // a rider that saw no decoded copy yet publishes from the pull file: its body offset would be read from the
        // decoded copy, so it must be refused, not answered "already published"
        assertFalse(map.publishSlot(0, pulled, PART));
        assertFalse(map.publish(1, 0, pulled, 4096, PART));
        assertFalse(map.published(1));
        assertTrue(map.publish(2, 0, decoded, 0, SliceMap.Layout.DECODED), "its own layout still publishes");
        assertTrue(map.publish(3, 1, pulled, 4096, PART));
        assertFalse(map.publishSlot(1, decoded, SliceMap.Layout.DECODED), "and the other way round");
    }
}
