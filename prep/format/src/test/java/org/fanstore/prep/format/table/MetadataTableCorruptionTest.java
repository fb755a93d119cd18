package org.fanstore.prep.format.table;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Random byte flips in a valid table: open refuses the copy with an IOException, or every accessor works on it. */
class MetadataTableCorruptionTest {
    @Test
    void damagedTablesAreRefusedOrSafeToWalk(@TempDir final Path temp) throws IOException {
        final byte[] good = Files.readAllBytes(MetadataTableVectorsTest.vectorDir().resolve(MetadataVectors.BASIC));
        final Random random = new Random(7);
        final Path copy = temp.resolve("damaged.tbl");
        int accepted = 0;
        int refused = 0;
        for (int iteration = 0; iteration < 1000; iteration++) {
            final byte[] bytes = good.clone();
            for (int flips = 1 + random.nextInt(4); flips > 0; flips--) {
                final int at = random.nextBoolean() ? random.nextInt(400) : random.nextInt(bytes.length);
                bytes[at] ^= (byte)(1 + random.nextInt(255));
            }
            Files.write(copy, bytes);
            final MetadataTable table;
            try {
                table = MetadataTable.open(copy);
            } catch (final IOException expected) {
                refused++;
                continue;
            }
            try (table) {
                accepted++;
                for (int i = 0; i < table.entryCount(); i++) {
                    final byte[] key = table.key(i);
                    table.lookup(key);
                    table.linkTarget(i);
                    table.key(table.parent(i));
                    for (int k = 0; k < table.childCount(i); k++) {
                        table.key(table.child(i, k));
                    }
                }
                table.localRoot();
                table.lookup(new byte[]{1, 2, 3});
            }
        }
        assertTrue(refused > 0 && accepted > 0, "refused " + refused + ", accepted " + accepted);
    }
}
