package org.fanstore.prep.format.table;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.TableInfo;
import org.fanstore.prep.format.TestVectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fanstore upgrade}'s table step on a dataset prepped with format 2 (tests/vectors/upgrade/format2.fs: the
 * golden partition dataset as it was before format 3, kept byte for byte): the old table is refused naming its
 * format, rebuilding it from the partition gives exactly the format-3 table and manifest prep now writes for the
 * same partition (tests/vectors/partition), and verify finds nothing wrong with it.
 */
class FormatTwoUpgradeTest {
    @Test
    void aFormatTwoDatasetIsRebuiltAsPrepWouldWriteItToday(@TempDir final Path temp) throws IOException {
        final Path fixture = TestVectors.dir("upgrade").resolve("format2.fs");
        final Path dir = Files.createDirectories(temp.resolve("format2.fs"));
        for (final String name : List.of("manifest.txt", "part-00000.fsp", TableInfo.FILE_NAME)) {
            Files.copy(fixture.resolve(name), dir.resolve(name));
        }
        final Path table = dir.resolve(TableInfo.FILE_NAME);
        assertEquals(MetadataTableDescriptor.FORMAT_2_VERSION, versionWord(table), "the fixture is format 2");
        final IOException old = assertThrows(IOException.class, () -> MetadataTable.openDataset(table).close());
        assertTrue(old.getMessage().contains("format 2"), old.getMessage());
        final Manifest manifest = Manifest.read(dir);
        assertFalse(faults(dir, manifest).isEmpty(), "verify reports the format-2 table");

        final Manifest upgraded = DatasetTable.write(dir, manifest);
        upgraded.write(dir);

        assertEquals(MetadataTableDescriptor.VERSION, versionWord(table));
        final Path now = TestVectors.dir("partition");
        assertArrayEquals(Files.readAllBytes(now.resolve(TableInfo.FILE_NAME)), Files.readAllBytes(table),
            "the upgraded table is the one prep writes for this partition");
        assertEquals(Files.readString(now.resolve("manifest.txt")), Files.readString(dir.resolve("manifest.txt")));
        assertEquals(List.of(), faults(dir, Manifest.read(dir)));
        try (MetadataTable t = MetadataTable.openDataset(table)) {
            assertEquals(manifest.files() + manifest.dirs() + manifest.symlinks() + 1, t.entryCount());
            final int hello = t.lookup("golden/data/hello.txt".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            assertTrue(hello > 0);
            assertEquals(16, t.size(hello));
        }
    }

    private static int versionWord(final Path table) throws IOException {
        return ByteBuffer.wrap(Files.readAllBytes(table)).order(ByteOrder.LITTLE_ENDIAN)
            .getInt(MetadataTableDescriptor.VERSION_OFFSET);
    }

    private static List<String> faults(final Path dir, final Manifest manifest) throws IOException {
        final List<String> faults = new ArrayList<>();
        TableVerifier.check(dir, manifest, (path, problem) -> faults.add(path + ": " + problem));
        return faults;
    }
}
