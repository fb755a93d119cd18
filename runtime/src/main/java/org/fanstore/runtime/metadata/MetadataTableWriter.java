package org.fanstore.runtime.metadata;

import static org.fanstore.prep.format.FileModes.isDirectory;
import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static org.fanstore.runtime.metadata.MetadataTableDescriptor.*;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Writes a namespace as {@code meta.tbl} (format: README.md beside this class). The table is built in
 * {@code <target>.tmp} (mode 0600) through a mapping of exactly its final length, then renamed over the target,
 * so a reader sees either the old table or the whole new one. Directories that no entry names are added as
 * 040755 directories carrying the mtime, uid and gid of their newest child (deterministic on every rank, and
 * what a user expects from {@code ls -l}); the root "" is added the same way when absent.
 */
public final class MetadataTableWriter {
    private MetadataTableWriter() {
    }

    /**
     * @param localRoot  absolute directory such that {@code <localRoot>/<key>} is a LOCAL_RAW file on this node
     * @param generation identifies this table among those the job publishes; never 0
     * @return bytes written
     * @throws IllegalArgumentException for a namespace the format cannot hold (duplicate or malformed keys, a
     *                                  file used as a directory, a bad rank), naming the offending key
     */
    public static long write(
        final Path target, final List<NamespaceEntry> entries, final byte[] localRoot, final int rank,
        final int worldSize, final int stDev, final long generation) throws IOException {
        checkArguments(localRoot, rank, worldSize, generation);
        final SortedNamespace ns = SortedNamespace.of(entries, worldSize);
        final int n = ns.entries.length;
        final int bucketCount = ns.index.buckets().length;

        long stringsLength = localRoot.length + 1L;
        for (final NamespaceEntry e : ns.entries) {
            stringsLength += e.key().length + 1L + (e.linkTarget() != null ? e.linkTarget().length + 1L : 0);
        }
        final long entriesOffset = HEADER_LENGTH;
        final long bucketsOffset = entriesOffset + (long)n * ENTRY_LENGTH;
        final long childrenOffset = alignSection(bucketsOffset + (long)bucketCount * BUCKET_LENGTH);
        final long stringsOffset = alignSection(childrenOffset + (long)ns.children.length * CHILD_LENGTH);
        final long totalLength = stringsOffset + stringsLength;
        if (totalLength > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("table of " + totalLength + " bytes for " + n +
                " entries exceeds the 2 GiB a mapped buffer addresses");
        }

        final Path temporary = target.resolveSibling(target.getFileName() + ".tmp");
        Files.deleteIfExists(temporary);
        Files.createFile(temporary, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        boolean published = false;
        try {
            try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                final MappedByteBuffer mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, totalLength);
                try {
                    final UnsafeBuffer buffer = new UnsafeBuffer(mapped);
                    buffer.putBytes(MAGIC_OFFSET, MAGIC);
                    buffer.putInt(VERSION_OFFSET, VERSION, LITTLE_ENDIAN);
                    buffer.putInt(HEADER_LENGTH_OFFSET, HEADER_LENGTH, LITTLE_ENDIAN);
                    buffer.putLong(ENTRY_COUNT_OFFSET, n, LITTLE_ENDIAN);
                    buffer.putLong(BUCKET_COUNT_OFFSET, bucketCount, LITTLE_ENDIAN);
                    buffer.putLong(ENTRIES_OFFSET_OFFSET, entriesOffset, LITTLE_ENDIAN);
                    buffer.putLong(BUCKETS_OFFSET_OFFSET, bucketsOffset, LITTLE_ENDIAN);
                    buffer.putLong(CHILDREN_OFFSET_OFFSET, childrenOffset, LITTLE_ENDIAN);
                    buffer.putLong(CHILDREN_COUNT_OFFSET, ns.children.length, LITTLE_ENDIAN);
                    buffer.putLong(STRINGS_OFFSET_OFFSET, stringsOffset, LITTLE_ENDIAN);
                    buffer.putLong(STRINGS_LENGTH_OFFSET, stringsLength, LITTLE_ENDIAN);
                    buffer.putLong(TOTAL_LENGTH_OFFSET, totalLength, LITTLE_ENDIAN);
                    buffer.putInt(RANK_OFFSET, rank, LITTLE_ENDIAN);
                    buffer.putInt(WORLD_SIZE_OFFSET, worldSize, LITTLE_ENDIAN);
                    buffer.putLong(LOCAL_ROOT_OFFSET_OFFSET, 0, LITTLE_ENDIAN);
                    buffer.putInt(LOCAL_ROOT_LENGTH_OFFSET, localRoot.length, LITTLE_ENDIAN);
                    buffer.putInt(ST_DEV_OFFSET, stDev, LITTLE_ENDIAN);
                    buffer.putLong(GENERATION_OFFSET, generation, LITTLE_ENDIAN);
                    buffer.putLong(RESERVED_OFFSET, 0, LITTLE_ENDIAN);

                    writeStringsAndEntries(buffer, ns, localRoot, entriesOffset, (int)stringsOffset);
                    inheritNewestChild(buffer, ns, entriesOffset);
                    final int[] buckets = ns.index.buckets();
                    for (int i = 0; i < bucketCount; i++) {
                        buffer.putInt((int)bucketsOffset + i * BUCKET_LENGTH, buckets[i], LITTLE_ENDIAN);
                    }
                    for (int i = 0; i < ns.children.length; i++) {
                        buffer.putInt((int)childrenOffset + i * CHILD_LENGTH, ns.children[i], LITTLE_ENDIAN);
                    }
                } finally {
                    IoUtil.unmap(mapped);
                }
            }
            Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            published = true;
        } finally {
            if (!published) {
                Files.deleteIfExists(temporary);
            }
        }
        return totalLength;
    }

    private static void checkArguments(final byte[] localRoot, final int rank, final int worldSize,
        final long generation) {
        if (generation == 0) {
            throw new IllegalArgumentException("generation 0 is reserved");
        }
        if (worldSize < 1 || rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " outside world of " + worldSize);
        }
        for (final byte b : localRoot) {
            if (b == 0) {
                throw new IllegalArgumentException("local root holds a NUL byte: " + KeyText.of(localRoot));
            }
        }
    }

    /** The pool is the local root, then each entry's key (and a symlink's target), NUL-terminated, in entry order. */
    private static void writeStringsAndEntries(
        final UnsafeBuffer buffer, final SortedNamespace ns, final byte[] localRoot, final long entriesOffset,
        final int stringsOffset) {
        int pool = stringsOffset;
        buffer.putBytes(pool, localRoot);
        pool += localRoot.length;
        buffer.putByte(pool++, (byte)0);
        for (int i = 0; i < ns.entries.length; i++) {
            final NamespaceEntry e = ns.entries[i];
            final byte[] key = e.key();
            final int at = (int)entryOffset(entriesOffset, i);
            final boolean directory = isDirectory(e.mode());
            final byte[] target = e.linkTarget();
            final long size = directory ? DIRECTORY_SIZE : target != null ? target.length : e.size();
            final int count = directory ? ns.childCount[i] : target != null ? target.length : 0;

            buffer.putLong(at + ENTRY_HASH_OFFSET, ns.index.hash(i), LITTLE_ENDIAN);
            buffer.putLong(at + ENTRY_SIZE_OFFSET, size, LITTLE_ENDIAN);
            buffer.putLong(at + ENTRY_MTIME_SEC_OFFSET, e.mtimeSec(), LITTLE_ENDIAN);
            buffer.putInt(at + ENTRY_MTIME_NSEC_OFFSET, e.mtimeNsec(), LITTLE_ENDIAN);
            buffer.putInt(at + ENTRY_MODE_OFFSET, e.mode(), LITTLE_ENDIAN);
            buffer.putInt(at + ENTRY_UID_OFFSET, e.uid(), LITTLE_ENDIAN);
            buffer.putInt(at + ENTRY_GID_OFFSET, e.gid(), LITTLE_ENDIAN);
            buffer.putLong(at + ENTRY_KEY_OFFSET_OFFSET, pool - stringsOffset, LITTLE_ENDIAN);
            buffer.putInt(at + ENTRY_KEY_LENGTH_OFFSET, key.length, LITTLE_ENDIAN);
            buffer.putInt(at + ENTRY_PARENT_OFFSET, ns.parent[i], LITTLE_ENDIAN);
            buffer.putInt(at + ENTRY_FIRST_CHILD_OFFSET, directory ? ns.firstChild[i] : 0, LITTLE_ENDIAN);
            buffer.putInt(at + ENTRY_CHILD_COUNT_OFFSET, count, LITTLE_ENDIAN);
            buffer.putInt(at + ENTRY_FLAGS_OFFSET, e.flags(), LITTLE_ENDIAN);
            buffer.putInt(at + ENTRY_OWNER_RANK_OFFSET, e.ownerRank(), LITTLE_ENDIAN);

            buffer.putBytes(pool, key);
            pool += key.length;
            buffer.putByte(pool++, (byte)0);
            if (target != null) {
                buffer.putBytes(pool, target);
                pool += target.length;
                buffer.putByte(pool++, (byte)0);
            }
        }
    }

    /**
     * Gives each added directory the mtime, uid and gid of its newest child. Children sort after their parent,
     * so walking entries backwards settles a directory before its own parent looks at it.
     */
    private static void inheritNewestChild(final UnsafeBuffer buffer, final SortedNamespace ns,
        final long entriesOffset) {
        final boolean[] inherited = new boolean[ns.entries.length];
        for (int i = ns.entries.length - 1; i > 0; i--) {
            final int p = ns.parent[i];
            if (!ns.synthesized[p]) {
                continue;
            }
            final int child = (int)entryOffset(entriesOffset, i);
            final int dir = (int)entryOffset(entriesOffset, p);
            final long childSec = buffer.getLong(child + ENTRY_MTIME_SEC_OFFSET, LITTLE_ENDIAN);
            final int childNsec = buffer.getInt(child + ENTRY_MTIME_NSEC_OFFSET, LITTLE_ENDIAN);
            final long dirSec = buffer.getLong(dir + ENTRY_MTIME_SEC_OFFSET, LITTLE_ENDIAN);
            final int dirNsec = buffer.getInt(dir + ENTRY_MTIME_NSEC_OFFSET, LITTLE_ENDIAN);
            if (!inherited[p] || childSec > dirSec || (childSec == dirSec && childNsec > dirNsec)) {
                inherited[p] = true;
                buffer.putLong(dir + ENTRY_MTIME_SEC_OFFSET, childSec, LITTLE_ENDIAN);
                buffer.putInt(dir + ENTRY_MTIME_NSEC_OFFSET, childNsec, LITTLE_ENDIAN);
                buffer.putInt(dir + ENTRY_UID_OFFSET, buffer.getInt(child + ENTRY_UID_OFFSET, LITTLE_ENDIAN),
                    LITTLE_ENDIAN);
                buffer.putInt(dir + ENTRY_GID_OFFSET, buffer.getInt(child + ENTRY_GID_OFFSET, LITTLE_ENDIAN),
                    LITTLE_ENDIAN);
            }
        }
    }
}
