package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.isDirectory;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/**
 * Writes a dataset's namespace as its metadata table (format: README.md beside this class). The table is built in
 * {@code <target>.tmp} (mode 0644, like the partitions) through a mapping of exactly its final length, then renamed
 * over the target, so a reader sees either the old table or the whole new one. Directories that no entry names are
 * added as 040755 directories carrying the mtime, uid and gid of their newest child (deterministic, and what a user
 * expects from {@code ls -l}); the root "" is added the same way when absent.
 */
public final class MetadataTableWriter {
    private MetadataTableWriter() {
    }

    /**
     * Writes a dataset's table (job area zero, CRC filled in).
     *
     * @param datasetId  the dataset's identity ({@code Manifest.datasetId()})
     * @param partitions regular partitions; entries' partitions must lie in range
     * @return bytes written
     * @throws IllegalArgumentException for a namespace the format cannot hold (duplicate or malformed keys, a
     *                                  file used as a directory, a partition out of range), naming the offending key
     */
    public static long write(
        final Path target, final List<NamespaceEntry> entries, final long datasetId, final int partitions,
        final int broadcastPartitions, final int stDev) throws IOException {
        final SortedNamespace ns = SortedNamespace.of(entries, partitions, broadcastPartitions);
        final int n = ns.entries.length;
        final int bucketCount = ns.index.buckets().length;

        long stringsLength = 0;
        for (final NamespaceEntry e : ns.entries) {
            stringsLength += e.key().length + 1L + (e.linkTarget() != null ? e.linkTarget().length + 1L : 0);
        }
        final long entriesOffset = HEADER_LENGTH;
        final long bucketsOffset = entriesOffset + (long)n * ENTRY_LENGTH;
        final long childrenOffset = alignSection(bucketsOffset + (long)bucketCount * BUCKET_LENGTH);
        final long stringsOffset = alignSection(childrenOffset + (long)ns.children.length * CHILD_LENGTH);
        final long bodiesOffset = alignSection(stringsOffset + stringsLength);
        final long totalLength = bodiesOffset + (long)n * BODY_LENGTH;

        final Path temporary = target.resolveSibling(target.getFileName() + ".tmp");
        Files.deleteIfExists(temporary);
        Files.createFile(temporary, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")));
        boolean published = false;
        try {
            try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                try (TableMapping buffer = TableMapping.map(channel, FileChannel.MapMode.READ_WRITE, totalLength)) {
                    buffer.putBytes(MAGIC_OFFSET, MAGIC);
                    buffer.putInt(VERSION_OFFSET, VERSION);
                    buffer.putInt(HEADER_LENGTH_OFFSET, HEADER_LENGTH);
                    buffer.putLong(ENTRY_COUNT_OFFSET, n);
                    buffer.putLong(BUCKET_COUNT_OFFSET, bucketCount);
                    buffer.putLong(ENTRIES_OFFSET_OFFSET, entriesOffset);
                    buffer.putLong(BUCKETS_OFFSET_OFFSET, bucketsOffset);
                    buffer.putLong(CHILDREN_OFFSET_OFFSET, childrenOffset);
                    buffer.putLong(CHILDREN_COUNT_OFFSET, ns.children.length);
                    buffer.putLong(STRINGS_OFFSET_OFFSET, stringsOffset);
                    buffer.putLong(STRINGS_LENGTH_OFFSET, stringsLength);
                    buffer.putLong(BODIES_OFFSET_OFFSET, bodiesOffset);
                    buffer.putLong(TABLE_LENGTH_OFFSET, totalLength);
                    buffer.putLong(DATASET_ID_OFFSET, datasetId);
                    buffer.putInt(PARTITIONS_OFFSET, partitions);
                    buffer.putInt(BROADCAST_PARTITIONS_OFFSET, broadcastPartitions);
                    buffer.putInt(ST_DEV_OFFSET, stDev);
                    buffer.setMemory(CRC_OFFSET, HEADER_LENGTH - CRC_OFFSET, (byte)0);

                    writeStringsAndEntries(buffer, ns, entriesOffset, stringsOffset, bodiesOffset);
                    inheritNewestChild(buffer, ns, entriesOffset);
                    final int[] buckets = ns.index.buckets();
                    for (int i = 0; i < bucketCount; i++) {
                        buffer.putInt(bucketsOffset + (long)i * BUCKET_LENGTH, buckets[i]);
                    }
                    for (int i = 0; i < ns.children.length; i++) {
                        buffer.putInt(childrenOffset + (long)i * CHILD_LENGTH, ns.children[i]);
                    }
                    buffer.putInt(CRC_OFFSET, TableChecksum.of(buffer, totalLength));
                    buffer.force();
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

    /** The pool is each entry's key (and a symlink's target), NUL-terminated, in entry order. */
    private static void writeStringsAndEntries(
        final TableMapping buffer, final SortedNamespace ns, final long entriesOffset, final long stringsOffset,
        final long bodiesOffset) {
        long pool = stringsOffset;
        for (int i = 0; i < ns.entries.length; i++) {
            final NamespaceEntry e = ns.entries[i];
            final byte[] key = e.key();
            final long at = entryOffset(entriesOffset, i);
            final boolean directory = isDirectory(e.mode());
            final byte[] target = e.linkTarget();
            final long size = directory ? DIRECTORY_SIZE : target != null ? target.length : e.size();
            final int count = directory ? ns.childCount[i] : target != null ? target.length : 0;

            buffer.putLong(at + ENTRY_HASH_OFFSET, ns.index.hash(i));
            buffer.putLong(at + ENTRY_SIZE_OFFSET, size);
            buffer.putLong(at + ENTRY_MTIME_SEC_OFFSET, e.mtimeSec());
            buffer.putInt(at + ENTRY_MTIME_NSEC_OFFSET, e.mtimeNsec());
            buffer.putInt(at + ENTRY_MODE_OFFSET, e.mode());
            buffer.putInt(at + ENTRY_UID_OFFSET, e.uid());
            buffer.putInt(at + ENTRY_GID_OFFSET, e.gid());
            buffer.putLong(at + ENTRY_KEY_OFFSET_OFFSET, pool - stringsOffset);
            buffer.putInt(at + ENTRY_KEY_LENGTH_OFFSET, key.length);
            buffer.putInt(at + ENTRY_PARENT_OFFSET, ns.parent[i]);
            buffer.putInt(at + ENTRY_FIRST_CHILD_OFFSET, directory ? ns.firstChild[i] : 0);
            buffer.putInt(at + ENTRY_CHILD_COUNT_OFFSET, count);
            buffer.putInt(at + ENTRY_FLAGS_OFFSET, e.flags());
            buffer.putInt(at + ENTRY_PARTITION_OFFSET, e.partition());
            final long body = bodyRecordOffset(bodiesOffset, i);
            if (e.partition() != NO_PARTITION) {
                buffer.putLong(body + BODY_OFFSET_OFFSET, e.bodyOffset());
                buffer.putLong(body + BODY_STORED_LENGTH_OFFSET, e.storedLength());
                buffer.putInt(body + BODY_CRC_OFFSET, e.crc32c());
                buffer.putInt(body + BODY_CODEC_OFFSET, e.codec() & 0xff);
            } else {
                buffer.setMemory(body, BODY_LENGTH, (byte)0);
            }

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
    private static void inheritNewestChild(final TableMapping buffer, final SortedNamespace ns,
        final long entriesOffset) {
        final boolean[] inherited = new boolean[ns.entries.length];
        for (int i = ns.entries.length - 1; i > 0; i--) {
            final int p = ns.parent[i];
            if (!ns.synthesized[p]) {
                continue;
            }
            final long child = entryOffset(entriesOffset, i);
            final long dir = entryOffset(entriesOffset, p);
            final long childSec = buffer.getLong(child + ENTRY_MTIME_SEC_OFFSET);
            final int childNsec = buffer.getInt(child + ENTRY_MTIME_NSEC_OFFSET);
            final long dirSec = buffer.getLong(dir + ENTRY_MTIME_SEC_OFFSET);
            final int dirNsec = buffer.getInt(dir + ENTRY_MTIME_NSEC_OFFSET);
            if (!inherited[p] || childSec > dirSec || (childSec == dirSec && childNsec > dirNsec)) {
                inherited[p] = true;
                buffer.putLong(dir + ENTRY_MTIME_SEC_OFFSET, childSec);
                buffer.putInt(dir + ENTRY_MTIME_NSEC_OFFSET, childNsec);
                buffer.putInt(dir + ENTRY_UID_OFFSET, buffer.getInt(child + ENTRY_UID_OFFSET));
                buffer.putInt(dir + ENTRY_GID_OFFSET, buffer.getInt(child + ENTRY_GID_OFFSET));
            }
        }
    }
}
