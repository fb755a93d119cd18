package org.fanstore.prep.format.table;

import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The malformed vectors of tests/vectors/metadata: copies of basic.tbl with one fault each, named after the fault,
 * one per validation rule of format 3 (README.md "Validation"). Every reader must refuse each one.
 */
final class MalformedVectors {
    private final byte[] good;
    private final ByteBuffer h;
    private final long entries;
    private final long entriesOffset;
    private final long attributesOffset;
    private final long namesOffset;
    private final long namesLength;
    private final MetadataTable table;
    private final Map<String, byte[]> bad = new LinkedHashMap<>();

    private MalformedVectors(final byte[] good, final MetadataTable table) {
        this.good = good;
        this.h = ByteBuffer.wrap(good).order(LITTLE_ENDIAN);
        this.entries = h.getLong(ENTRY_COUNT_OFFSET);
        this.entriesOffset = h.getLong(ENTRIES_OFFSET_OFFSET);
        this.attributesOffset = h.getLong(ATTRIBUTES_OFFSET_OFFSET);
        this.namesOffset = h.getLong(NAMES_OFFSET_OFFSET);
        this.namesLength = h.getLong(NAMES_LENGTH_OFFSET);
        this.table = table;
    }

    /** The damaged tables of {@code good}, the bytes of the valid landed table at {@code basic}. */
    static Map<String, byte[]> of(final byte[] good, final Path basic) throws IOException {
        try (MetadataTable table = MetadataTable.open(basic)) {
            final MalformedVectors v = new MalformedVectors(good, table);
            v.header();
            v.entries();
            v.buckets();
            return v.bad;
        }
    }

    private void header() {
        final long tableLength = h.getLong(TABLE_LENGTH_OFFSET);
        bad.put("empty.tbl", new byte[0]);
        bad.put("header-only.tbl", Arrays.copyOf(good, HEADER_LENGTH));
        bad.put("truncated.tbl", Arrays.copyOf(good, good.length / 2));
        bad.put("bad-magic.tbl", patch8(MAGIC_OFFSET + 3, 'X'));
        bad.put("bad-version.tbl", patch32(VERSION_OFFSET, 3));
        bad.put("format-2.tbl", patch32(VERSION_OFFSET, FORMAT_2_VERSION));
        bad.put(MetadataVectors.OTHER_ENTRY_SIZE, patch32(VERSION_OFFSET, MetadataVectors.OTHER_ENTRY_SIZE_VERSION));
        bad.put("bad-header-length.tbl", patch32(HEADER_LENGTH_OFFSET, 128));
        bad.put("generation-zero.tbl", patch64(GENERATION_OFFSET, 0));
        bad.put("rank-outside-world.tbl", patch32(RANK_OFFSET, MetadataVectors.WORLD_SIZE));
        bad.put("replicas-not-below-world.tbl", patch32(REPLICAS_OFFSET, MetadataVectors.WORLD_SIZE));
        bad.put("local-root-inside-table.tbl", patch64(LOCAL_ROOT_OFFSET_OFFSET, HEADER_LENGTH));
        bad.put("table-length-past-end.tbl", patch64(TABLE_LENGTH_OFFSET, good.length + 8L));
        bad.put("no-entries.tbl", patch64(ENTRY_COUNT_OFFSET, 0));
        bad.put("entry-count-huge.tbl", patch64(ENTRY_COUNT_OFFSET, 0xffffffffL));
        bad.put("entries-past-end.tbl", patch64(ENTRIES_OFFSET_OFFSET, tableLength));
        bad.put("entries-misaligned.tbl", patch64(ENTRIES_OFFSET_OFFSET, entriesOffset + 4));
        bad.put("buckets-not-above-entries.tbl", patch64(BUCKET_COUNT_OFFSET, entries));
        bad.put("bucket-count-2-to-32.tbl", patch64(BUCKET_COUNT_OFFSET, 1L << 32));
        bad.put("huge-bucket-count.tbl", patch64(BUCKET_COUNT_OFFSET, 1L << 62));
        bad.put("buckets-past-end.tbl", patch64(BUCKETS_OFFSET_OFFSET, tableLength - 8));
        bad.put("attribute-count-zero.tbl", patch64(ATTRIBUTE_COUNT_OFFSET, 0));
        bad.put("attribute-count-65537.tbl", patch64(ATTRIBUTE_COUNT_OFFSET, MAX_ATTRIBUTES + 1));
        bad.put("attributes-past-end.tbl", patch64(ATTRIBUTES_OFFSET_OFFSET, tableLength));
        bad.put("names-misaligned.tbl", patch64(NAMES_OFFSET_OFFSET, namesOffset + 1));
        bad.put("names-length-past-end.tbl", patch64(NAMES_LENGTH_OFFSET, tableLength - namesOffset + 1));
        bad.put("partition-count-negative.tbl", patch32(PARTITIONS_OFFSET, -1));
    }

    private void entries() {
        final int file = index("top.txt");
        final int broadcastFile = index("dataset/a/x");
        final int dir = index("dataset");
        final int emptyDir = index("dataset/empty");
        final int link = index("dataset/link");
        final int extending = index("dataset/train/n01/n01_3.jpg");
        final int underExtending = index("dataset/train/n01/n01x/n01x_9.jpg");
        final int rootChild = index("other");
        final int last = (int)entries - 1;

        bad.put("root-not-directory.tbl", patch16(entry(0) + ENTRY_ATTRIBUTE_OFFSET, attribute(file)));
        bad.put("root-parent-not-zero.tbl", patch32(entry(0) + ENTRY_PARENT_OFFSET, 1));
        bad.put("root-with-name.tbl", patch8(entry(0) + ENTRY_NAME_LENGTH_OFFSET, 1));
        bad.put("root-with-flags.tbl", patch8(entry(0) + ENTRY_FLAGS_OFFSET, FLAG_NAME_EXTENDS_PARENT));
        bad.put("parent-not-before.tbl", patch32(entry(last) + ENTRY_PARENT_OFFSET, last));
        bad.put("parent-out-of-range.tbl", patch32(entry(last) + ENTRY_PARENT_OFFSET, (int)entries));
        bad.put("parent-not-directory.tbl", patch32(entry(last) + ENTRY_PARENT_OFFSET, file));
        bad.put("outside-parent-range.tbl", patch32(entry(last) + ENTRY_PARENT_OFFSET, 0));
        bad.put("attribute-out-of-range.tbl", patch16(entry(file) + ENTRY_ATTRIBUTE_OFFSET,
            (int)h.getLong(ATTRIBUTE_COUNT_OFFSET)));
        bad.put("unknown-flag.tbl", patch8(entry(file) + ENTRY_FLAGS_OFFSET, flags(file) | 8));
        bad.put("extends-the-root.tbl", patch8(entry(rootChild) + ENTRY_FLAGS_OFFSET,
            flags(rootChild) | FLAG_NAME_EXTENDS_PARENT));
        bad.put("extends-an-extending-parent.tbl", patch8(entry(underExtending) + ENTRY_FLAGS_OFFSET,
            flags(underExtending) | FLAG_NAME_EXTENDS_PARENT));
        bad.put("name-length-zero.tbl", patch8(entry(file) + ENTRY_NAME_LENGTH_OFFSET, 0));
        bad.put("name-over-255.tbl", patch8(entry(extending) + ENTRY_NAME_LENGTH_OFFSET, 255));
        bad.put("name-outside-names.tbl", patch32(entry(file) + ENTRY_NAME_OFFSET_OFFSET, (int)namesLength));
        bad.put("name-holds-slash.tbl", patch8(nameAt(file), '/'));
        bad.put("name-holds-nul.tbl", patch8(nameAt(extending) + 1, 0));
        bad.put("child-count-huge.tbl", patch32(entry(0) + ENTRY_CHILD_COUNT_OFFSET, (int)entries));
        bad.put("child-range-not-tiled.tbl", patch32(entry(dir) + ENTRY_FIRST_CHILD_OFFSET, firstChild(dir) + 1));
        bad.put("child-ranges-short.tbl", patch32(entry(parent(last)) + ENTRY_CHILD_COUNT_OFFSET,
            h.getInt((int)entry(parent(last)) + ENTRY_CHILD_COUNT_OFFSET) - 1));
        bad.put("empty-directory-with-first-child.tbl", patch32(entry(emptyDir) + ENTRY_FIRST_CHILD_OFFSET, 1));
        bad.put("partition-out-of-range.tbl", patch32(entry(file) + ENTRY_PARTITION_OFFSET,
            MetadataVectors.PARTITIONS));
        bad.put("broadcast-partition-out-of-range.tbl", patch32(entry(broadcastFile) + ENTRY_PARTITION_OFFSET,
            -1 - MetadataVectors.BROADCAST_PARTITIONS));
        bad.put("unpackable-directory.tbl", patch8(entry(dir) + ENTRY_FLAGS_OFFSET, FLAG_UNPACKABLE));
        bad.put("compressed-symlink.tbl", patch8(entry(link) + ENTRY_FLAGS_OFFSET, FLAG_COMPRESSED));
        bad.put("link-target-outside-names.tbl", patch64(entry(link) + ENTRY_SIZE_OFFSET,
            (h.getLong((int)entry(link) + ENTRY_SIZE_OFFSET) & ~MAX_U48) | namesLength));
    }

    private void buckets() {
        final long bucketsOffset = h.getLong(BUCKETS_OFFSET_OFFSET);
        final long bucketCount = h.getLong(BUCKET_COUNT_OFFSET);
        long firstUsed = -1;
        for (long i = 0; i < bucketCount && firstUsed < 0; i++) {
            firstUsed = h.getInt((int)(bucketsOffset + i * BUCKET_LENGTH)) != 0 ? bucketsOffset + i * BUCKET_LENGTH
                : -1;
        }
        bad.put("bucket-index-out-of-range.tbl", patch32(firstUsed, (int)entries + 5));
        bad.put("bucket-missing.tbl", patch32(firstUsed, 0));
        final ByteBuffer full = ByteBuffer.wrap(good.clone()).order(LITTLE_ENDIAN);
        for (long i = 0; i < bucketCount; i++) {   // every bucket points at entry 1: a miss would probe forever
            full.putInt((int)(bucketsOffset + i * BUCKET_LENGTH), 1);
        }
        bad.put("no-empty-bucket.tbl", full.array());
    }

    private int index(final String key) {
        final int i = table.lookup(key.getBytes(US_ASCII));
        if (i < 0) {
            throw new IllegalStateException("basic.tbl lacks " + key);
        }
        return i;
    }

    private long entry(final int index) {
        return entryOffset(entriesOffset, index);
    }

    private int attribute(final int index) {
        return h.getShort((int)entry(index) + ENTRY_ATTRIBUTE_OFFSET) & 0xffff;
    }

    private int flags(final int index) {
        return good[(int)entry(index) + ENTRY_FLAGS_OFFSET] & 0xff;
    }

    private int parent(final int index) {
        return h.getInt((int)entry(index) + ENTRY_PARENT_OFFSET);
    }

    private int firstChild(final int index) {
        return h.getInt((int)entry(index) + ENTRY_FIRST_CHILD_OFFSET);
    }

    /** File offset of the stored name of entry {@code index}. */
    private long nameAt(final int index) {
        final long base = h.getLong((int)entry(parent(index)) + ENTRY_NAMES_BASE_OFFSET) & MAX_U48;
        return namesOffset + base + (h.getInt((int)entry(index) + ENTRY_NAME_OFFSET_OFFSET) & 0xffffffffL);
    }

    private byte[] patch8(final long at, final int value) {
        final byte[] copy = good.clone();
        copy[(int)at] = (byte)value;
        return copy;
    }

    private byte[] patch16(final long at, final int value) {
        return ByteBuffer.wrap(good.clone()).order(LITTLE_ENDIAN).putShort((int)at, (short)value).array();
    }

    private byte[] patch32(final long at, final int value) {
        return ByteBuffer.wrap(good.clone()).order(LITTLE_ENDIAN).putInt((int)at, value).array();
    }

    private byte[] patch64(final long at, final long value) {
        return ByteBuffer.wrap(good.clone()).order(LITTLE_ENDIAN).putLong((int)at, value).array();
    }
}
