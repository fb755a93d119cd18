package org.fanstore.runtime.placement;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.fanstore.prep.format.PartitionInfo;

/**
 * The free-space check before a rank copies its partitions: a disk that fills half-way through loading used to
 * end in a bare "No space left on device" after minutes of copying, naming neither the directory nor how much
 * was missing. Copies need exactly the partitions' bytes; unpacking uncompressed files for direct opens needs
 * up to as much again, which only earns a warning: unpacking happens after ready, and a job that reads little
 * may never need it.
 */
public final class LocalSpace {
    private LocalSpace() {
    }

    /**
     * Refuses to start copying when {@code dir}'s file system cannot take {@code held}; warns when it could not
     * also take the unpacked files.
     *
     * @param unpacks whether uncompressed files will be unpacked next to the copies (not lazy, not compressed)
     * @throws IOException naming the directory, the bytes needed and available, and what to do
     */
    public static void check(int rank, Path dir, List<PartitionInfo> held, boolean unpacks) throws IOException {
        long needed = held.stream().mapToLong(PartitionInfo::bytes).sum();
        FileStore store = Files.getFileStore(dir);
        long available = store.getUsableSpace();
        if (needed > available) {
            throw new IOException("rank " + rank + ": not enough space in " + dir + " for this rank's "
                    + held.size() + " partitions: needs " + needed + " bytes (" + mib(needed) + "), "
                    + available + " bytes (" + mib(available) + ") available on " + store.name()
                    + "; free space there, point --local-dir at a larger file system, or run with more ranks");
        }
        if (unpacks && 2 * needed > available) {
            System.err.println("fanstore rank " + rank + ": " + dir + " has " + mib(available) + " free: enough"
                    + " for the partitions (" + mib(needed) + ") but maybe not for unpacking them as well"
                    + " (--unpack lazy unpacks only the files that are opened)");
        }
    }

    private static String mib(long bytes) {
        return String.format("%.1f MiB", bytes / 1048576.0);
    }
}
