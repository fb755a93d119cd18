package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.fanstore.prep.format.FileModes;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.runtime.shm.SliceMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The background slice pass's order: table order until a reader gets ahead of it (an open that had to decode its
 * own entry), then the entries just after that reader, then the rest; every entry taken once. A real LZ4 dataset
 * packed as prep does, loaded as the only rank, decoded into real decoded copies.
 */
class SlicePassOrderTest {
    @TempDir
    Path root;

    @Test
    void thePassContinuesJustAfterAReaderAheadOfItAndStillTakesEveryEntryOnce() throws Exception {
        try (LoadedDataset ds = LoadedDataset.lz4Texts(root, 40, 500, 2, 1)) {
            Manifest manifest = ds.manifest;
            MetadataTable table = ds.table;
            int entries = ds.bodies.entries();
            SliceMap map = SliceMap.create(root.resolve("slices.map"), manifest.partitions().size(), entries);
            try (DecodedArenas arenas = DecodedArenas.create(table, ds.bodies, ds.local, ds.check, 0);
                 SlicePublisher pass = new SlicePublisher(table, ds.bodies, ds.local, ds.check, map,
                         manifest.regularPartitions().size(), true)) {
                pass.attach(arenas);
                List<Integer> order = new ArrayList<>();
                for (int k = 0; k < 2; k++) {
                    order.add(pass.nextEntry());
                    pass.publish(order.get(k));            // as the pass does with each entry it takes
                }
                int ahead = -1;
                for (int i = entries / 2; ahead < 0; i++) {
                    ahead = FileModes.isRegular(table.mode(i)) ? i : -1;
                }
                assertEquals(SlicePublisher.DECODED_SLICE, pass.publishForReader(ahead), "the reader decoded it");
                for (int i; (i = pass.nextEntry()) < entries; ) {
                    order.add(i);
                    pass.publish(i);
                    if (i == ahead + 2) {
                        pass.publishForReader(ahead + 1);   // the pass got there first: it stays where it is
                    }
                }
                List<Integer> expected = new ArrayList<>(List.of(0, 1));
                for (int i = ahead + 1; i < entries; i++) {
                    expected.add(i);
                }
                for (int i = 2; i < entries; i++) {
                    expected.add(i);                        // the front, after the reader's part (skips what is done)
                }
                assertEquals(expected, order);

                assertEquals(0, pass.publishAll(), "both cursors are at the end: a second pass takes nothing");
                for (int i = 0; i < entries; i++) {
                    assertEquals(FileModes.isRegular(table.mode(i)), map.published(i), "entry " + i);
                }
                assertTrue(arenas.covers(ds.bodies.partition(ahead)));
            }
        }
    }
}
