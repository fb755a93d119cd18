package org.fanstore.runtime.metadata;

import static org.fanstore.prep.format.FileModes.isDirectory;
import static org.fanstore.prep.format.FileModes.isSymlink;
import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static org.fanstore.runtime.metadata.MetadataTableDescriptor.*;

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
 * Read-only view of a {@code meta.tbl} (format: README.md beside this class), mapped once and validated on
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

    private MetadataTable(final MappedByteBuffer mapped, final UnsafeBuffer buffer, final MetadataTableLayout layout) {
        this.mapped = mapped;
        this.buffer = buffer;
        this.entryCount = layout.entryCount;
        this.bucketMask = layout.bucketCount - 1;
        this.entriesOffset = layout.entriesOffset;
        this.bucketsOffset = layout.bucketsOffset;
        this.childrenOffset = layout.childrenOffset;
        this.stringsOffset = layout.stringsOffset;
    }

    /** Maps and validates a table; an invalid one throws an IOException naming the file and the first fault. */
    public static MetadataTable open(final Path path) throws IOException {
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
            return new MetadataTable(mapped, buffer, MetadataTableLayout.validate(buffer));
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

    public int ownerRank(final int index) {
        return buffer.getInt(entry(index) + ENTRY_OWNER_RANK_OFFSET, LITTLE_ENDIAN);
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
        buffer.getBytes(stringsOffset + (int)buffer.getLong(LOCAL_ROOT_OFFSET_OFFSET, LITTLE_ENDIAN), root);
        return root;
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

    /** Length of the table file in bytes. */
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
