package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.zip.CRC32C;
import org.fanstore.prep.format.PartitionInfo;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35: the runtime's one read of a partition. A partition swapped for a FIFO or /dev/zero after the
 * launcher's check is refused at once, naming it; no more than the manifest's bytes are read; a full local disk
 * names the target and the sizes (a real 64 KiB tmpfs; needs root to mount).
 */
class PartitionCopyTest {
    @TempDir
    Path dir;

    private static PartitionInfo info(long bytes) {
        return new PartitionInfo(1, "part-00001.fsp", bytes, 0, 1, false);
    }

    private IOException refused(Path source, long bytes) {
        return assertTimeoutPreemptively(Duration.ofSeconds(1), () -> assertThrows(IOException.class,
                () -> PartitionCopy.copy(dir, info(bytes), source, dir.resolve("copy"), new CRC32C(), n -> { })));
    }

    @Test
    void aFifoIsRefusedWithinASecondBeforeItIsOpened() throws Exception {
        Path fifo = dir.resolve("part-00001.fsp");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        IOException e = refused(fifo, 100);
        assertTrue(e.getMessage().contains(fifo + " is a FIFO (named pipe), not a regular file"), e.getMessage());
        assertFalse(Files.exists(dir.resolve("copy")));
    }

    @Test
    void devZeroBehindASymlinkIsRefusedWithinASecond() throws Exception {
        Path link = Files.createSymbolicLink(dir.resolve("part-00001.fsp"), Path.of("/dev/zero"));
        IOException e = refused(link, 1L << 40);
        assertTrue(e.getMessage().contains("is a character device (a symlink to /dev/zero)"), e.getMessage());
        assertFalse(Files.exists(dir.resolve("copy")));
    }

    @Test
    void aPartitionOfAnotherSizeThanTheManifestsIsNotCopied() throws Exception {
        Path source = Files.write(dir.resolve("part-00001.fsp"), new byte[5000]);
        IOException e = refused(source, 4000);
        assertTrue(e.getMessage().contains("5000 bytes, the manifest says 4000 bytes"), e.getMessage());
        assertFalse(Files.exists(dir.resolve("copy")));
    }

    @Test
    void aFullLocalDiskNamesTheTargetAndTheSizes() throws Exception {
        Path small = Files.createDirectories(dir.resolve("small"));
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", small.toString())
                .redirectErrorStream(true).start();
        Assumptions.assumeTrue(mount.waitFor() == 0, "cannot mount a tmpfs here (needs root)");
        try {
            Path source = Files.write(dir.resolve("part-00001.fsp"), new byte[1 << 20]);
            Path target = small.resolve("part-00001.fsp");
            IOException e = assertThrows(IOException.class, () -> PartitionCopy.copy(dir, info(1 << 20), source,
                    target, new CRC32C(), n -> { }));
            assertTrue(e.getMessage().startsWith("copying partition part-00001.fsp (1048576 bytes) to " + target
                    + " failed after ") && e.getMessage().contains("No space left on device")
                    && e.getMessage().contains("bytes free there"), e.getMessage());
        } finally {
            new ProcessBuilder("umount", small.toString()).start().waitFor();
        }
    }
}
