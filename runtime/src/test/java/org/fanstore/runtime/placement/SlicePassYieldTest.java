package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.fanstore.prep.format.FileModes;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.runtime.shm.BackgroundFloor;
import org.fanstore.runtime.shm.SliceMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The background slice pass gives way to readers short of CPU that do not need it: while they are starved and none
 * opened an entry it had not published lately, it starts at most one entry per floor interval; a reader's open of an
 * unpublished entry, or readers no longer starved, let it run at full speed again, and it still publishes every entry.
 * A real LZ4 dataset packed as prep does, decoded by the pass's own threads into real decoded copies.
 */
class SlicePassYieldTest {
    @TempDir
    Path root;

    @Test
    void thePassKeepsToTheFloorWhileStarvedReadersDoNotNeedItAndFinishesOnceTheyDo() throws Exception {
        try (LoadedDataset ds = LoadedDataset.lz4Texts(root, 40, 500, 2, 1)) {
            MetadataTable table = ds.table;
            int entries = ds.bodies.entries();
            SliceMap map = SliceMap.create(root.resolve("slices.map"), ds.manifest.partitions().size(), entries);
            try (DecodedArenas arenas = DecodedArenas.create(table, ds.bodies, ds.local, ds.check, 0);
                 SlicePublisher pass = new SlicePublisher(table, ds.bodies, ds.local, ds.check, map,
                         ds.manifest.regularPartitions().size(), true)) {
                pass.attach(arenas);
                AtomicBoolean starved = new AtomicBoolean(true);
                pass.yieldWhen(now -> starved.get());
                assertTrue(pass.yields(System.nanoTime()), "starved readers, none needed an entry yet");

                long start = System.nanoTime();
                pass.startBackground(0, false, 2);
                awaitPublished(map, entries, 1);   // the floor lets one entry through at once
                Thread.sleep(100);
                int seen = published(map, entries);
                long elapsed = System.nanoTime() - start;
                assertTrue(seen <= 1 + elapsed / BackgroundFloor.INTERVAL_NANOS,
                        seen + " entries in " + elapsed / 1_000_000 + " ms: more than one per floor interval");

                int unpublished = -1;
                for (int i = entries - 1; unpublished < 0; i--) {
                    unpublished = FileModes.isRegular(table.mode(i)) && !map.published(i) ? i : -1;
                }
                assertEquals(SlicePublisher.DECODED_SLICE, pass.publishForReader(unpublished));
                assertFalse(pass.yields(System.nanoTime()), "a reader just needed an entry the pass had not published");
                assertTrue(pass.yields(System.nanoTime() + SlicePublisher.NEEDED_RECENT_NANOS + 1_000_000),
                        "and once that is no longer recent, starved readers make it give way again");

                starved.set(false);
                int regular = 0;
                for (int i = 0; i < entries; i++) {
                    regular += FileModes.isRegular(table.mode(i)) ? 1 : 0;
                }
                awaitPublished(map, entries, regular);
                for (int i = 0; i < entries; i++) {
                    assertEquals(FileModes.isRegular(table.mode(i)), map.published(i), "entry " + i);
                }
            }
        }
    }

    private static int published(SliceMap map, int entries) {
        int n = 0;
        for (int i = 0; i < entries; i++) {
            n += map.published(i) ? 1 : 0;
        }
        return n;
    }

    private static void awaitPublished(SliceMap map, int entries, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (published(map, entries) < count) {
            assertTrue(System.nanoTime() < deadline, "fewer than " + count + " entries published within 30 s");
            Thread.sleep(2);
        }
    }
}
