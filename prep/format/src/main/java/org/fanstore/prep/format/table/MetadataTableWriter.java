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
 * Writes a dataset's namespace as its metadata table (format 3: README.md beside this class). The table is built in
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
        final BreadthFirstNamespace bf = new BreadthFirstNamespace(
            SortedNamespace.of(entries, partitions, broadcastPartitions));
        final int n = bf.order.length;
        final long entriesOffset = HEADER_LENGTH;
        final long attributesOffset = alignSection(entriesOffset + (long)n * ENTRY_LENGTH);
        final long bucketsOffset = alignSection(attributesOffset + (long)bf.attributeCount * ATTRIBUTE_LENGTH);
        final long namesOffset = alignSection(bucketsOffset + (long)bf.buckets.length * BUCKET_LENGTH);
        final long totalLength = alignSection(namesOffset + bf.namesLength);

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
                    buffer.putLong(BUCKET_COUNT_OFFSET, bf.buckets.length);
                    buffer.putLong(ENTRIES_OFFSET_OFFSET, entriesOffset);
                    buffer.putLong(BUCKETS_OFFSET_OFFSET, bucketsOffset);
                    buffer.putLong(ATTRIBUTES_OFFSET_OFFSET, attributesOffset);
                    buffer.putLong(ATTRIBUTE_COUNT_OFFSET, bf.attributeCount);
                    buffer.putLong(NAMES_OFFSET_OFFSET, namesOffset);
                    buffer.putLong(NAMES_LENGTH_OFFSET, bf.namesLength);
                    buffer.putLong(HEADER_RESERVED_OFFSET, 0);
                    buffer.putLong(TABLE_LENGTH_OFFSET, totalLength);
                    buffer.putLong(DATASET_ID_OFFSET, datasetId);
                    buffer.putInt(PARTITIONS_OFFSET, partitions);
                    buffer.putInt(BROADCAST_PARTITIONS_OFFSET, broadcastPartitions);
                    buffer.putInt(ST_DEV_OFFSET, stDev);
                    buffer.setMemory(CRC_OFFSET, HEADER_LENGTH - CRC_OFFSET, (byte)0);

                    writeEntries(buffer, bf, entriesOffset);
                    for (int a = 0; a < bf.attributeCount; a++) {
                        final long at = attributesOffset + (long)a * ATTRIBUTE_LENGTH;
                        buffer.putInt(at + ATTRIBUTE_MODE_OFFSET, bf.attributes[3 * a]);
                        buffer.putInt(at + ATTRIBUTE_UID_OFFSET, bf.attributes[3 * a + 1]);
                        buffer.putInt(at + ATTRIBUTE_GID_OFFSET, bf.attributes[3 * a + 2]);
                        buffer.putInt(at + 12, 0);
                    }
                    for (int i = 0; i < bf.buckets.length; i++) {
                        buffer.putInt(bucketsOffset + (long)i * BUCKET_LENGTH, bf.buckets[i]);
                    }
                    writeNames(buffer, bf, namesOffset);
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

    private static void writeEntries(final TableMapping buffer, final BreadthFirstNamespace bf,
        final long entriesOffset) {
        for (int k = 0; k < bf.order.length; k++) {
            final NamespaceEntry e = bf.entry(k);
            final long at = entryOffset(entriesOffset, k);
            final boolean directory = isDirectory(e.mode());
            final byte[] target = e.linkTarget();
            final long size = directory ? DIRECTORY_SIZE : target != null ? target.length : e.size();
            buffer.putLong(at + ENTRY_MTIME_OFFSET, e.mtimeSec() * 1_000_000_000L + e.mtimeNsec());
            buffer.putLong(at + ENTRY_SIZE_OFFSET, size | (long)bf.attribute[k] << 48);
            buffer.putInt(at + ENTRY_PARENT_OFFSET, bf.parent[k]);
            buffer.putInt(at + ENTRY_NAME_OFFSET_OFFSET, bf.nameOffset[k]);
            final int flags = e.flags() | (bf.extendsParent[k] ? FLAG_NAME_EXTENDS_PARENT : 0);
            buffer.putByte(at + ENTRY_NAME_LENGTH_OFFSET, (byte)bf.storedLength(k));
            buffer.putByte(at + ENTRY_FLAGS_OFFSET, (byte)flags);
            if (directory) {
                final int count = bf.ns.childCount[bf.order[k]];
                buffer.putLong(at + ENTRY_NAMES_BASE_OFFSET, bf.namesBase[k]);   // u48: the next two writes cover
                buffer.putInt(at + ENTRY_FIRST_CHILD_OFFSET, count > 0 ? bf.firstChild[k] : 0);
                buffer.putInt(at + ENTRY_CHILD_COUNT_OFFSET, count);
                buffer.putInt(at + 40, 0);
            } else if (e.partition() != NO_PARTITION) {
                buffer.putLong(at + ENTRY_BODY_OFFSET_OFFSET, e.bodyOffset());   // u48, as above
                buffer.putInt(at + ENTRY_PARTITION_OFFSET, e.partition());
                buffer.putInt(at + ENTRY_CRC_OFFSET, e.crc32c());
                buffer.putInt(at + ENTRY_STORED_LENGTH_OFFSET, (e.flags() & FLAG_COMPRESSED) != 0 ?
                    (int)e.storedLength() : 0);
            } else {
                buffer.setMemory(at + ENTRY_BODY_OFFSET_OFFSET, ENTRY_LENGTH - ENTRY_BODY_OFFSET_OFFSET, (byte)0);
            }
        }
    }

    /** Each directory's children's stored names (and symlink targets), directories in entry order. */
    private static void writeNames(final TableMapping buffer, final BreadthFirstNamespace bf, final long namesOffset) {
        for (int k = 1; k < bf.order.length; k++) {
            final NamespaceEntry e = bf.entry(k);
            final long at = namesOffset + bf.namesBase[bf.parent[k]] + (bf.nameOffset[k] & 0xffffffffL);
            final byte[] key = e.key();
            final int from = bf.storedFrom[k];
            buffer.putBytes(at, java.nio.ByteBuffer.wrap(key, from, key.length - from));
            if (e.linkTarget() != null) {
                buffer.putBytes(at + key.length - from, e.linkTarget());
            }
        }
        final long end = namesOffset + bf.namesLength;
        buffer.setMemory(end, alignSection(end) - end, (byte)0);
    }
}
