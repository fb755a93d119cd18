package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.isDirectory;
import static org.fanstore.prep.format.FileModes.isRegular;
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
    private final long bucketCount;
    private final long entriesOffset;
    private final long bucketsOffset;
    private final long attributesOffset;
    private final long namesOffset;
    /**
     * st_mode of each attribute index, read once at open: the O(entries) walks of a job's start (partition, body
     * fields) ask every entry's type, and a Java array read is cheaper than a second mapped read. Sized for every
     * u16 index (unused ones 0: no type), so even an unvalidated entry cannot index past it.
     */
    private final int[] modes = new int[MAX_ATTRIBUTES];

    private MetadataTable(final TableMapping buffer, final MetadataTableLayout layout) {
        this.buffer = buffer;
        this.entryCount = layout.entryCount;
        this.bucketCount = layout.bucketCount;
        this.entriesOffset = layout.entriesOffset;
        this.bucketsOffset = layout.bucketsOffset;
        this.attributesOffset = layout.attributesOffset;
        this.namesOffset = layout.namesOffset;
        for (int a = 0; a < layout.attributeCount; a++) {
            modes[a] = buffer.getInt(attributesOffset + (long)a * ATTRIBUTE_LENGTH + ATTRIBUTE_MODE_OFFSET);
        }
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
        final long buckets = bucketCount;
        long slot = homeBucket(h, buckets);
        for (long probes = 0; probes < buckets; probes++) {
            final int b = buffer.getInt(bucketsOffset + slot * BUCKET_LENGTH);
            if (b == 0) {
                return -1;
            }
            if (matches(b - 1, key, key.length)) {
                return b - 1;
            }
            slot = slot + 1 == buckets ? 0 : slot + 1;
        }
        return -1;
    }

    /** Whether entry {@code index} is {@code key} (without hashing: the names up its parent chain). */
    public boolean keyEquals(final int index, final byte[] key) {
        return matches(index, key, key.length);
    }

    /** Whether entry e's key is {@code key[0 .. end)}: its name ends the key, its parent's key precedes it. */
    private boolean matches(final int e, final byte[] key, final int end) {
        int cur = e;
        int to = end;
        while (cur != 0) {
            final long at = entry(cur);
            final int parent = buffer.getInt(at + ENTRY_PARENT_OFFSET);
            final int stored = buffer.getByte(at + ENTRY_NAME_LENGTH_OFFSET) & 0xff;
            final boolean extendsParent = (buffer.getByte(at + ENTRY_FLAGS_OFFSET) & FLAG_NAME_EXTENDS_PARENT) != 0;
            final long p = entry(parent);
            final int prefix = extendsParent ? buffer.getByte(p + ENTRY_NAME_LENGTH_OFFSET) & 0xff : 0;
            final int from = to - prefix - stored;
            if (from < 0 || (parent == 0 ? from != 0 : from == 0 || key[from - 1] != '/')) {
                return false;
            }
            if (!buffer.bytesEqual(nameAt(at, p), key, from + prefix, stored)) {
                return false;
            }
            if (extendsParent && !buffer.bytesEqual(nameAt(p, entry(buffer.getInt(p + ENTRY_PARENT_OFFSET))), key,
                from, prefix)) {
                return false;
            }
            cur = parent;
            to = parent == 0 ? 0 : from - 1;
        }
        return to == 0;
    }

    public int entryCount() {
        return entryCount;
    }

    /** FNV-1a 64 of the entry's key (computed: format 3 stores no hash). */
    public long hash(final int index) {
        return Fnv1a64.hash(key(index));
    }

    public int mode(final int index) {
        return modeAt(entry(index));
    }

    public long size(final int index) {
        return buffer.getLong(entry(index) + ENTRY_SIZE_OFFSET) & MAX_U48;
    }

    public long mtimeSec(final int index) {
        return Math.floorDiv(buffer.getLong(entry(index) + ENTRY_MTIME_OFFSET), 1_000_000_000L);
    }

    public int mtimeNsec(final int index) {
        return (int)Math.floorMod(buffer.getLong(entry(index) + ENTRY_MTIME_OFFSET), 1_000_000_000L);
    }

    public int uid(final int index) {
        return attribute(entry(index), ATTRIBUTE_UID_OFFSET);
    }

    public int gid(final int index) {
        return attribute(entry(index), ATTRIBUTE_GID_OFFSET);
    }

    /** The entry's flag byte: {@link MetadataTableDescriptor#FLAG_UNPACKABLE}, {@code FLAG_NAME_EXTENDS_PARENT},
     * {@code FLAG_COMPRESSED}. */
    public int flags(final int index) {
        return buffer.getByte(entry(index) + ENTRY_FLAGS_OFFSET) & 0xff;
    }

    /** Regular partition p, {@code -1 - i} for broadcast partition i, or {@link #NO_PARTITION}. */
    public int partition(final int index) {
        final long at = entry(index);
        return isRegular(modeAt(at)) ? buffer.getInt(at + ENTRY_PARTITION_OFFSET) : NO_PARTITION;
    }

    /** Where the stored body starts in its partition file (regular files; 0 otherwise). */
    public long bodyOffset(final int index) {
        final long at = entry(index);
        // bytes 24-31: name length, flags, then the u48 body offset
        return isRegular(modeAt(at)) ? buffer.getLong(at + ENTRY_NAME_LENGTH_OFFSET) >>> 16 : 0;
    }

    /** The stored body's length: the compressed length, or st_size for a raw body; 0 without a body. */
    public long storedLength(final int index) {
        final long at = entry(index);
        if (!isRegular(modeAt(at))) {
            return 0;
        }
        return (buffer.getByte(at + ENTRY_FLAGS_OFFSET) & FLAG_COMPRESSED) != 0 ?
            buffer.getInt(at + ENTRY_STORED_LENGTH_OFFSET) & 0xffffffffL :
            buffer.getLong(at + ENTRY_SIZE_OFFSET) & MAX_U48;
    }

    /** CRC32C of the raw bytes (regular files; 0 otherwise). */
    public int crc32c(final int index) {
        final long at = entry(index);
        return isRegular(modeAt(at)) ? buffer.getInt(at + ENTRY_CRC_OFFSET) : 0;
    }

    /** {@code PartitionDescriptor.CODEC_LZ4_CHUNKED} (1) for a COMPRESSED file, else raw (0). */
    public int codec(final int index) {
        return (flags(index) & FLAG_COMPRESSED) != 0 ? 1 : 0;
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
        return isDirectory(modeAt(at)) ? buffer.getInt(at + ENTRY_CHILD_COUNT_OFFSET) : 0;
    }

    /**
     * Entry index of the k-th child (name order) of directory {@code index}; k in [0, childCount(index)). Children
     * are contiguous entries: {@code child(d, k) == child(d, 0) + k}.
     */
    public int child(final int index, final int k) {
        return buffer.getInt(entry(index) + ENTRY_FIRST_CHILD_OFFSET) + k;
    }

    /** The entry's name (the last component of its key; "" for the root). */
    public byte[] name(final int index) {
        final long at = entry(index);
        final int stored = buffer.getByte(at + ENTRY_NAME_LENGTH_OFFSET) & 0xff;
        if (index == 0) {
            return new byte[0];
        }
        final long p = entry(buffer.getInt(at + ENTRY_PARENT_OFFSET));
        if ((buffer.getByte(at + ENTRY_FLAGS_OFFSET) & FLAG_NAME_EXTENDS_PARENT) == 0) {
            final byte[] name = new byte[stored];
            buffer.getBytes(nameAt(at, p), name);
            return name;
        }
        final byte[] prefix = name(buffer.getInt(at + ENTRY_PARENT_OFFSET));
        final byte[] name = java.util.Arrays.copyOf(prefix, prefix.length + stored);
        final byte[] suffix = new byte[stored];
        buffer.getBytes(nameAt(at, p), suffix);
        System.arraycopy(suffix, 0, name, prefix.length, stored);
        return name;
    }

    /** The entry's key, rebuilt from its parent chain (names joined by '/'; "" for the root). */
    public byte[] key(final int index) {
        int length = -1;
        for (int i = index; i != 0; i = parent(i)) {
            length += nameLength(i) + 1;
        }
        final byte[] key = new byte[Math.max(length, 0)];
        int end = key.length;
        for (int i = index; i != 0; i = parent(i)) {
            final byte[] name = name(i);
            end -= name.length;
            System.arraycopy(name, 0, key, end, name.length);
            if (end > 0) {
                key[--end] = '/';
            }
        }
        return key;
    }

    private int nameLength(final int index) {
        final long at = entry(index);
        final int stored = buffer.getByte(at + ENTRY_NAME_LENGTH_OFFSET) & 0xff;
        return (buffer.getByte(at + ENTRY_FLAGS_OFFSET) & FLAG_NAME_EXTENDS_PARENT) == 0 ? stored
            : stored + (buffer.getByte(entry(parent(index)) + ENTRY_NAME_LENGTH_OFFSET) & 0xff);
    }

    /** A symlink's target; null for anything else. */
    public byte[] linkTarget(final int index) {
        final long at = entry(index);
        if (!isSymlink(modeAt(at))) {
            return null;
        }
        final long size = buffer.getLong(at + ENTRY_SIZE_OFFSET) & MAX_U48;
        final byte[] target = new byte[(int)size];
        buffer.getBytes(nameAt(at, entry(buffer.getInt(at + ENTRY_PARENT_OFFSET)))
            + (buffer.getByte(at + ENTRY_NAME_LENGTH_OFFSET) & 0xff), target);
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

    /** File offset of the stored name of the entry at {@code at} whose parent's entry is at {@code parentAt}. */
    private long nameAt(final long at, final long parentAt) {
        return namesOffset + (buffer.getLong(parentAt + ENTRY_NAMES_BASE_OFFSET) & MAX_U48)
            + (buffer.getInt(at + ENTRY_NAME_OFFSET_OFFSET) & 0xffffffffL);
    }

    private int modeAt(final long at) {
        return modes[buffer.getInt(at + 12) >>> 16];
    }

    /** A field of the entry's attribute: st_mode, uid or gid. */
    private int attribute(final long at, final int field) {
        return buffer.getInt(attributesOffset + (long)(buffer.getInt(at + 12) >>> 16) * ATTRIBUTE_LENGTH + field);
    }
}
