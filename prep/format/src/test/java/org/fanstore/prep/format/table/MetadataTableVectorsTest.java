package org.fanstore.prep.format.table;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import org.fanstore.prep.format.TestVectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shared vectors in tests/vectors/metadata: the writer still produces them byte for byte, and the Java
 * reader gives every answer basic.expect lists and refuses every table malformed.expect lists.
 * Run with -Dfanstore.regenerateVectors=true to rewrite the committed files after a deliberate format change.
 */
class MetadataTableVectorsTest {
    static Path vectorDir() {
        return TestVectors.dir("metadata");
    }

    @Test
    void writerReproducesCommittedVectors(@TempDir final Path temp) throws IOException {
        TestVectors.assertReproduced(vectorDir(), temp, MetadataVectors.writeAll(temp), "format drift");
    }

    @Test
    void readerAnswersEveryExpectedLookup() throws IOException {
        checkExpectations(vectorDir().resolve(MetadataVectors.BASIC), "basic.expect");
    }

    /** The same table with its pool past 4 GiB and its key offsets past 2 GiB (a sparse file): the same answers. */
    @Test
    void readerAnswersEveryLookupOfATableWhosePoolLiesPastFourGib(@TempDir final Path temp) throws IOException {
        final Path far = temp.resolve("far.tbl");
        FarVector.expand(vectorDir().resolve(FarVector.NAME), far);
        try {
            assertTrue(Files.size(far) > (6L << 30), "the expanded table crosses 6 GiB");
            checkExpectations(far, "far.expect");
            try (MetadataTable t = MetadataTable.open(far)) {
                final TableChecksum sum = new TableChecksum();
                final java.nio.ByteBuffer piece = java.nio.ByteBuffer.allocateDirect(8 << 20);
                try (java.nio.channels.FileChannel in = java.nio.channels.FileChannel.open(far)) {
                    for (long at = 0; at < t.tableLength(); ) {
                        piece.clear().limit((int)Math.min(piece.capacity(), t.tableLength() - at));
                        at += in.read(piece, at);
                        sum.update(piece.flip());
                    }
                }
                assertEquals(t.recordedCrc(), sum.value(), "the recorded CRC32C is the far table's");
            }
        } finally {
            Files.deleteIfExists(far);
        }
    }

    private static void checkExpectations(final Path tbl, final String expect) throws IOException {
        final List<String> lines = Files.readAllLines(vectorDir().resolve(expect), US_ASCII);
        int entries = 0;
        int absent = 0;
        try (MetadataTable table = MetadataTable.open(tbl)) {
            for (final String line : lines) {
                final Map<String, String> f = fields(line);
                if (line.startsWith("header ")) {
                    assertEquals(Integer.parseInt(f.get("entries")), table.entryCount());
                    assertEquals(Integer.parseInt(f.get("rank")), table.rank());
                    assertEquals(Integer.parseInt(f.get("world")), table.worldSize());
                    assertEquals(Integer.parseInt(f.get("st_dev")), table.stDev());
                    assertEquals(Long.parseLong(f.get("generation")), table.generation());
                    assertArrayEquals(hex(f.get("local_root")), table.localRoot());
                    assertEquals(Long.parseLong(f.get("total")), table.totalBytes());
                    assertEquals(Long.parseLong(f.get("table_len")), table.tableLength());
                    assertEquals((int)Long.parseLong(f.get("crc"), 16), table.recordedCrc());
                } else if (line.startsWith("entry ")) {
                    checkEntry(table, f, line);
                    entries++;
                } else if (line.startsWith("absent ")) {
                    assertEquals(-1, table.lookup(hex(f.get("key"))), line);
                    absent++;
                }
            }
            assertEquals(table.entryCount(), entries, expect + " must list every entry");
        }
        assertTrue(absent > 0);
    }

    private static void checkEntry(final MetadataTable table, final Map<String, String> f, final String line) {
        final byte[] key = hex(f.get("key"));
        final int i = table.lookup(key);
        assertEquals(Integer.parseInt(f.get("index")), i, line);
        assertArrayEquals(key, table.key(i), line);
        assertEquals(Long.parseUnsignedLong(f.get("hash"), 16), table.hash(i), line);
        assertEquals(Integer.parseInt(f.get("mode").substring(1), 8), table.mode(i), line);
        assertEquals(Long.parseLong(f.get("size")), table.size(i), line);
        final String[] mtime = f.get("mtime").split("\\.");
        assertEquals(Long.parseLong(mtime[0]), table.mtimeSec(i), line);
        assertEquals(Integer.parseInt(mtime[1]), table.mtimeNsec(i), line);
        assertEquals(Integer.parseInt(f.get("uid")), table.uid(i), line);
        assertEquals(Integer.parseInt(f.get("gid")), table.gid(i), line);
        assertEquals(Integer.parseInt(f.get("flags")), table.flags(i), line);
        assertEquals(Integer.parseInt(f.get("partition")), table.partition(i), line);
        assertEquals("1".equals(f.get("local_raw")), table.localRaw(i), line);
        assertEquals(Integer.parseInt(f.get("parent")), table.parent(i), line);
        final String children = f.get("children");
        if (children.equals("-")) {
            assertEquals(0, table.childCount(i), line);
        } else {
            final List<String> names = new ArrayList<>();
            for (int k = 0; k < table.childCount(i); k++) {
                final int c = table.child(i, k);
                assertEquals(i, table.parent(c), line);
                names.add(KeyText.hex(NamespaceModel.name(table.key(c))));
            }
            assertEquals(children, String.join(",", names), line);
        }
        final String target = f.get("target");
        assertArrayEquals(target.equals("-") ? null : hex(target), table.linkTarget(i), line);
        assertTrue(table.keyEquals(i, key), line);
        assertArrayEquals(NamespaceModel.name(key), table.name(i), line);
        assertEquals(Long.parseLong(f.get("body_offset")), table.bodyOffset(i), line);
        assertEquals(Long.parseLong(f.get("stored_length")), table.storedLength(i), line);
        assertEquals((int)Long.parseLong(f.get("body_crc"), 16), table.crc32c(i), line);
        assertEquals((table.flags(i) & MetadataTableDescriptor.FLAG_COMPRESSED) != 0 ? 1 : 0, table.codec(i), line);
        assertEquals(hex(f.get("stored")).length, storedLength(table, i), line);
    }

    @Test
    void readerRefusesEveryMalformedTable() throws IOException {
        int refused = 0;
        for (final String line : Files.readAllLines(vectorDir().resolve("malformed.expect"), US_ASCII)) {
            if (line.startsWith("reject ")) {
                final Path bad = vectorDir().resolve(line.substring("reject ".length()).trim());
                final IOException ex =
                    assertThrows(IOException.class, () -> MetadataTable.open(bad).close(), bad.toString());
                assertTrue(ex.getMessage().contains(bad.toString()), "message names the file: " + ex.getMessage());
                refused++;
            }
        }
        assertTrue(refused >= 10, "malformed.expect lists " + refused + " tables");
    }

    @Test
    void tableOfABuildWithOtherStructSizesIsRefusedNamingBothVersionWords() throws IOException {
        final Path other = vectorDir().resolve(MetadataVectors.OTHER_ENTRY_SIZE);
        final IOException ex = assertThrows(IOException.class, () -> MetadataTable.open(other).close());
        assertTrue(ex.getMessage().contains("entry 80 bytes"), ex.getMessage());
        assertTrue(ex.getMessage().contains("this build reads " + MetadataTableDescriptor.describeVersion(
            MetadataTableDescriptor.VERSION)), ex.getMessage());
        assertEquals(0x03002ca0, MetadataTableDescriptor.VERSION);
    }

    @Test
    void aFormatTwoTableIsRefusedNamingItsVersionWord() {
        final Path old = vectorDir().resolve("format-2.tbl");
        final IOException ex = assertThrows(IOException.class, () -> MetadataTable.open(old).close());
        assertTrue(ex.getMessage().contains("format 2"), ex.getMessage());
    }

    /** The stored name length byte of entry i, read from the file (the stored bytes are checked through lookups). */
    private static int storedLength(final MetadataTable table, final int i) {
        final byte[] name = table.name(i);
        return (table.flags(i) & MetadataTableDescriptor.FLAG_NAME_EXTENDS_PARENT) != 0 ?
            name.length - table.name(table.parent(i)).length : name.length;
    }

    static Map<String, String> fields(final String line) {
        final Map<String, String> f = new HashMap<>();
        for (final String token : line.split(" ")) {
            final int eq = token.indexOf('=');
            if (eq > 0) {
                f.put(token.substring(0, eq), token.substring(eq + 1));
            }
        }
        return f;
    }

    static byte[] hex(final String hex) {
        return HexFormat.of().parseHex(hex);
    }
}
