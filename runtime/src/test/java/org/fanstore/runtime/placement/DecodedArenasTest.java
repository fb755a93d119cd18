package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.fanstore.prep.DatasetPacker;
import org.fanstore.prep.PrepOptions;
import org.fanstore.prep.PrepProgress;
import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.PartitionReader;
import org.fanstore.runtime.index.IndexCodec;
import org.fanstore.runtime.index.NamespaceBuilder;
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
        Path src = Files.createDirectories(root.resolve("src/ds"));
        for (int i = 0; i < 8; i++) {
            Files.writeString(src.resolve("f" + i), ("line " + i + " of a compressible text\n").repeat(2000));
        }
        Path data = root.resolve("ds.fs");
        DatasetPacker.prep(new PrepOptions(src, data, null, 2, Compression.LZ4, List.of(), 1, null, false, false),
                PrepProgress.silent(), line -> { });
        Manifest manifest = Manifest.read(data);
        Placement placement = new Placement(2, 0);
        PartitionLoader loader = new PartitionLoader(data, manifest, root.resolve("local"));
        byte[][] contributions = new byte[2][];
        Path pulledFile = null;
        int pulled = -1;
        try (LocalPartitions local = new LocalPartitions()) {
            for (int rank = 0; rank < 2; rank++) {
                List<IndexRecord> records = new ArrayList<>();
                for (PartitionInfo info : PartitionLoader.heldBy(manifest, placement, rank)) {
                    try (PartitionReader reader = loader.copy(info, bytes -> { })) {
                        records.addAll(loader.index(reader, info.index()));
                        if (rank == 0) {
                            local.add(info.index(), reader.file());
                        } else {     // rank 1's partition: what rank 0's puller brings in later
                            pulled = info.index();
                            pulledFile = reader.file();
                        }
                    }
                }
                contributions[rank] = IndexCodec.encode(records);
            }
            NamespaceBuilder.Namespace ns = NamespaceBuilder.publish(contributions, placement, 0,
                    root.resolve("meta.table"), loader.filesDir());
            local.attach(ns.bodies());
            BodyCheck check = new BodyCheck(ns.table(), ns.bodies(), local, 0, data.toString());
            local.attach(check);
            try (DecodedArenas arenas = DecodedArenas.create(ns.table(), ns.bodies(), local, check, 0)) {
                long[] taken = {0};
                arenas.roomFrom(bytes -> {
                    taken[0] += bytes;
                    return true;
                }, bytes -> taken[0] -= bytes);
                local.add(pulled, pulledFile);
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
            ns.table().close();
        }
    }

    private static long rawCopies(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(f -> f.getFileName().toString().endsWith(".raw")).count();
        }
    }
}
