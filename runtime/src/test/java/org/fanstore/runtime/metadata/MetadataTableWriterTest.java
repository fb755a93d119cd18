package org.fanstore.runtime.metadata;

import static org.fanstore.prep.format.FileModes.S_IFDIR;
import static org.fanstore.prep.format.FileModes.S_IFREG;
import static org.fanstore.prep.format.FileModes.isDirectory;
import static org.fanstore.prep.format.FileModes.isSymlink;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.fanstore.runtime.metadata.MetadataTableDescriptor.*;
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
import org.fanstore.runtime.layout.RankDirectory;

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
        return MetadataTableWriter.write(target, entries, LOCAL_ROOT, 0, 4, 7, 99);
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
                entries.add(new NamespaceEntry(key, S_IFREG | 0644, random.nextLong() >>> 20, random.nextInt(),
                    random.nextInt(1_000_000_000), random.nextInt(5000), random.nextInt(5000), random.nextInt(8),
                    random.nextInt(4), null));
            }
        }
        return entries;
    }

    @Test
    void everyEntryReadsBackAsWritten() throws IOException {
        final List<NamespaceEntry> entries = randomNamespace(3000, 1);
        final Path target = RankDirectory.META_TABLE.in(dir);
        final long bytes = write(target, entries);
        assertEquals(Files.size(target), bytes);
        assertEquals(PosixFilePermissions.fromString("rw-------"), Files.getPosixFilePermissions(target));
        assertFalse(Files.exists(dir.resolve("meta.tbl.tmp")), "temporary file renamed away");
        try (MetadataTable t = MetadataTable.open(target)) {
            assertEquals(entries.size() + 1, t.entryCount(), "the root is added");
            assertEquals(bytes, t.totalBytes());
            assertArrayEquals(LOCAL_ROOT, t.localRoot());
            assertEquals(0, t.rank());
            assertEquals(4, t.worldSize());
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
                assertEquals(e.flags(), t.flags(i));
                assertEquals(e.ownerRank(), t.ownerRank(i));
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
                FLAG_LOCAL, i % 4));
        }
        final Path target = dir.resolve("big.tbl");
        write(target, entries);
        try (MetadataTable t = MetadataTable.open(target)) {
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
            new NamespaceEntry(b("a/b/old.txt"), S_IFREG | 0600, 1, 100, 5, 10, 20, 0, 0, null),
            new NamespaceEntry(b("a/b/new.txt"), S_IFREG | 0600, 1, 300, 7, 11, 21, 0, 0, null),
            new NamespaceEntry(b("a/c"), S_IFDIR | 0700, 0, 200, 0, 12, 22, 0, 0, null)));
        try (MetadataTable t = MetadataTable.open(target)) {
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
    void reservedGenerationAndForeignOwnersAreRefused() {
        final List<NamespaceEntry> one = List.of(NamespaceEntry.file(b("a"), 0644, 1, 0, 0, 0, 0));
        assertThrows(IllegalArgumentException.class,
            () -> MetadataTableWriter.write(dir.resolve("g.tbl"), one, LOCAL_ROOT, 0, 1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> MetadataTableWriter.write(dir.resolve("o.tbl"),
            List.of(NamespaceEntry.file(b("a"), 0644, 1, 0, 0, 0, 3)), LOCAL_ROOT, 0, 2, 0, 1));
    }

    @Test
    void rewritingReplacesTheTableWhole() throws IOException {
        final Path target = RankDirectory.META_TABLE.in(dir);
        write(target, List.of(NamespaceEntry.file(b("first"), 0644, 1, 0, 0, 0, 0)));
        write(target, List.of(NamespaceEntry.file(b("second"), 0644, 1, 0, 0, 0, 0)));
        try (MetadataTable t = MetadataTable.open(target)) {
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
}
