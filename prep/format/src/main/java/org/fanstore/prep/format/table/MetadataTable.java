package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.isDirectory;
import static org.fanstore.prep.format.FileModes.isSymlink;
import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Read-only view of a metadata table, a dataset's {@code namespace.tbl} or a node's landed {@code meta.tbl} (format:
 * README.md beside this class), mapped once and validated on
 * {@link #open} exactly as the shim's {@code fs_table_open} does, so every accessor afterwards stays inside the
 * mapping. Lookups allocate nothing; {@link #key}, {@link #linkTarget} and {@link #localRoot} return copies.
 * Indices passed to accessors must lie in {@code [0, entryCount())}. Not usable after {@link #close}.
 */
public final class MetadataTable implements AutoCloseable {
    /** Reads 8 key bytes at once in the order UnsafeBuffer.getLong(index) uses for the mapped bytes. */
    private static final VarHandle LONG_VIEW =
        MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final MappedByteBuffer mapped;
    private final UnsafeBuffer buffer;
    private final int entryCount;
    private final int bucketMask;
    private final int entriesOffset;
    private final int bucketsOffset;
    private final int childrenOffset;
    private final int stringsOffset;
    private final int bodiesOffset;

    private MetadataTable(final MappedByteBuffer mapped, final UnsafeBuffer buffer, final MetadataTableLayout layout) {
        this.mapped = mapped;
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
        final MappedByteBuffer mapped;
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            final long length = channel.size();
            if (length < HEADER_LENGTH || length > Integer.MAX_VALUE) {
                throw new IOException(path + ": not a metadata table: length " + length);
            }
            mapped = channel.map(FileChannel.MapMode.READ_ONLY, 0, length);
        }
        final UnsafeBuffer buffer = new UnsafeBuffer(mapped);
        try {
            return new MetadataTable(mapped, buffer, MetadataTableLayout.validate(buffer, landed, entries));
        } catch (final IllegalStateException ex) {
            IoUtil.unmap(mapped);
            throw new IOException(path + ": malformed metadata table: " + ex.getMessage(), ex);
        }
    }

    /** Entry index of {@code key}, or -1 when absent. The empty key is the root, index 0. */
    public int lookup(final byte[] key) {
        final long h = Fnv1a64.hash(key);
        final UnsafeBuffer buffer = this.buffer;
        final int mask = bucketMask;
        for (int slot = (int)h & mask, probes = 0; probes <= mask; slot = (slot + 1) & mask, probes++) {
            final int b = buffer.getInt(bucketsOffset + slot * BUCKET_LENGTH, LITTLE_ENDIAN);
            if (b == 0) {
                return -1;
            }
            final int at = entry(b - 1);
            if (buffer.getLong(at + ENTRY_HASH_OFFSET, LITTLE_ENDIAN) == h &&
                buffer.getInt(at + ENTRY_KEY_LENGTH_OFFSET, LITTLE_ENDIAN) == key.length &&
                keyEquals(keyAt(at), key)) {
                return b - 1;
            }
        }
        return -1;
    }

    public int entryCount() {
        return entryCount;
    }

    public long hash(final int index) {
        return buffer.getLong(entry(index) + ENTRY_HASH_OFFSET, LITTLE_ENDIAN);
    }

    public int mode(final int index) {
        return buffer.getInt(entry(index) + ENTRY_MODE_OFFSET, LITTLE_ENDIAN);
    }

    public long size(final int index) {
        return buffer.getLong(entry(index) + ENTRY_SIZE_OFFSET, LITTLE_ENDIAN);
    }

    public long mtimeSec(final int index) {
        return buffer.getLong(entry(index) + ENTRY_MTIME_SEC_OFFSET, LITTLE_ENDIAN);
    }

    public int mtimeNsec(final int index) {
        return buffer.getInt(entry(index) + ENTRY_MTIME_NSEC_OFFSET, LITTLE_ENDIAN);
    }

    public int uid(final int index) {
        return buffer.getInt(entry(index) + ENTRY_UID_OFFSET, LITTLE_ENDIAN);
    }

    public int gid(final int index) {
        return buffer.getInt(entry(index) + ENTRY_GID_OFFSET, LITTLE_ENDIAN);
    }

    public int flags(final int index) {
        return buffer.getInt(entry(index) + ENTRY_FLAGS_OFFSET, LITTLE_ENDIAN);
    }

    /** Regular partition p, {@code -1 - i} for broadcast partition i, or {@link #NO_PARTITION}. */
    public int partition(final int index) {
        return buffer.getInt(entry(index) + ENTRY_PARTITION_OFFSET, LITTLE_ENDIAN);
    }

    /** Where the stored body starts in its partition file. */
    public long bodyOffset(final int index) {
        return buffer.getLong(body(index) + BODY_OFFSET_OFFSET, LITTLE_ENDIAN);
    }

    public long storedLength(final int index) {
        return buffer.getLong(body(index) + BODY_STORED_LENGTH_OFFSET, LITTLE_ENDIAN);
    }

    /** CRC32C of the raw bytes. */
    public int crc32c(final int index) {
        return buffer.getInt(body(index) + BODY_CRC_OFFSET, LITTLE_ENDIAN);
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
        return buffer.getInt(entry(index) + ENTRY_PARENT_OFFSET, LITTLE_ENDIAN);
    }

    /** Children of a directory; 0 for anything else. */
    public int childCount(final int index) {
        final int at = entry(index);
        return isDirectory(buffer.getInt(at + ENTRY_MODE_OFFSET, LITTLE_ENDIAN)) ?
            buffer.getInt(at + ENTRY_CHILD_COUNT_OFFSET, LITTLE_ENDIAN) : 0;
    }

    /** Entry index of the k-th child (name order) of directory {@code index}; k in [0, childCount(index)). */
    public int child(final int index, final int k) {
        final int first = buffer.getInt(entry(index) + ENTRY_FIRST_CHILD_OFFSET, LITTLE_ENDIAN);
        return buffer.getInt(childrenOffset + (first + k) * CHILD_LENGTH, LITTLE_ENDIAN);
    }

    public byte[] key(final int index) {
        final int at = entry(index);
        final byte[] key = new byte[buffer.getInt(at + ENTRY_KEY_LENGTH_OFFSET, LITTLE_ENDIAN)];
        buffer.getBytes(keyAt(at), key);
        return key;
    }

    /** A symlink's target; null for anything else. */
    public byte[] linkTarget(final int index) {
        final int at = entry(index);
        if (!isSymlink(buffer.getInt(at + ENTRY_MODE_OFFSET, LITTLE_ENDIAN))) {
            return null;
        }
        final int keyLength = buffer.getInt(at + ENTRY_KEY_LENGTH_OFFSET, LITTLE_ENDIAN);
        final byte[] target = new byte[buffer.getInt(at + ENTRY_CHILD_COUNT_OFFSET, LITTLE_ENDIAN)];
        buffer.getBytes(keyAt(at) + keyLength + 1, target);
        return target;
    }

    public byte[] localRoot() {
        final byte[] root = new byte[buffer.getInt(LOCAL_ROOT_LENGTH_OFFSET, LITTLE_ENDIAN)];
        buffer.getBytes((int)buffer.getLong(LOCAL_ROOT_OFFSET_OFFSET, LITTLE_ENDIAN), root);
        return root;
    }

    public int replicas() {
        return buffer.getInt(REPLICAS_OFFSET, LITTLE_ENDIAN);
    }

    /** The length prep wrote (a landed copy is longer: its job trailer follows). */
    public long tableLength() {
        return buffer.getLong(TABLE_LENGTH_OFFSET, LITTLE_ENDIAN);
    }

    public long datasetId() {
        return buffer.getLong(DATASET_ID_OFFSET, LITTLE_ENDIAN);
    }

    public int partitionCount() {
        return buffer.getInt(PARTITIONS_OFFSET, LITTLE_ENDIAN);
    }

    public int broadcastPartitionCount() {
        return buffer.getInt(BROADCAST_PARTITIONS_OFFSET, LITTLE_ENDIAN);
    }

    /** The CRC32C the header records. */
    public int recordedCrc() {
        return buffer.getInt(CRC_OFFSET, LITTLE_ENDIAN);
    }

    public int rank() {
        return buffer.getInt(RANK_OFFSET, LITTLE_ENDIAN);
    }

    public int worldSize() {
        return buffer.getInt(WORLD_SIZE_OFFSET, LITTLE_ENDIAN);
    }

    public int stDev() {
        return buffer.getInt(ST_DEV_OFFSET, LITTLE_ENDIAN);
    }

    public long generation() {
        return buffer.getLong(GENERATION_OFFSET, LITTLE_ENDIAN);
    }

    /** Length of the mapped file in bytes (the table, plus the job trailer in a landed copy). */
    public long totalBytes() {
        return buffer.capacity();
    }

    @Override
    public void close() {
        IoUtil.unmap(mapped);
    }

    private int entry(final int index) {
        return (int)entryOffset(entriesOffset, index);
    }

    private int body(final int index) {
        return (int)bodyRecordOffset(bodiesOffset, index);
    }

    private int keyAt(final int entryAt) {
        return stringsOffset + (int)buffer.getLong(entryAt + ENTRY_KEY_OFFSET_OFFSET, LITTLE_ENDIAN);
    }

    private boolean keyEquals(final int at, final byte[] key) {
        final UnsafeBuffer buffer = this.buffer;
        int i = 0;
        for (final int words = key.length & ~7; i < words; i += 8) {
            if (buffer.getLong(at + i) != (long)LONG_VIEW.get(key, i)) {
                return false;
            }
        }
        for (; i < key.length; i++) {
            if (buffer.getByte(at + i) != key[i]) {
                return false;
            }
        }
        return true;
    }
}
