package org.fanstore.runtime.metadata;

import static org.fanstore.prep.format.FileModes.S_IFMT;
import static org.fanstore.prep.format.FileModes.S_IFREG;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;
import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.fanstore.prep.format.table.MetadataTable;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TableFromTreeTest {
    @TempDir
    Path temp;

    private static byte[] b(final String s) {
        return s.getBytes(UTF_8);
    }

    @Test
    void realTreeBecomesATableWhoseLocalPathsResolve() throws IOException {
        final Path tree = temp.resolve("ds");
        Files.createDirectories(tree.resolve("sub"));
        Files.createDirectories(tree.resolve("empty"));
        Files.writeString(tree.resolve("sub/a.txt"), "hello");
        Files.createSymbolicLink(tree.resolve("link"), Path.of("sub/a.txt"));
        // A name that is not UTF-8: Path.of(URI) takes percent-escaped raw bytes.
        final Path odd = Path.of(URI.create(tree.toUri() + "bad%FF%80name"));
        Files.writeString(odd, "xy");
        final Path out = temp.resolve("t.tbl");

        TableFromTree.write(tree, "ds", out);

        try (MetadataTable t = MetadataTable.open(out)) {
            assertEquals(7, t.entryCount(), "root, ds, sub, sub/a.txt, empty, link, the odd name");
            final int file = t.lookup(b("ds/sub/a.txt"));
            assertEquals(5, t.size(file));
            assertEquals(FLAG_UNPACKABLE, t.flags(file));
            assertTrue(t.localRaw(file), "every file is read in place");
            assertEquals(S_IFREG, t.mode(file) & S_IFMT);
            assertEquals(0, t.childCount(t.lookup(b("ds/empty"))));
            assertArrayEquals(b("sub/a.txt"), t.linkTarget(t.lookup(b("ds/link"))));
            final byte[] oddKey = {'d', 's', '/', 'b', 'a', 'd', (byte)0xff, (byte)0x80, 'n', 'a', 'm', 'e'};
            final int oddIndex = t.lookup(oddKey);
            assertTrue(oddIndex > 0, "non-UTF-8 name kept byte for byte");
            assertEquals(2, t.size(oddIndex));
            assertArrayEquals(TableFromTree.rawBytes(temp), t.localRoot());
            assertEquals("hello", Files.readString(Path.of(new String(t.localRoot(), UTF_8), "ds/sub/a.txt")),
                "<local root>/<key> is the real file");
        }
    }

    @Test
    void aTreeNotNamedAfterItsDatasetIsRefused() throws IOException {
        final Path tree = Files.createDirectories(temp.resolve("actual"));
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> TableFromTree.write(tree, "imagenet", temp.resolve("t.tbl")));
        assertTrue(ex.getMessage().contains("ln -s"), ex.getMessage());
    }

    @Test
    void aSymlinkNamedAfterTheDatasetPublishesTheTreeBehindIt() throws IOException {
        final Path tree = Files.createDirectories(temp.resolve("actual"));
        Files.writeString(tree.resolve("f"), "1");
        final Path links = Files.createDirectories(temp.resolve("links"));
        final Path named = Files.createSymbolicLink(links.resolve("imagenet"), tree);
        TableFromTree.write(named, "imagenet", temp.resolve("t.tbl"));
        try (MetadataTable t = MetadataTable.open(temp.resolve("t.tbl"))) {
            assertTrue(t.lookup(b("imagenet/f")) > 0);
            assertArrayEquals(TableFromTree.rawBytes(links), t.localRoot());
        }
    }
}
