package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.isDirectory;
import static org.fanstore.prep.format.FileModes.isSymlink;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Read-only view of a metadata table, a dataset's {@code namespace.tbl} or a node's landed {@code meta.tbl} (format:
 * README.md beside this class), mapped once and validated on
 * {@link #open} exactly as the shim's {@code fs_table_open} does, so every accessor afterwards stays inside the
 * mapping. Lookups allocate nothing; {@link #key}, {@link #linkTarget} and {@link #localRoot} return copies.
 * Offsets are 64-bit: the file is mapped in overlapping windows ({@link TableMapping}), so a table may be as large
 * as the node's memory; entry indices are ints (the format's are u32, validation keeps them below 2^31 - 1).
 * Indices passed to accessors must lie in {@code [0, entryCount())}. Not usable after {@link #close}.
 */
public final class MetadataTable implements AutoCloseable {
    private final TableMapping buffer;
    private final int entryCount;
    private final long bucketMask;
    private final long entriesOffset;
    private final long bucketsOffset;
    private final long childrenOffset;
    private final long stringsOffset;
    private final long bodiesOffset;

    private MetadataTable(final TableMapping buffer, final MetadataTableLayout layout) {
        this.buffer = buffer;
        this.entryCount = layout.entryCount;
        this.bucketMask = layout.bucketCount - 1;
        this.entriesOffset = layout.entriesOffset;
        this.bucketsOffset = layout.bucketsOffset;
        this.childrenOffset = layout.childrenOffset;
        this.stringsOffset = layout.stringsOffset;
        this.bodiesOffset = layout.bodiesOffset;
    }

    /**
     * Maps and validates a node's landed table (job area filled in: rank, world, local root); an invalid one throws
     * an IOException naming the file and the first fault.
     */
    public static MetadataTable open(final Path path) throws IOException {
        return open(path, true, true);
    }

    /**
     * Maps a node's landed table whose bytes were just checked against the CRC32C its manifest records: header and
     * sections are validated, not each entry (prep validated every entry before it recorded the CRC; see
     * MetadataTableLayout). Only for {@code TableLanding}, right after the check.
     */
    public static MetadataTable openChecksummed(final Path path) throws IOException {
        return open(path, true, false);
    }

    /**
     * Maps and validates a dataset's table as prep wrote it (job area zero, nothing after the table). The CRC is
     * not checked here: {@link TableChecksum#of} does that, once, where the bytes are read.
     */
    public static MetadataTable openDataset(final Path path) throws IOException {
        return open(path, false, true);
    }

    private static MetadataTable open(final Path path, final boolean landed, final boolean entries)
        throws IOException {
        final TableMapping mapped;
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            final long length = channel.size();
            if (length < HEADER_LENGTH) {
                throw new IOException(path + ": not a metadata table: length " + length);
            }
            mapped = TableMapping.map(channel, FileChannel.MapMode.READ_ONLY, length);
        }
        try {
            return new MetadataTable(mapped, MetadataTableLayout.validate(mapped, landed, entries));
        } catch (final IllegalStateException ex) {
            mapped.close();
            throw new IOException(path + ": malformed metadata table: " + ex.getMessage(), ex);
        }
    }

    /** Entry index of {@code key}, or -1 when absent. The empty key is the root, index 0. */
    public int lookup(final byte[] key) {
        final long h = Fnv1a64.hash(key);
        final TableMapping buffer = this.buffer;
        final long mask = bucketMask;
        for (long slot = h & mask, probes = 0; probes <= mask; slot = (slot + 1) & mask, probes++) {
            final int b = buffer.getInt(bucketsOffset + slot * BUCKET_LENGTH);
            if (b == 0) {
                return -1;
            }
            final long at = entry(b - 1);
            if (buffer.getLong(at + ENTRY_HASH_OFFSET) == h &&
                buffer.getInt(at + ENTRY_KEY_LENGTH_OFFSET) == key.length &&
                buffer.bytesEqual(keyAt(at), key)) {
                return b - 1;
            }
        }
        return -1;
    }

    public int entryCount() {
        return entryCount;
    }

    public long hash(final int index) {
        return buffer.getLong(entry(index) + ENTRY_HASH_OFFSET);
    }

    public int mode(final int index) {
        return buffer.getInt(entry(index) + ENTRY_MODE_OFFSET);
    }

    public long size(final int index) {
        return buffer.getLong(entry(index) + ENTRY_SIZE_OFFSET);
    }

    public long mtimeSec(final int index) {
        return buffer.getLong(entry(index) + ENTRY_MTIME_SEC_OFFSET);
    }

    public int mtimeNsec(final int index) {
        return buffer.getInt(entry(index) + ENTRY_MTIME_NSEC_OFFSET);
    }

    public int uid(final int index) {
        return buffer.getInt(entry(index) + ENTRY_UID_OFFSET);
    }

    public int gid(final int index) {
        return buffer.getInt(entry(index) + ENTRY_GID_OFFSET);
    }

    public int flags(final int index) {
        return buffer.getInt(entry(index) + ENTRY_FLAGS_OFFSET);
    }

    /** Regular partition p, {@code -1 - i} for broadcast partition i, or {@link #NO_PARTITION}. */
    public int partition(final int index) {
        return buffer.getInt(entry(index) + ENTRY_PARTITION_OFFSET);
    }

    /** Where the stored body starts in its partition file. */
    public long bodyOffset(final int index) {
        return buffer.getLong(body(index) + BODY_OFFSET_OFFSET);
    }

    public long storedLength(final int index) {
        return buffer.getLong(body(index) + BODY_STORED_LENGTH_OFFSET);
    }

    /** CRC32C of the raw bytes. */
    public int crc32c(final int index) {
        return buffer.getInt(body(index) + BODY_CRC_OFFSET);
    }

    public int codec(final int index) {
        return buffer.getByte(body(index) + BODY_CODEC_OFFSET) & 0xff;
    }

    /**
     * Whether this node holds partition p (landed tables only): broadcast partitions always, regular partition p
     * when this rank is its owner ({@code p % world}) or one of the {@code replicas} ranks after it. The shim's
     * {@code fs_table_holds} computes the same.
     */
    public boolean holds(final int partition) {
        if (partition == NO_PARTITION) {
            return false;
        }
        if (partition < 0) {
            return true;
        }
        final int world = worldSize();
        return Math.floorMod(rank() - partition % world, world) <= replicas();
    }

    /** An entry the shim opens as {@code <local root>/<key>} on this node: unpackable and held here. */
    public boolean localRaw(final int index) {
        return (flags(index) & FLAG_UNPACKABLE) != 0 && holds(partition(index));
    }

    public int parent(final int index) {
        return buffer.getInt(entry(index) + ENTRY_PARENT_OFFSET);
    }

    /** Children of a directory; 0 for anything else. */
    public int childCount(final int index) {
        final long at = entry(index);
        return isDirectory(buffer.getInt(at + ENTRY_MODE_OFFSET)) ?
            buffer.getInt(at + ENTRY_CHILD_COUNT_OFFSET) : 0;
    }

    /** Entry index of the k-th child (name order) of directory {@code index}; k in [0, childCount(index)). */
    public int child(final int index, final int k) {
        final int first = buffer.getInt(entry(index) + ENTRY_FIRST_CHILD_OFFSET);
        return buffer.getInt(childrenOffset + ((first & 0xffffffffL) + k) * CHILD_LENGTH);
    }

    public byte[] key(final int index) {
        final long at = entry(index);
        final byte[] key = new byte[buffer.getInt(at + ENTRY_KEY_LENGTH_OFFSET)];
        buffer.getBytes(keyAt(at), key);
        return key;
    }

    /** A symlink's target; null for anything else. */
    public byte[] linkTarget(final int index) {
        final long at = entry(index);
        if (!isSymlink(buffer.getInt(at + ENTRY_MODE_OFFSET))) {
            return null;
        }
        final int keyLength = buffer.getInt(at + ENTRY_KEY_LENGTH_OFFSET);
        final byte[] target = new byte[buffer.getInt(at + ENTRY_CHILD_COUNT_OFFSET)];
        buffer.getBytes(keyAt(at) + keyLength + 1, target);
        return target;
    }

    public byte[] localRoot() {
        final byte[] root = new byte[buffer.getInt(LOCAL_ROOT_LENGTH_OFFSET)];
        buffer.getBytes(buffer.getLong(LOCAL_ROOT_OFFSET_OFFSET), root);
        return root;
    }

    public int replicas() {
        return buffer.getInt(REPLICAS_OFFSET);
    }

    /** The length prep wrote (a landed copy is longer: its job trailer follows). */
    public long tableLength() {
        return buffer.getLong(TABLE_LENGTH_OFFSET);
    }

    public long datasetId() {
        return buffer.getLong(DATASET_ID_OFFSET);
    }

    public int partitionCount() {
        return buffer.getInt(PARTITIONS_OFFSET);
    }

    public int broadcastPartitionCount() {
        return buffer.getInt(BROADCAST_PARTITIONS_OFFSET);
    }

    /** The CRC32C the header records. */
    public int recordedCrc() {
        return buffer.getInt(CRC_OFFSET);
    }

    public int rank() {
        return buffer.getInt(RANK_OFFSET);
    }

    public int worldSize() {
        return buffer.getInt(WORLD_SIZE_OFFSET);
    }

    public int stDev() {
        return buffer.getInt(ST_DEV_OFFSET);
    }

    public long generation() {
        return buffer.getLong(GENERATION_OFFSET);
    }

    /** Length of the mapped file in bytes (the table, plus the job trailer in a landed copy). */
    public long totalBytes() {
        return buffer.length();
    }

    @Override
    public void close() {
        buffer.close();
    }

    private long entry(final int index) {
        return entryOffset(entriesOffset, index);
    }

    private long body(final int index) {
        return bodyRecordOffset(bodiesOffset, index);
    }

    private long keyAt(final long entryAt) {
        return stringsOffset + buffer.getLong(entryAt + ENTRY_KEY_OFFSET_OFFSET);
    }
}
