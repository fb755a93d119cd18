package org.fanstore.runtime.output;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Records from other ranks change this rank's upper directory (rule 5 of the design); this rank's own do not. */
class OutputApplierTest {
    private static final int ME = 0;
    private static final int OTHER = 1;

    @TempDir
    Path upper;

    private final MapOutputNamespace ns = new MapOutputNamespace(Set.of());
    private final AtomicInteger wakes = new AtomicInteger();
    private OutputApplier applier() {
        return new OutputApplier(ns, upper, wakes::incrementAndGet, ME);
    }

    private Path write(String key) throws Exception {
        Path p = upper.resolve(key);
        Files.createDirectories(p.getParent());
        Files.writeString(p, key);
        return p;
    }

    /** The FILE record this rank's PUBLISH of {@code p} would commit now. */
    private OutputRecord published(Path p, int holder, long id) throws Exception {
        return new OutputRecord(OutputRecord.Kind.FILE, upper.relativize(p).toString().getBytes(UTF_8), null,
                Files.size(p), 0100644, OutputService.nanos(Files.getLastModifiedTime(p)), holder, id, false);
    }

    @Test
    void anotherRanksFileReplacesOurPublishedVersionAndOurOwnRecordsLeaveTheUpperAlone() throws Exception {
        OutputApplier a = applier();
        Path x = write("x");
        a.apply(published(x, ME, 1), ME);
        assertTrue(Files.exists(x));
        assertEquals(1, wakes.get(), "every record of this rank wakes the drain");
        a.apply(MapOutputNamespace.file("x", 1, OTHER, 2, false), OTHER);
        assertFalse(Files.exists(x, LinkOption.NOFOLLOW_LINKS), "last close wins: the other node's version");
        assertEquals(OTHER, ns.lookup("x".getBytes(UTF_8)).orElseThrow().holderRank());

        Path y = write("y");
        a.apply(published(y, ME, 3), ME);
        Files.writeString(y, "rewritten in place, not closed yet");
        a.apply(MapOutputNamespace.file("y", 1, OTHER, 4, false), OTHER);
        assertTrue(Files.exists(y), "still being written here: its close publishes it later, and it wins then");
        Path z = write("z");
        a.apply(MapOutputNamespace.file("z", 1, OTHER, 5, false), OTHER);
        assertTrue(Files.exists(z), "never published here: being written, it stays");
        Path link = upper.resolve("l");
        Files.createSymbolicLink(link, Path.of("x"));
        a.apply(MapOutputNamespace.file("l", 1, OTHER, 6, false), OTHER);
        assertTrue(Files.exists(link, LinkOption.NOFOLLOW_LINKS), "a symlink is never published: it stays");
        Files.createDirectories(upper.resolve("d"));
        a.apply(MapOutputNamespace.file("d", 1, OTHER, 7, false), OTHER);
        assertTrue(Files.isDirectory(upper.resolve("d")), "a directory is never deleted for a FILE");
        a.apply(MapOutputNamespace.unlink("y"), ME);  // the shim unlinks itself; the runtime never does for it
        assertTrue(Files.exists(y));
    }

    @Test
    void unlinkAndRmdirOfAnotherRank() throws Exception {
        OutputApplier a = applier();
        Path f = write("d/f");
        a.apply(MapOutputNamespace.unlink("d"), OTHER);
        assertTrue(Files.isDirectory(upper.resolve("d")), "UNLINK never removes a directory");
        a.apply(MapOutputNamespace.unlink("d/f"), OTHER);
        assertFalse(Files.exists(f));
        write("e/g");
        a.apply(rmdir("e"), OTHER);
        assertTrue(Files.exists(upper.resolve("e/g")), "RMDIR removes only an empty directory");
        a.apply(rmdir("d"), OTHER);
        assertFalse(Files.exists(upper.resolve("d")));
    }

    @Test
    void renameOfAnotherRankMovesOurFileOrDropsTheReplacedTarget() throws Exception {
        OutputApplier a = applier();
        write("a");
        a.apply(MapOutputNamespace.rename("a", "new/sub/b", OTHER, 0), OTHER);
        assertEquals("a", Files.readString(upper.resolve("new/sub/b")));
        assertFalse(Files.exists(upper.resolve("a")));
        assertEquals("rwxr-xr-x", PosixFilePermissions.toString(
                Files.getPosixFilePermissions(upper.resolve("new/sub"))));
        write("ckpt");
        a.apply(MapOutputNamespace.rename("tmp", "ckpt", OTHER, 0), OTHER);
        assertFalse(Files.exists(upper.resolve("ckpt")), "replaced by the other rank's file, which we do not hold");
        write("dir/keep");
        a.apply(MapOutputNamespace.rename("tmp", "dir", OTHER, 0), OTHER);
        assertTrue(Files.exists(upper.resolve("dir/keep")), "a directory target is left alone");
    }

    @Test
    void ourPublishUnderWayIsNotDeletedByAnotherRanksFileDecidedBeforeIt() throws Exception {
        OutputApplier a = applier();
        Path k = write("k");
        OutputRecord mine = published(k, ME, 7);
        a.committing(mine);
        a.apply(MapOutputNamespace.file("k", 1, OTHER, 8, false), OTHER);
        assertTrue(Files.exists(k), "ours is decided after it, and wins");
        a.apply(mine, ME);
        a.apply(MapOutputNamespace.file("k", 1, OTHER, 9, false), OTHER);
        assertFalse(Files.exists(k), "decided after ours: it replaces ours");
        a.settled(mine);
    }

    private static OutputRecord rmdir(String key) {
        return new OutputRecord(OutputRecord.Kind.RMDIR, key.getBytes(UTF_8), null, 0, 0, 0, -1, 0, false);
    }
}
