package org.fanstore.runtime.fileblocks;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.fanstore.runtime.shm.NativeCalls;

/**
 * Allocates a new file's blocks in one call, fallocate(2) mode 0, before it is written out of order: a kept
 * partition's fill file (fill/README.md, "The fill file's blocks") and the decoded copy of an LZ4 partition
 * (docs/slices.md, "compressed partitions"). Its first write of each page then finds the block already mapped (an
 * unwritten extent) instead of reserving a delayed allocation page by page: on ext4 that reservation
 * (ext4_da_get_block_prep, the extent status tree) was about a fifth of the first pass's decode thread, and 128 KiB
 * writes into new pages ran 1.6x faster preallocated (bench/journal/2026-11-28-lz4-first-pass-fe515dd.txt). Where the
 * file system cannot (no fallocate, or not room enough now) the caller keeps the sparse file it had: slower first
 * writes, never an error.
 */
public final class Preallocate {
    private static final int O_WRONLY = 1;

    private Preallocate() {
    }

    /**
     * Allocates bytes [0, length) of the existing, empty file {@code file}, its size becoming length; false if not
     * done, the file then empty again (the blocks a call that failed part way took, e.g. at ENOSPC, given back).
     */
    public static boolean blocks(Path file, long length) {
        int fd = NativeCalls.LIBC.open(file.toString(), O_WRONLY);
        if (fd < 0) {
            return false;
        }
        boolean done;
        try {
            done = NativeCalls.LIBC.fallocate(fd, 0, 0, length) == 0;
        } finally {
            NativeCalls.LIBC.close(fd);
        }
        if (!done) {
            try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
                c.truncate(0);
            } catch (IOException e) {
                // it stays as the call left it: blocks in use until the file is removed, no byte wrong
            }
        }
        return done;
    }
}
