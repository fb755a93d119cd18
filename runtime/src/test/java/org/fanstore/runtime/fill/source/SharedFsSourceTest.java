package org.fanstore.runtime.fill.source;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.fanstore.prep.format.PartitionInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shared FS as a source: a partition swapped for a FIFO or /dev/zero after the launcher's check is refused at
 * once, naming it; one of another size than the manifest's, or a missing one, is named with what to do; ranges read
 * are the file's bytes.
 */
class SharedFsSourceTest {
    @TempDir
    Path dir;

    private static PartitionInfo info(long bytes) {
        return new PartitionInfo(1, "part-00001.fsp", bytes, 0, 1, false);
    }

    private IOException refused(Path source, long bytes) {
        SharedFsSource s = new SharedFsSource(dir, p -> info(bytes));
        return assertTimeoutPreemptively(Duration.ofSeconds(1), () -> assertThrows(IOException.class,
                () -> s.check(1)));
    }

    @Test
    void aFifoIsRefusedWithinASecondBeforeItIsOpened() throws Exception {
        Path fifo = dir.resolve("part-00001.fsp");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        IOException e = refused(fifo, 100);
        assertTrue(e.getMessage().contains(fifo + " is a FIFO (named pipe), not a regular file"), e.getMessage());
    }

    @Test
    void devZeroBehindASymlinkIsRefusedWithinASecond() throws Exception {
        Path link = Files.createSymbolicLink(dir.resolve("part-00001.fsp"), Path.of("/dev/zero"));
        IOException e = refused(link, 1L << 40);
        assertTrue(e.getMessage().contains("is a character device (a symlink to /dev/zero)"), e.getMessage());
    }

    @Test
    void aPartitionOfAnotherSizeThanTheManifestsIsNotCopied() throws Exception {
        Path source = Files.write(dir.resolve("part-00001.fsp"), new byte[5000]);
        IOException e = refused(source, 4000);
        assertTrue(e.getMessage().contains("5000 bytes, the manifest says 4000 bytes"), e.getMessage());
    }

    @Test
    void aMissingPartitionIsNamedWithWhatToDo() {
        IOException e = refused(dir.resolve("part-00001.fsp"), 10);
        assertTrue(e.getMessage().contains("partition part-00001.fsp (listed in manifest") && e.getMessage()
                .contains("is missing from " + dir + ": restore it or run fanstore prep again"), e.getMessage());
    }

    @Test
    void rangesAreTheFilesBytes() throws Exception {
        byte[] body = new byte[3 << 20];
        new java.util.Random(5).nextBytes(body);
        Files.write(dir.resolve("part-00001.fsp"), body);
        try (SharedFsSource s = new SharedFsSource(dir, p -> info(body.length))) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            s.read(1, 1000, 2 << 20, java.nio.channels.Channels.newChannel(out), false);
            assertArrayEquals(java.util.Arrays.copyOfRange(body, 1000, 1000 + (2 << 20)), out.toByteArray());
        }
    }
}
