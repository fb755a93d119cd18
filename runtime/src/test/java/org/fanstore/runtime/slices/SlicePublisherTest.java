package org.fanstore.runtime.slices;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.runtime.placement.BodyIndex;
import org.fanstore.runtime.shm.SliceMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link SlicePublisher#publishFor} says it read, which an open's statistics count as the bytes the runtime
 * read for it: a raw body checked by this call, and nothing for an entry published before or already checked (the
 * fill's sums check a whole partition). CI once saw a raw file counted by every open after the one that checked it.
 */
class SlicePublisherTest {
    @TempDir
    Path root;

    @Test
    void onlyTheCallThatReadsARawBodySaysSo() throws Exception {
        Path src = Files.createDirectories(root.resolve("src/ds"));
        for (int i = 0; i < 4; i++) {
            Files.write(src.resolve("tiny" + i), new byte[] {(byte) ('a' + i)});   // too small to compress: raw
            Files.writeString(src.resolve("text" + i), ("line " + i + " of a text\n").repeat(2000));
        }
        try (LoadedDataset ds = LoadedDataset.lz4(root, src, 1, 1)) {
            List<Integer> raw = new ArrayList<>();
            int compressed = 0;
            for (int i = 0; i < ds.bodies.entries(); i++) {
                if (ds.bodies.partition(i) == BodyIndex.NO_BODY) {
                    continue;
                }
                if (ds.bodies.codec(i) == PartitionDescriptor.CODEC_RAW) {
                    raw.add(i);
                } else {
                    compressed++;
                }
            }
            assertEquals(4, raw.size(), "the four one-byte files are stored raw");
            assertEquals(4, compressed);
            SliceMap map = SliceMap.create(root.resolve("slices.map"), 1, ds.bodies.entries());
            // no decoded copies: raw entries are slices of the partition copy, checked on their first publish
            SlicePublisher sp = new SlicePublisher(ds.table, ds.bodies, ds.local, ds.check, map, 1, true);

            int first = raw.get(0);
            assertTrue(sp.publishable(first));
            assertEquals(SlicePublisher.CHECKED_SLICE, sp.publishFor(first), "the first publish reads the body");
            assertEquals(SlicePublisher.SLICE, sp.publishFor(first), "published before: nothing read");

            int settled = raw.get(1);
            ds.check.settle(settled, ds.bodies.crc32c(settled));   // as the fill does from a whole partition's sums
            assertEquals(SlicePublisher.SLICE, sp.publishFor(settled), "checked before: nothing read");
            assertEquals(SlicePublisher.SLICE, sp.publishFor(settled));
        }
    }
}
