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
    final long attributesOffset;
    final int attributeCount;
    final long namesOffset;
    final long namesLength;
    final int partitions;
    final int broadcastPartitions;

    private MetadataTableLayout(final TableMapping b) {
        entryCount = (int)b.getLong(ENTRY_COUNT_OFFSET);
        bucketCount = b.getLong(BUCKET_COUNT_OFFSET);
        entriesOffset = b.getLong(ENTRIES_OFFSET_OFFSET);
        bucketsOffset = b.getLong(BUCKETS_OFFSET_OFFSET);
        attributesOffset = b.getLong(ATTRIBUTES_OFFSET_OFFSET);
        attributeCount = (int)b.getLong(ATTRIBUTE_COUNT_OFFSET);
        namesOffset = b.getLong(NAMES_OFFSET_OFFSET);
        namesLength = b.getLong(NAMES_LENGTH_OFFSET);
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
        require(buckets > entries && buckets <= 0xffffffffL, "bucket count not above the entry count and below 2^32");
        final long attributes = b.getLong(ATTRIBUTE_COUNT_OFFSET);
        require(attributes >= 1 && attributes <= MAX_ATTRIBUTES, "attribute count out of range");
        require(sectionFits(b.getLong(ENTRIES_OFFSET_OFFSET), entries, ENTRY_LENGTH, tableLength),
            "entries outside the table");
        require(sectionFits(b.getLong(BUCKETS_OFFSET_OFFSET), buckets, BUCKET_LENGTH, tableLength),
            "buckets outside the table");
        require(sectionFits(b.getLong(ATTRIBUTES_OFFSET_OFFSET), attributes, ATTRIBUTE_LENGTH, tableLength),
            "attributes outside the table");
        require(sectionFits(b.getLong(NAMES_OFFSET_OFFSET), b.getLong(NAMES_LENGTH_OFFSET), 1, tableLength),
            "names outside the table");
        require(b.getInt(PARTITIONS_OFFSET) >= 0 && b.getInt(BROADCAST_PARTITIONS_OFFSET) >= 0,
            "partition count out of range");
        return tableLength;
    }

    private void checkBody(final TableMapping b) {
        final long root = entryOffset(entriesOffset, 0);
        require((b.getInt(root + 12) >>> 16) < attributeCount, "entry 0: attribute index out of range");
        require(isDirectory(mode(b, root)) && b.getInt(root + ENTRY_PARENT_OFFSET) == 0 &&
            b.getByte(root + ENTRY_NAME_LENGTH_OFFSET) == 0 && b.getByte(root + ENTRY_FLAGS_OFFSET) == 0,
            "entry 0 is not the root directory");
        long next = 1;   // where the next directory's children must start: the ranges tile [1, E)
        for (int i = 0; i < entryCount; i++) {
            final long at = entryOffset(entriesOffset, i);
            next = checkEntry(b, at, i, next);
            if (i > 0) {
                checkName(b, at, i);
            }
        }
        require(next == entryCount, "the directories' child ranges do not cover every entry");
        long used = 0;
        for (long i = 0; i < bucketCount; i++) {
            final long v = b.getInt(bucketsOffset + i * BUCKET_LENGTH) & 0xffffffffL;
            require(v <= entryCount, "bucket " + i + " holds a bad entry index");
            used += v != 0 ? 1 : 0;
        }
        require(used == entryCount, "buckets do not reference every entry once");
    }

    /** Parent, its child range, and the stored name of entry {@code index} > 0. */
    private void checkName(final TableMapping b, final long at, final int index) {
        final long parent = b.getInt(at + ENTRY_PARENT_OFFSET) & 0xffffffffL;
        require(parent < index, index, "parent not before it");
        final long p = entryOffset(entriesOffset, (int)parent);
        require(isDirectory(mode(b, p)), index, "parent not a directory");
        final long first = b.getInt(p + ENTRY_FIRST_CHILD_OFFSET) & 0xffffffffL;
        final long count = b.getInt(p + ENTRY_CHILD_COUNT_OFFSET) & 0xffffffffL;
        require(index >= first && index - first < count, index, "outside its parent's child range");
        final int flags = b.getByte(at + ENTRY_FLAGS_OFFSET) & 0xff;
        final int parentFlags = b.getByte(p + ENTRY_FLAGS_OFFSET) & 0xff;
        require((flags & ~FLAG_MASK) == 0, index, "unknown flag bits");
        final boolean extendsParent = (flags & FLAG_NAME_EXTENDS_PARENT) != 0;
        require(!extendsParent || (parent != 0 && (parentFlags & FLAG_NAME_EXTENDS_PARENT) == 0),
            index, "name extends a parent that is the root or extends its own");
        final long stored = b.getByte(at + ENTRY_NAME_LENGTH_OFFSET) & 0xffL;
        final long full = stored + (extendsParent ? b.getByte(p + ENTRY_NAME_LENGTH_OFFSET) & 0xffL : 0);
        require(full >= 1 && full <= MAX_NAME_LENGTH, index, "name length out of range");
        final long name = namesBase(b, p) + (b.getInt(at + ENTRY_NAME_OFFSET_OFFSET) & 0xffffffffL);
        require(name + stored <= namesLength, index, "name outside the names section");
        for (long k = 0; k < stored; k++) {
            final byte c = b.getByte(namesOffset + name + k);
            require(c != '/' && c != 0, index, "name holds '/' or NUL");
        }
        if (isSymlink(mode(b, at))) {
            require(size(b, at) <= namesLength - name - stored, index, "link target outside the names section");
        }
    }

    /** Attribute, flags and the per-type bytes of entry {@code index}; returns the next expected first child. */
    private long checkEntry(final TableMapping b, final long at, final int index, final long next) {
        require((b.getInt(at + 12) >>> 16) < attributeCount, index, "attribute index out of range");
        final int mode = mode(b, at);
        final int flags = b.getByte(at + ENTRY_FLAGS_OFFSET) & 0xff;
        if (isRegular(mode)) {
            final int partition = b.getInt(at + ENTRY_PARTITION_OFFSET);
            require(partition >= 0 ? partition < partitions : -1L - partition < broadcastPartitions,
                index, "partition out of range");
            return next;
        }
        require((flags & (FLAG_UNPACKABLE | FLAG_COMPRESSED)) == 0, index, "body flags on an entry without a body");
        if (!isDirectory(mode)) {
            return next;
        }
        final long first = b.getInt(at + ENTRY_FIRST_CHILD_OFFSET) & 0xffffffffL;
        final long count = b.getInt(at + ENTRY_CHILD_COUNT_OFFSET) & 0xffffffffL;
        if (count == 0) {
            require(first == 0, index, "first child set on an empty directory");
            return next;
        }
        require(first == next && count <= entryCount - next, index, "child range does not follow the previous one");
        return next + count;
    }

    private int mode(final TableMapping b, final long entryAt) {
        return b.getInt(attributesOffset + (long)(b.getInt(entryAt + 12) >>> 16) * ATTRIBUTE_LENGTH);
    }

    private static long size(final TableMapping b, final long entryAt) {
        return b.getLong(entryAt + ENTRY_SIZE_OFFSET) & MAX_U48;
    }

    private static long namesBase(final TableMapping b, final long dirAt) {
        return b.getLong(dirAt + ENTRY_NAMES_BASE_OFFSET) & MAX_U48;
    }

    /** True when a section of count elements of elem bytes at off lies after the header, inside len, 8-aligned. */
    private static boolean sectionFits(final long off, final long count, final long elem, final long len) {
        if (off % SECTION_ALIGNMENT != 0 || off < HEADER_LENGTH || off > len) {
            return false;
        }
        return count >= 0 && count <= (len - off) / elem;
    }

    private static void require(final boolean condition, final long index, final String fault) {
        if (!condition) {
            throw new IllegalStateException("entry " + index + ": " + fault);
        }
    }

    private static void require(final boolean condition, final String fault) {
        if (!condition) {
            throw new IllegalStateException(fault);
        }
    }
}
