package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.S_IFDIR;
import static org.fanstore.prep.format.FileModes.S_IFREG;
import static org.fanstore.prep.format.FileModes.isDirectory;
import static org.fanstore.prep.format.FileModes.isRegular;
import static org.fanstore.prep.format.FileModes.isSymlink;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;
import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MetadataTableWriterTest {
    private static final byte[] LOCAL_ROOT = "/local".getBytes(UTF_8);

    @TempDir
    Path dir;

    private static byte[] b(final String s) {
        return s.getBytes(UTF_8);
    }

    private long write(final Path target, final List<NamespaceEntry> entries) throws IOException {
        return MetadataTableWriter.write(target, entries, 77, 4, 0, 7);
    }

    /** Lands the dataset table {@code table} as rank 1 of 4 with one replica, and returns the landed path. */
    private Path land(final Path table) throws IOException {
        final int crc;
        try (MetadataTable t = MetadataTable.openDataset(table)) {
            crc = t.recordedCrc();
        }
        final Path landed = dir.resolve("meta.tbl");
        LandedTable.copy(table, landed, crc, 1, 4, 1, LOCAL_ROOT, 99);
        return landed;
    }

    /** A random tree: ~10% directories, some symlinks, arbitrary bytes in names. */
    private static List<NamespaceEntry> randomNamespace(final int count, final long seed) {
        final Random random = new Random(seed);
        final List<NamespaceEntry> entries = new ArrayList<>();
        final List<byte[]> dirs = new ArrayList<>(List.of(b("ds")));
        entries.add(NamespaceEntry.directory(b("ds"), 1));
        final Set<String> used = new HashSet<>();
        while (entries.size() < count) {
            final byte[] parent = dirs.get(random.nextInt(dirs.size()));
            final byte[] name = new byte[1 + random.nextInt(20)];
            for (int i = 0; i < name.length; i++) {
                byte c;
                do {
                    c = (byte)random.nextInt(256);
                } while (c == 0 || c == '/');
                name[i] = c;
            }
            if ((name.length == 1 && name[0] == '.') || (name.length == 2 && name[0] == '.' && name[1] == '.')) {
                continue;
            }
            final byte[] key = new byte[parent.length + 1 + name.length];
            System.arraycopy(parent, 0, key, 0, parent.length);
            key[parent.length] = '/';
            System.arraycopy(name, 0, key, parent.length + 1, name.length);
            if (!used.add(KeyText.hex(key))) {
                continue;
            }
            final int kind = random.nextInt(20);
            if (kind < 2) {
                entries.add(NamespaceEntry.directory(key, random.nextInt(1_000_000)));
                dirs.add(key);
            } else if (kind == 2) {
                entries.add(NamespaceEntry.symlink(key, b("target-" + random.nextInt()), random.nextInt(1000)));
            } else {
                final int flags = new int[] {0, FLAG_UNPACKABLE, FLAG_COMPRESSED}[random.nextInt(3)];
                final boolean compressed = flags == FLAG_COMPRESSED;
                final long size = random.nextLong() >>> 16;
                entries.add(new NamespaceEntry(key, S_IFREG | 0644, size, random.nextInt(),
                    random.nextInt(1_000_000_000), random.nextInt(5000), random.nextInt(5000), flags,
                    random.nextInt(4), null, random.nextLong() >>> 16, compressed ? random.nextLong() >>> 32 : size,
                    random.nextInt(), compressed ? 1 : 0));
            }
        }
        return entries;
    }

    @Test
    void everyEntryReadsBackAsWritten() throws IOException {
        final List<NamespaceEntry> entries = randomNamespace(3000, 1);
        final Path target = dir.resolve("namespace.tbl");
        final long bytes = write(target, entries);
        assertEquals(Files.size(target), bytes);
        assertEquals(PosixFilePermissions.fromString("rw-r--r--"), Files.getPosixFilePermissions(target));
        assertFalse(Files.exists(dir.resolve("namespace.tbl.tmp")), "temporary file renamed away");
        try (MetadataTable d = MetadataTable.openDataset(target)) {
            assertEquals(bytes, d.tableLength());
            assertEquals(77, d.datasetId());
            final TableChecksum sum = new TableChecksum();
            sum.update(java.nio.ByteBuffer.wrap(Files.readAllBytes(target)));
            assertEquals(d.recordedCrc(), sum.value(), "the header's CRC is the table's");
        }
        try (MetadataTable t = MetadataTable.open(land(target))) {
            assertEquals(entries.size() + 1, t.entryCount(), "the root is added");
            assertEquals(bytes, t.tableLength());
            assertArrayEquals(LOCAL_ROOT, t.localRoot());
            assertEquals(1, t.rank());
            assertEquals(4, t.worldSize());
            assertEquals(1, t.replicas());
            assertEquals(7, t.stDev());
            assertEquals(99, t.generation());
            for (final NamespaceEntry e : entries) {
                final int i = t.lookup(e.key());
                assertTrue(i > 0, KeyText.of(e.key()));
                assertArrayEquals(e.key(), t.key(i));
                assertEquals(e.mode(), t.mode(i));
                final long size = isDirectory(e.mode()) ? DIRECTORY_SIZE
                    : isSymlink(e.mode()) ? e.linkTarget().length : e.size();
                assertEquals(size, t.size(i));
                assertEquals(e.mtimeSec(), t.mtimeSec(i));
                assertEquals(e.mtimeNsec(), t.mtimeNsec(i));
                assertEquals(e.uid(), t.uid(i));
                assertEquals(e.gid(), t.gid(i));
                assertEquals(e.flags(), t.flags(i) & ~FLAG_NAME_EXTENDS_PARENT);
                assertEquals(e.partition(), t.partition(i));
                if (isRegular(e.mode())) {
                    assertEquals(e.bodyOffset(), t.bodyOffset(i));
                    assertEquals(e.storedLength(), t.storedLength(i));
                    assertEquals(e.crc32c(), t.crc32c(i));
                    assertEquals(e.codec(), t.codec(i));
                    // rank 1 of 4 with one replica holds partitions 1 (owner) and 0 (replica of rank 0's)
                    assertEquals((e.flags() & FLAG_UNPACKABLE) != 0 && e.partition() <= 1, t.localRaw(i));
                }
                assertArrayEquals(e.linkTarget(), t.linkTarget(i));
                assertArrayEquals(NamespaceModel.parentKey(e.key()), t.key(t.parent(i)));
            }
            int linked = 0;
            for (int i = 0; i < t.entryCount(); i++) {
                byte[] previous = null;
                for (int k = 0; k < t.childCount(i); k++) {
                    final int c = t.child(i, k);
                    assertEquals(i, t.parent(c));
                    final byte[] name = NamespaceModel.name(t.key(c));
                    assertTrue(previous == null || java.util.Arrays.compareUnsigned(previous, name) < 0,
                        "children in name order");
                    previous = name;
                    linked++;
                }
            }
            assertEquals(t.entryCount() - 1, linked, "every entry but the root is exactly one directory's child");
        }
    }

    @Test
    void largeNamespaceFindsAllKeysAndNoOthers() throws IOException {
        final List<NamespaceEntry> entries = new ArrayList<>(200_000);
        for (int i = 0; i < 200_000; i++) {
            entries.add(NamespaceEntry.file(b(String.format("big/d%03d/f%07d.bin", i % 500, i)), 0644, i, i, 0,
                FLAG_UNPACKABLE, i % 4));
        }
        final Path target = dir.resolve("big.tbl");
        write(target, entries);
        try (MetadataTable t = MetadataTable.openDataset(target)) {
            assertEquals(200_000 + 500 + 2, t.entryCount(), "files, 500 directories, big/ and the root");
            for (final NamespaceEntry e : entries) {
                final int i = t.lookup(e.key());
                assertTrue(i >= 0);
                assertEquals(e.size(), t.size(i));
            }
            final Random random = new Random(2);
            for (int n = 0; n < 10_000; n++) {
                final int i = random.nextInt(200_000);
                final String[] absent = {String.format("big/d%03d/f%07d.bin", (i + 1) % 500, i),
                    String.format("big/d%03d/f%07d.bi", i % 500, i), "big/d" + (1000 + i)};
                assertEquals(-1, t.lookup(b(absent[n % absent.length])), absent[n % absent.length]);
            }
        }
    }

    @Test
    void duplicateKeysAreRefusedByName() {
        final List<NamespaceEntry> entries = List.of(NamespaceEntry.file(b("ds/a"), 0644, 1, 0, 0, 0, 0),
            NamespaceEntry.file(b("ds/b"), 0644, 1, 0, 0, 0, 0), NamespaceEntry.file(b("ds/a"), 0644, 2, 0, 0, 0, 0));
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> write(dir.resolve("dup.tbl"), entries));
        assertTrue(ex.getMessage().contains("duplicate key") && ex.getMessage().contains("\"ds/a\""), ex.getMessage());
        assertFalse(Files.exists(dir.resolve("dup.tbl.tmp")));
    }

    @Test
    void missingParentsBecomeDirectoriesDatedByTheirNewestChild() throws IOException {
        final Path target = dir.resolve("p.tbl");
        write(target, List.of(
            new NamespaceEntry(b("a/b/old.txt"), S_IFREG | 0600, 1, 100, 5, 10, 20, 0, 0, null, 0, 1, 0, 0),
            new NamespaceEntry(b("a/b/new.txt"), S_IFREG | 0600, 1, 300, 7, 11, 21, 0, 0, null, 0, 1, 0, 0),
            new NamespaceEntry(b("a/c"), S_IFDIR | 0700, 0, 200, 0, 12, 22, 0, NO_PARTITION, null, 0, 0, 0, 0)));
        try (MetadataTable t = MetadataTable.openDataset(target)) {
            assertEquals(6, t.entryCount());
            assertEquals(0, t.lookup(new byte[0]), "the root is entry 0");
            for (final String added : List.of("", "a", "a/b")) {
                final int i = t.lookup(b(added));
                assertEquals(S_IFDIR | 0755, t.mode(i), added);
                assertEquals(DIRECTORY_SIZE, t.size(i));
                assertEquals(300, t.mtimeSec(i), added + " takes its newest child's mtime");
                assertEquals(7, t.mtimeNsec(i));
                assertEquals(11, t.uid(i), added + " takes its newest child's owner");
                assertEquals(21, t.gid(i));
            }
            assertEquals(S_IFDIR | 0700, t.mode(t.lookup(b("a/c"))), "a given directory keeps its mode");
            assertEquals(2, t.childCount(t.lookup(b("a"))));
        }
    }

    @Test
    void aFileUsedAsADirectoryIsRefused() {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> write(dir.resolve("f.tbl"), List.of(NamespaceEntry.file(b("a"), 0644, 1, 0, 0, 0, 0),
                NamespaceEntry.file(b("a/b"), 0644, 1, 0, 0, 0, 0))));
        assertTrue(ex.getMessage().contains("not a directory"), ex.getMessage());
    }

    @Test
    void unnormalisedKeysAreRefused() {
        for (final String bad : List.of("/a", "a/", "a//b", "a/./b", "a/../b", "..", "a\0b")) {
            assertThrows(IllegalArgumentException.class,
                () -> write(dir.resolve("k.tbl"), List.of(NamespaceEntry.file(b(bad), 0644, 1, 0, 0, 0, 0))), bad);
        }
    }

    @Test
    void partitionsOutOfRangeAndAReservedGenerationAreRefused() throws IOException {
        assertThrows(IllegalArgumentException.class, () -> MetadataTableWriter.write(dir.resolve("o.tbl"),
            List.of(NamespaceEntry.file(b("a"), 0644, 1, 0, 0, 0, 3)), 1, 2, 0, 0), "regular partition 3 of 2");
        assertThrows(IllegalArgumentException.class, () -> MetadataTableWriter.write(dir.resolve("o.tbl"),
            List.of(NamespaceEntry.file(b("a"), 0644, 1, 0, 0, 0, -2)), 1, 2, 1, 0), "broadcast partition 1 of 1");
        assertThrows(IllegalArgumentException.class, () -> MetadataTableWriter.write(dir.resolve("o.tbl"),
            List.of(NamespaceEntry.file(b("a"), 0644, 1, 0, 0, 0, NO_PARTITION)), 1, 2, 0, 0), "a file needs one");
        final Path table = dir.resolve("g.tbl");
        MetadataTableWriter.write(table, List.of(NamespaceEntry.file(b("a"), 0644, 1, 0, 0, 0, 0)), 1, 1, 0, 0);
        final int crc;
        try (MetadataTable t = MetadataTable.openDataset(table)) {
            crc = t.recordedCrc();
        }
        assertThrows(IllegalArgumentException.class,
            () -> LandedTable.copy(table, dir.resolve("l.tbl"), crc, 0, 1, 0, LOCAL_ROOT, 0));
        final IOException altered = assertThrows(IOException.class,
            () -> LandedTable.copy(table, dir.resolve("l.tbl"), crc ^ 1, 0, 1, 0, LOCAL_ROOT, 1));
        assertTrue(altered.getMessage().contains(table.toString()), altered.getMessage());
        assertFalse(Files.exists(dir.resolve("l.tbl")) || Files.exists(dir.resolve("l.tbl.tmp")));
    }

    @Test
    void rewritingReplacesTheTableWhole() throws IOException {
        final Path target = dir.resolve("namespace.tbl");
        write(target, List.of(NamespaceEntry.file(b("first"), 0644, 1, 0, 0, 0, 0)));
        write(target, List.of(NamespaceEntry.file(b("second"), 0644, 1, 0, 0, 0, 0)));
        try (MetadataTable t = MetadataTable.openDataset(target)) {
            assertEquals(-1, t.lookup(b("first")));
            assertTrue(t.lookup(b("second")) > 0);
        }
    }

    @Test
    void fnvMatchesPublishedValues() {
        assertEquals(0xcbf29ce484222325L, Fnv1a64.hash(new byte[0]));
        assertEquals(0xaf63dc4c8601ec8cL, Fnv1a64.hash(b("a")));
        assertEquals(0x85944171f73967e8L, Fnv1a64.hash(b("foobar")));
    }

    /**
     * ImageNet's shape (class directories of ~1,300 files named after their class, one owner and mode): the table
     * holds it in at most 64 bytes per file (issue 44's goal; format 2 took ~156), every name that repeats its
     * directory's stored as the rest only, and every file found and named right.
     */
    @Test
    void anImageNetShapedNamespaceCostsAtMost64BytesPerFile() throws IOException {
        final List<NamespaceEntry> entries = new ArrayList<>();
        final java.util.Random random = new java.util.Random(44);
        final int classes = 20;
        final int perClass = 1300;
        for (int c = 0; c < classes; c++) {
            final String wnid = String.format("n%08d", 1_440_764 + c * 7919);
            for (int f = 0; f < perClass; f++) {
                entries.add(new NamespaceEntry(b("imagenet/train/" + wnid + "/" + wnid + "_" + (f * 7 + 10_000) +
                    ".JPEG"), S_IFREG | 0644, 110_000 + random.nextInt(50_000), 1_700_000_000L + random.nextInt(9),
                    random.nextInt(1_000_000_000), 1000, 100, FLAG_UNPACKABLE, c % 4, null, random.nextLong() >>> 24,
                    0, random.nextInt(), 0));
            }
        }
        final Path target = dir.resolve("imagenet.tbl");
        final long bytes = write(target, entries);
        final double perFile = (double)bytes / entries.size();
        assertTrue(perFile <= 64, perFile + " bytes per file");
        try (MetadataTable t = MetadataTable.openDataset(target)) {
            for (final NamespaceEntry e : entries) {
                final int i = t.lookup(e.key());
                assertTrue(i > 0, KeyText.of(e.key()));
                assertTrue((t.flags(i) & FLAG_NAME_EXTENDS_PARENT) != 0, KeyText.of(e.key()));
                assertArrayEquals(e.key(), t.key(i));
                assertEquals(e.bodyOffset(), t.bodyOffset(i));
            }
            final int train = t.lookup(b("imagenet/train"));
            assertEquals(classes, t.childCount(train));
            assertEquals(perClass, t.childCount(t.child(train, 0)));
        }
    }
}
