package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.isDirectory;
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
 * The byte level of a format-3 table (README.md "Layout"), written once: the header, each entry's 44 bytes, the
 * attribute table, stored names, the bucket array and the CRC. A caller that knows the breadth-first order and the
 * names' layout hands entries in at their final index, in any order: {@link MetadataTableWriter} from a
 * {@link BreadthFirstNamespace}, the load benchmark's synthetic dataset from its regular tree (100M entries without
 * holding them). Only the bucket array (B x 4 bytes) is held in memory; the rest goes to a mapping of
 * {@code <target>.tmp}, renamed over the target by {@link #publish()}.
 */
public final class TableSink implements AutoCloseable {
    private final Path target;
    private final Path temporary;
    private final FileChannel channel;
    private final TableMapping buffer;
    private final long entriesOffset;
    private final long bucketsOffset;
    private final long namesOffset;
    private final long namesLength;
    private final long totalLength;
    private final int[] buckets;
    private boolean published;
    private int crc;

    private TableSink(final Path target, final Path temporary, final FileChannel channel, final TableMapping buffer,
        final long[] sections, final long namesLength, final int[] buckets) {
        this.target = target;
        this.temporary = temporary;
        this.channel = channel;
        this.buffer = buffer;
        this.entriesOffset = sections[0];
        this.bucketsOffset = sections[2];
        this.namesOffset = sections[3];
        this.namesLength = namesLength;
        this.totalLength = sections[4];
        this.buckets = buckets;
    }

    /**
     * Creates {@code <target>.tmp} for a table of {@code entries} entries, writes its header and attribute table.
     *
     * @param attributes (mode, uid, gid) triples in order of first use, three ints each
     * @param attributeCount how many triples {@code attributes} holds
     * @param namesLength length of the names section (symlink targets included)
     */
    public static TableSink create(final Path target, final long entries, final int[] attributes,
        final int attributeCount, final long namesLength, final long datasetId, final int partitions,
        final int broadcastPartitions, final int stDev) throws IOException {
        final long bucketCount = bucketCountFor(entries);
        if (bucketCount > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("namespace of " + entries + " entries is too large for one table");
        }
        final long entriesAt = HEADER_LENGTH;
        final long attributesAt = alignSection(entriesAt + entries * ENTRY_LENGTH);
        final long bucketsAt = alignSection(attributesAt + (long)attributeCount * ATTRIBUTE_LENGTH);
        final long namesAt = alignSection(bucketsAt + bucketCount * BUCKET_LENGTH);
        final long total = alignSection(namesAt + namesLength);
        final Path temporary = target.resolveSibling(target.getFileName() + ".tmp");
        Files.deleteIfExists(temporary);
        Files.createFile(temporary, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")));
        FileChannel channel = null;
        try {
            channel = FileChannel.open(temporary, StandardOpenOption.READ, StandardOpenOption.WRITE);
            final TableMapping buffer = TableMapping.map(channel, FileChannel.MapMode.READ_WRITE, total);
            buffer.putBytes(MAGIC_OFFSET, MAGIC);
            buffer.putInt(VERSION_OFFSET, VERSION);
            buffer.putInt(HEADER_LENGTH_OFFSET, HEADER_LENGTH);
            buffer.putLong(ENTRY_COUNT_OFFSET, entries);
            buffer.putLong(BUCKET_COUNT_OFFSET, bucketCount);
            buffer.putLong(ENTRIES_OFFSET_OFFSET, entriesAt);
            buffer.putLong(BUCKETS_OFFSET_OFFSET, bucketsAt);
            buffer.putLong(ATTRIBUTES_OFFSET_OFFSET, attributesAt);
            buffer.putLong(ATTRIBUTE_COUNT_OFFSET, attributeCount);
            buffer.putLong(NAMES_OFFSET_OFFSET, namesAt);
            buffer.putLong(NAMES_LENGTH_OFFSET, namesLength);
            buffer.putLong(HEADER_RESERVED_OFFSET, 0);
            buffer.putLong(TABLE_LENGTH_OFFSET, total);
            buffer.putLong(DATASET_ID_OFFSET, datasetId);
            buffer.putInt(PARTITIONS_OFFSET, partitions);
            buffer.putInt(BROADCAST_PARTITIONS_OFFSET, broadcastPartitions);
            buffer.putInt(ST_DEV_OFFSET, stDev);
            buffer.setMemory(CRC_OFFSET, HEADER_LENGTH - CRC_OFFSET, (byte)0);
            for (int a = 0; a < attributeCount; a++) {
                final long at = attributesAt + (long)a * ATTRIBUTE_LENGTH;
                buffer.putInt(at + ATTRIBUTE_MODE_OFFSET, attributes[3 * a]);
                buffer.putInt(at + ATTRIBUTE_UID_OFFSET, attributes[3 * a + 1]);
                buffer.putInt(at + ATTRIBUTE_GID_OFFSET, attributes[3 * a + 2]);
                buffer.putInt(at + 12, 0);
            }
            return new TableSink(target, temporary, channel, buffer,
                new long[] {entriesAt, attributesAt, bucketsAt, namesAt, total}, namesLength,
                new int[(int)bucketCount]);
        } catch (IOException | RuntimeException | Error e) {
            if (channel != null) {
                channel.close();
            }
            Files.deleteIfExists(temporary);
            throw e;
        }
    }

    /**
     * Writes entry {@code k} (its 44 bytes; the key and link target are not read here: see {@link #name}).
     *
     * @param nameOffset  its stored name's offset relative to the parent's names base (u32)
     * @param namesBase   a directory's names base (0 without children); ignored for other types
     * @param firstChild  a directory's first child (ignored when childCount is 0)
     */
    public void entry(final int k, final NamespaceEntry e, final int attribute, final int parent,
        final int nameOffset, final int storedLength, final boolean extendsParent, final long namesBase,
        final int firstChild, final int childCount) {
        final byte[] link = e.linkTarget();
        entry(k, e.mode(), link != null ? link.length : e.size(), e.mtimeSec() * 1_000_000_000L + e.mtimeNsec(),
            e.flags(), e.partition(), e.bodyOffset(), e.crc32c(),
            (e.flags() & FLAG_COMPRESSED) != 0 ? (int)e.storedLength() : 0,
            attribute, parent, nameOffset, storedLength, extendsParent, namesBase, firstChild, childCount);
    }

    /**
     * As {@link #entry(int, NamespaceEntry, int, int, int, int, boolean, long, int, int)}, from the entry's fields.
     *
     * @param size       st_size of a file, a symlink's target length (ignored for a directory)
     * @param mtime      nanoseconds since the epoch
     * @param storedBody a compressed body's stored length, else 0
     */
    void entry(final int k, final int mode, final long size, final long mtime, final int flags,
        final int partition, final long bodyOffset, final int crc32c, final int storedBody, final int attribute,
        final int parent, final int nameOffset, final int storedLength, final boolean extendsParent,
        final long namesBase, final int firstChild, final int childCount) {
        final long at = entryOffset(entriesOffset, k);
        final boolean directory = isDirectory(mode);
        buffer.putLong(at + ENTRY_MTIME_OFFSET, mtime);
        buffer.putLong(at + ENTRY_SIZE_OFFSET, (directory ? DIRECTORY_SIZE : size) | (long)attribute << 48);
        buffer.putInt(at + ENTRY_PARENT_OFFSET, parent);
        buffer.putInt(at + ENTRY_NAME_OFFSET_OFFSET, nameOffset);
        buffer.putByte(at + ENTRY_NAME_LENGTH_OFFSET, (byte)storedLength);
        buffer.putByte(at + ENTRY_FLAGS_OFFSET, (byte)(flags | (extendsParent ? FLAG_NAME_EXTENDS_PARENT : 0)));
        if (directory) {
            buffer.putLong(at + ENTRY_NAMES_BASE_OFFSET, namesBase);   // u48: the next two writes cover the rest
            buffer.putInt(at + ENTRY_FIRST_CHILD_OFFSET, childCount > 0 ? firstChild : 0);
            buffer.putInt(at + ENTRY_CHILD_COUNT_OFFSET, childCount);
            buffer.putInt(at + 40, 0);
        } else if (partition != NO_PARTITION) {
            buffer.putLong(at + ENTRY_BODY_OFFSET_OFFSET, bodyOffset);   // u48, as above
            buffer.putInt(at + ENTRY_PARTITION_OFFSET, partition);
            buffer.putInt(at + ENTRY_CRC_OFFSET, crc32c);
            buffer.putInt(at + ENTRY_STORED_LENGTH_OFFSET, storedBody);
        } else {
            buffer.setMemory(at + ENTRY_BODY_OFFSET_OFFSET, ENTRY_LENGTH - ENTRY_BODY_OFFSET_OFFSET, (byte)0);
        }
    }

    /** Writes {@code length} bytes of {@code bytes} at {@code at} in the names section. */
    public void name(final long at, final byte[] bytes, final int from, final int length) {
        buffer.putBytes(namesOffset + at, ByteBuffer.wrap(bytes, from, length));
    }

    /** Places entry {@code k}, whose key hashes to {@code hash} (FNV-1a 64), in the bucket array. */
    public void bucket(final long hash, final int k) {
        int slot = (int)homeBucket(hash, buckets.length);
        while (buckets[slot] != 0) {
            slot = slot + 1 == buckets.length ? 0 : slot + 1;
        }
        buckets[slot] = k + 1;
    }

    /** Writes the buckets, the names' padding and the CRC, then renames the table over the target. */
    public long publish() throws IOException {
        for (int i = 0; i < buckets.length; i++) {
            buffer.putInt(bucketsOffset + (long)i * BUCKET_LENGTH, buckets[i]);
        }
        final long end = namesOffset + namesLength;
        buffer.setMemory(end, alignSection(end) - end, (byte)0);
        crc = TableChecksum.of(buffer, totalLength);
        buffer.putInt(CRC_OFFSET, crc);
        buffer.force();
        buffer.close();
        channel.close();
        Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        published = true;
        return totalLength;
    }

    /** The CRC32C {@link #publish()} recorded. */
    public int crc() {
        return crc;
    }

    /**
     * The suffix rule (README.md "Names"): whether a child named {@code key[nameFrom..)} under a parent named
     * {@code parentKey[parentFrom..)} stores only what follows the parent's name. The caller checks the parent is
     * not the root and does not use the flag itself.
     */
    public static boolean extendsName(final byte[] parentKey, final int parentFrom, final byte[] key,
        final int nameFrom) {
        final int parentName = parentKey.length - parentFrom;
        return parentName < key.length - nameFrom && java.util.Arrays.equals(parentKey, parentFrom, parentKey.length,
            key, nameFrom, nameFrom + parentName);
    }

    /** Deletes the temporary file unless {@link #publish()} renamed it. */
    @Override
    public void close() throws IOException {
        if (!published) {
            buffer.close();
            channel.close();
            Files.deleteIfExists(temporary);
        }
    }
}
