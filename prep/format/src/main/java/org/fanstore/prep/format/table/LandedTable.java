package org.fanstore.prep.format.table;

import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

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
    public static MappedByteBuffer create(final Path target, final long tableLength, final int localRootLength)
        throws IOException {
        final long length = length(tableLength, localRootLength);
        if (length > Integer.MAX_VALUE) {
            throw new IOException("metadata table of " + tableLength + " bytes is over the 2 GiB a node maps");
        }
        final Path temporary = temporary(target);
        Files.deleteIfExists(temporary);
        Files.createFile(temporary, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, length);
        }
    }

    /** Writes the job trailer and the job area into a mapped landed file whose table bytes are in place. */
    public static void fillJobArea(final ByteBuffer landed, final long tableLength, final int rank, final int worldSize,
        final int replicas, final byte[] localRoot, final long generation) {
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
        final UnsafeBuffer b = new UnsafeBuffer(landed);
        b.putBytes((int)tableLength, localRoot);
        b.setMemory((int)tableLength + localRoot.length, b.capacity() - (int)tableLength - localRoot.length, (byte)0);
        b.putInt(RANK_OFFSET, rank, LITTLE_ENDIAN);
        b.putInt(WORLD_SIZE_OFFSET, worldSize, LITTLE_ENDIAN);
        b.putInt(REPLICAS_OFFSET, replicas, LITTLE_ENDIAN);
        b.putInt(JOB_RESERVED_OFFSET, 0, LITTLE_ENDIAN);
        b.putLong(LOCAL_ROOT_OFFSET_OFFSET, tableLength, LITTLE_ENDIAN);
        b.putInt(LOCAL_ROOT_LENGTH_OFFSET, localRoot.length, LITTLE_ENDIAN);
        b.putInt(JOB_RESERVED2_OFFSET, 0, LITTLE_ENDIAN);
        b.putLong(GENERATION_OFFSET, generation, LITTLE_ENDIAN);
    }

    /** Unmaps the landed file and renames it over {@code target}. */
    public static void publish(final MappedByteBuffer landed, final Path target) throws IOException {
        IoUtil.unmap(landed);
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
            final MappedByteBuffer landed = create(target, tableLength, localRoot.length);
            boolean done = false;
            try {
                final TableChecksum sum = new TableChecksum();
                final ByteBuffer into = landed.duplicate();
                while (into.position() < tableLength) {
                    final int before = into.position();
                    into.limit((int)Math.min(tableLength, before + (8L << 20)));
                    if (in.read(into, before) < 0) {
                        throw new IOException(datasetTable + " ended at byte " + before + " of " + tableLength);
                    }
                    sum.update(into.duplicate().flip().position(before));
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
                    IoUtil.unmap(landed);
                    abandon(target);
                }
            }
        }
    }
}
