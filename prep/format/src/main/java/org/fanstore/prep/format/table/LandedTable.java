package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * A node's copy of the dataset's table: the table's bytes unchanged, then the job trailer (this node's local root,
 * NUL-terminated, padded to 8 bytes), with the header's job area filled in (rank, world size, replicas, where the
 * local root lies, generation). Built under {@code <target>.tmp} and renamed over the target, so a reader sees
 * either nothing or the whole landed table.
 */
public final class LandedTable {
    private LandedTable() {
    }

    /** Length of the landed file for a table of {@code tableLength} bytes and a local root of that length. */
    public static long length(final long tableLength, final int localRootLength) {
        return alignSection(tableLength + localRootLength + 1L);
    }

    /** Where the landed file is built before {@link #publish}. */
    public static Path temporary(final Path target) {
        return target.resolveSibling(target.getFileName() + ".tmp");
    }

    /** Creates the temporary landed file (mode 0600) of the final length and maps it for writing. */
    public static TableMapping create(final Path target, final long tableLength, final int localRootLength)
        throws IOException {
        final long length = length(tableLength, localRootLength);
        final Path temporary = temporary(target);
        Files.deleteIfExists(temporary);
        Files.createFile(temporary, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            return TableMapping.map(channel, FileChannel.MapMode.READ_WRITE, length);
        }
    }

    /** Writes the job trailer and the job area into a mapped landed file whose table bytes are in place. */
    public static void fillJobArea(final TableMapping landed, final long tableLength, final int rank,
        final int worldSize, final int replicas, final byte[] localRoot, final long generation) {
        if (generation == 0) {
            throw new IllegalArgumentException("generation 0 is reserved");
        }
        if (worldSize < 1 || rank < 0 || rank >= worldSize || replicas < 0 || replicas >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " with " + replicas + " replicas outside a world of "
                + worldSize);
        }
        for (final byte b : localRoot) {
            if (b == 0) {
                throw new IllegalArgumentException("local root holds a NUL byte: " + KeyText.of(localRoot));
            }
        }
        final TableMapping b = landed;
        b.putBytes(tableLength, localRoot);
        b.setMemory(tableLength + localRoot.length, b.length() - tableLength - localRoot.length, (byte)0);
        b.putInt(RANK_OFFSET, rank);
        b.putInt(WORLD_SIZE_OFFSET, worldSize);
        b.putInt(REPLICAS_OFFSET, replicas);
        b.putInt(JOB_RESERVED_OFFSET, 0);
        b.putLong(LOCAL_ROOT_OFFSET_OFFSET, tableLength);
        b.putInt(LOCAL_ROOT_LENGTH_OFFSET, localRoot.length);
        b.putInt(JOB_RESERVED2_OFFSET, 0);
        b.putLong(GENERATION_OFFSET, generation);
    }

    /** Unmaps the landed file and renames it over {@code target}. */
    public static void publish(final TableMapping landed, final Path target) throws IOException {
        landed.close();
        Files.move(temporary(target), target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Removes a temporary landed file after a failure (the mapping, if any, already dropped). */
    public static void abandon(final Path target) throws IOException {
        Files.deleteIfExists(temporary(target));
    }

    /**
     * Lands a table this node reads itself: copies {@code datasetTable} (checked against {@code expectedCrc}) to
     * {@code target} with the job area filled in. Used where no broadcast is needed (tools, tests, one rank).
     *
     * @throws IOException naming the file when it is not the table it should be
     */
    public static void copy(final Path datasetTable, final Path target, final int expectedCrc, final int rank,
        final int worldSize, final int replicas, final byte[] localRoot, final long generation) throws IOException {
        try (FileChannel in = FileChannel.open(datasetTable, StandardOpenOption.READ)) {
            final long tableLength = in.size();
            final TableMapping landed = create(target, tableLength, localRoot.length);
            boolean done = false;
            try {
                final TableChecksum sum = new TableChecksum();
                for (long at = 0; at < tableLength; ) {
                    final ByteBuffer into = landed.piece(at, Math.min(tableLength - at, 8L << 20));
                    final int n = in.read(into, at);
                    if (n < 0) {
                        throw new IOException(datasetTable + " ended at byte " + at + " of " + tableLength);
                    }
                    sum.update(into.flip());
                    at += n;
                }
                if (sum.value() != expectedCrc) {
                    throw new IOException(String.format("%s has CRC32C %08x, expected %08x: the table was altered"
                        + " or belongs to another dataset", datasetTable, sum.value(), expectedCrc));
                }
                fillJobArea(landed, tableLength, rank, worldSize, replicas, localRoot, generation);
                publish(landed, target);
                done = true;
            } finally {
                if (!done) {
                    landed.close();
                    abandon(target);
                }
            }
        }
    }
}
