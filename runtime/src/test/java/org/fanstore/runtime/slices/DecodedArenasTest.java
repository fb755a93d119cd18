package org.fanstore.runtime.slices;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The decoded copy of a pulled LZ4 partition and the pull's --local-capacity budget: the room it takes is given
 * back when the copy is not made (its slice slot already names the pull file, which a rider published first), so
 * what the budget counts is what the disk holds. A real dataset packed as prep does, loaded as rank 0 of 2.
 */
class DecodedArenasTest {
    @TempDir
    Path root;

    @Test
    void aPulledPartitionsCopyThatLosesItsSlotGivesItsRoomBack() throws Exception {
        try (LoadedDataset ds = LoadedDataset.lz4Texts(root, 8, 2000, 2, 2)) {
            // rank 1's partition: what rank 0's puller brings in later
            Map.Entry<Integer, Path> other = List.copyOf(ds.othersFiles.entrySet()).get(ds.othersFiles.size() - 1);
            int pulled = other.getKey();
            Path pulledFile = other.getValue();
            try (DecodedArenas arenas = DecodedArenas.create(ds.table, ds.bodies, ds.local, ds.check, 0)) {
                long[] taken = {0};
                arenas.roomFrom(bytes -> {
                    taken[0] += bytes;
                    return true;
                }, bytes -> taken[0] -= bytes);
                ds.local.add(pulled, pulledFile);
                long before = rawCopies(pulledFile.getParent());

                assertFalse(arenas.addPulled(pulled, copy -> false), "the slot names the pull file already");
                assertEquals(0, taken[0], "the room taken for the copy was given back");
                assertEquals(before, rawCopies(pulledFile.getParent()), "and the copy's file removed");

                Path[] made = new Path[1];
                assertTrue(arenas.addPulled(pulled, copy -> {
                    made[0] = copy;
                    return true;
                }));
                assertEquals(Files.size(made[0]), taken[0], "a copy made keeps the room of its length");
                assertTrue(taken[0] > 0);
                assertEquals(before + 1, rawCopies(pulledFile.getParent()));
            }
        }
    }

    private static long rawCopies(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(f -> f.getFileName().toString().endsWith(".raw")).count();
        }
    }
}
