package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.isDirectory;
import static org.fanstore.prep.format.FileModes.isRegular;
import static org.fanstore.prep.format.FileModes.isSymlink;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;

/**
 * Validation of a mapped table: the same checks, in the same order, as {@code fs_table_open} in the shim, so
 * the two readers accept and refuse the same files (the malformed test vectors pin this). After it passes,
 * every offset, length and index a reader follows lies inside the mapping and every probe ends. A dataset's
 * table (as prep wrote it) has a zero job area and nothing after it; a landed one has its job area filled and
 * its local root after the table.
 */
final class MetadataTableLayout {
    /** Bucket values are index + 1 in a u32 and indices are Java ints here. */
    private static final long MAX_ENTRIES = Integer.MAX_VALUE - 1;

    final int entryCount;
    final long bucketCount;
    final long entriesOffset;
    final long bucketsOffset;
    final long childrenOffset;
    final long childrenCount;
    final long stringsOffset;
    final long stringsLength;
    final long bodiesOffset;
    final int partitions;
    final int broadcastPartitions;

    private MetadataTableLayout(final TableMapping b) {
        entryCount = (int)b.getLong(ENTRY_COUNT_OFFSET);
        bucketCount = b.getLong(BUCKET_COUNT_OFFSET);
        entriesOffset = b.getLong(ENTRIES_OFFSET_OFFSET);
        bucketsOffset = b.getLong(BUCKETS_OFFSET_OFFSET);
        childrenOffset = b.getLong(CHILDREN_OFFSET_OFFSET);
        childrenCount = b.getLong(CHILDREN_COUNT_OFFSET);
        stringsOffset = b.getLong(STRINGS_OFFSET_OFFSET);
        stringsLength = b.getLong(STRINGS_LENGTH_OFFSET);
        bodiesOffset = b.getLong(BODIES_OFFSET_OFFSET);
        partitions = b.getInt(PARTITIONS_OFFSET);
        broadcastPartitions = b.getInt(BROADCAST_PARTITIONS_OFFSET);
    }

    /**
     * @param landed true for a node's copy (job area filled, local root after the table), false for the dataset's
     * @param entries false to check the header and sections only, not every entry, child and bucket: for a table
     *                whose CRC32C matched its manifest, so its bytes are those prep wrote after validating them
     *                entry by entry (the O(entries) pass is most of a node's landing time at millions of files; the
     *                shim still checks every entry when it maps the table, and every Java access is bounds-checked)
     * @throws IllegalStateException naming the first fault found
     */
    static MetadataTableLayout validate(final TableMapping b, final boolean landed, final boolean entries) {
        final long tableLength = checkHeader(b, landed);
        final MetadataTableLayout layout = new MetadataTableLayout(b);
        if (entries) {
            layout.checkBody(b);
        }
        if (landed) {
            final long rootOffset = b.getLong(LOCAL_ROOT_OFFSET_OFFSET);
            final long rootLength = b.getInt(LOCAL_ROOT_LENGTH_OFFSET) & 0xffffffffL;
            require(rootOffset >= tableLength && rootOffset < b.length() && rootLength < b.length() - rootOffset &&
                b.getByte(rootOffset + rootLength) == 0, "local root outside the job trailer");
        }
        return layout;
    }

    /** @return the table length */
    private static long checkHeader(final TableMapping b, final boolean landed) {
        final long length = b.length();
        for (int i = 0; i < MAGIC.length; i++) {
            require(b.getByte(MAGIC_OFFSET + i) == MAGIC[i], "bad magic");
        }
        final int version = b.getInt(VERSION_OFFSET);
        require(version == VERSION, "version word " + describeVersion(version) + ", but this build reads "
            + describeVersion(VERSION) + ": prepped or landed by another fanstore version?");
        require(b.getInt(HEADER_LENGTH_OFFSET) == HEADER_LENGTH, "bad header length");
        final long tableLength = b.getLong(TABLE_LENGTH_OFFSET);
        if (landed) {
            require(tableLength >= HEADER_LENGTH && tableLength <= length, "recorded table length past the file");
        } else {
            require(tableLength == length, "recorded length is not the file length");
        }
        final long entries = b.getLong(ENTRY_COUNT_OFFSET);
        require(entries >= 1 && entries <= MAX_ENTRIES, "entry count out of range");
        if (landed) {
            require(b.getLong(GENERATION_OFFSET) != 0, "generation 0");
            final long rank = b.getInt(RANK_OFFSET) & 0xffffffffL;
            final long worldSize = b.getInt(WORLD_SIZE_OFFSET) & 0xffffffffL;
            final long replicas = b.getInt(REPLICAS_OFFSET) & 0xffffffffL;
            require(worldSize >= 1 && rank < worldSize, "rank outside world size");
            require(replicas < worldSize, "replicas not below world size");
        } else {
            for (long at = JOB_AREA_OFFSET; at < HEADER_LENGTH; at += 8) {
                require(b.getLong(at) == 0, "job area not zero in a dataset's table");
            }
        }
        final long buckets = b.getLong(BUCKET_COUNT_OFFSET);
        require(buckets > 0 && (buckets & (buckets - 1)) == 0 && buckets >= 2 * entries,
            "bucket count is not a power of two >= 2 x entries");
        require(sectionFits(b.getLong(ENTRIES_OFFSET_OFFSET), entries, ENTRY_LENGTH, tableLength),
            "entries outside the table");
        require(sectionFits(b.getLong(BUCKETS_OFFSET_OFFSET), buckets, BUCKET_LENGTH, tableLength),
            "buckets outside the table");
        require(sectionFits(b.getLong(CHILDREN_OFFSET_OFFSET),
            b.getLong(CHILDREN_COUNT_OFFSET), CHILD_LENGTH, tableLength), "children outside the table");
        require(sectionFits(b.getLong(STRINGS_OFFSET_OFFSET),
            b.getLong(STRINGS_LENGTH_OFFSET), 1, tableLength), "string pool outside the table");
        require(sectionFits(b.getLong(BODIES_OFFSET_OFFSET), entries, BODY_LENGTH, tableLength),
            "bodies outside the table");
        require(b.getInt(PARTITIONS_OFFSET) >= 0 && b.getInt(BROADCAST_PARTITIONS_OFFSET) >= 0,
            "partition count out of range");
        return tableLength;
    }

    private void checkBody(final TableMapping b) {
        final long root = entryOffset(entriesOffset, 0);
        require(b.getInt(root + ENTRY_KEY_LENGTH_OFFSET) == 0 &&
            isDirectory(b.getInt(root + ENTRY_MODE_OFFSET)) &&
            b.getInt(root + ENTRY_PARENT_OFFSET) == 0, "entry 0 is not the root directory");
        for (int i = 0; i < entryCount; i++) {
            checkEntry(b, entryOffset(entriesOffset, i), i);
        }
        for (long i = 0; i < childrenCount; i++) {
            final long child = b.getInt(childrenOffset + i * CHILD_LENGTH) & 0xffffffffL;
            require(child != 0 && child < entryCount, "children slot " + i + " holds a bad entry index");
        }
        long used = 0;
        for (long i = 0; i < bucketCount; i++) {
            final long v = b.getInt(bucketsOffset + i * BUCKET_LENGTH) & 0xffffffffL;
            require(v <= entryCount, "bucket " + i + " holds a bad entry index");
            used += v != 0 ? 1 : 0;
        }
        require(used == entryCount, "buckets do not reference every entry once");
    }

    private void checkEntry(final TableMapping b, final long at, final int index) {
        final long keyOffset = b.getLong(at + ENTRY_KEY_OFFSET_OFFSET);
        final long keyLength = b.getInt(at + ENTRY_KEY_LENGTH_OFFSET) & 0xffffffffL;
        final String where = "entry " + index + ": ";
        require(stringFits(b, keyOffset, keyLength), where + "key outside the string pool");
        final long parent = b.getInt(at + ENTRY_PARENT_OFFSET) & 0xffffffffL;
        final long nsec = b.getInt(at + ENTRY_MTIME_NSEC_OFFSET) & 0xffffffffL;
        require(parent < entryCount, where + "parent out of range");
        require(nsec < 1_000_000_000L, where + "mtime nanoseconds out of range");
        final int mode = b.getInt(at + ENTRY_MODE_OFFSET);
        final int partition = b.getInt(at + ENTRY_PARTITION_OFFSET);
        if (isRegular(mode)) {
            require(partition >= 0 ? partition < partitions : -1L - partition < broadcastPartitions,
                where + "partition out of range");
        } else {
            require(partition == NO_PARTITION, where + "partition set on an entry without a body");
        }
        final long first = b.getInt(at + ENTRY_FIRST_CHILD_OFFSET) & 0xffffffffL;
        final long count = b.getInt(at + ENTRY_CHILD_COUNT_OFFSET) & 0xffffffffL;
        if (isDirectory(mode)) {
            require(first + count <= childrenCount, where + "children range outside the children array");
            return;
        }
        require(first == 0, where + "first child set on a non-directory");
        if (isSymlink(mode)) {
            require(stringFits(b, keyOffset + keyLength + 1, count), where + "link target outside the string pool");
        } else {
            require(count == 0, where + "child count set on a non-directory");
        }
    }

    /** True when a section of count elements of elem bytes at off lies after the header, inside len, 8-aligned. */
    private static boolean sectionFits(final long off, final long count, final long elem, final long len) {
        if (off % SECTION_ALIGNMENT != 0 || off < HEADER_LENGTH || off > len) {
            return false;
        }
        return count >= 0 && count <= (len - off) / elem;
    }

    /** True when pool[off .. off+n) and a NUL after it lie inside the pool. */
    private boolean stringFits(final TableMapping b, final long off, final long n) {
        if (off < 0 || off >= stringsLength || n >= stringsLength - off) {
            return false;
        }
        return b.getByte(stringsOffset + off + n) == 0;
    }

    private static void require(final boolean condition, final String fault) {
        if (!condition) {
            throw new IllegalStateException(fault);
        }
    }
}
