package org.fanstore.runtime.fill;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import jnr.ffi.LastError;
import jnr.ffi.Runtime;
import org.fanstore.runtime.shm.NativeCalls;

/**
 * Frees the blocks of byte ranges of a file and keeps its size and every other byte: fallocate(2) with
 * FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE. For an abandoned pull file that slices still read: until the job ends
 * it needs only those slices' bytes, and a pull is most often abandoned because the disk is full. ext4, xfs,
 * btrfs and tmpfs support it; where the file system does not, the caller says so and the file keeps its blocks.
 */
final class PunchHoles {
    private static final int O_WRONLY = 1;
    private static final int FALLOC_FL_KEEP_SIZE = 0x01;
    private static final int FALLOC_FL_PUNCH_HOLE = 0x02;
    private static final int EOPNOTSUPP = 95;

    private PunchHoles() {
    }

    /**
     * Punches every {offset, length} range of {@code file}, clipped to its size now (a pull abandoned part way has
     * no bytes past what it wrote); returns the bytes punched.
     */
    static long punch(Path file, List<long[]> ranges) throws IOException {
        long size = Files.size(file);
        int fd = NativeCalls.LIBC.open(file.toString(), O_WRONLY);
        if (fd < 0) {
            throw new IOException("cannot open " + file + " (errno " + errno() + ")");
        }
        try {
            long punched = 0;
            for (long[] r : ranges) {
                long length = Math.min(r[1], size - r[0]);
                if (length <= 0) {
                    continue;
                }
                if (NativeCalls.LIBC.fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, r[0], length) != 0) {
                    int e = errno();
                    throw new IOException(e == EOPNOTSUPP ? "its file system cannot punch holes"
                            : "fallocate failed with errno " + e);
                }
                punched += length;
            }
            return punched;
        } finally {
            NativeCalls.LIBC.close(fd);
        }
    }

    private static int errno() {
        return LastError.getLastError(Runtime.getRuntime(NativeCalls.LIBC));
    }
}
