package org.fanstore.prep.format.table;

/**
 * Layout of the metadata table ({@code namespace.tbl} in a dataset, {@code meta.tbl} landed on a node): the one
 * place its offsets live in Java.
 * The specification is README.md beside this file; the C twin is {@code interpose-native/src/meta_table.h}.
 * All integers are little-endian and every section starts 8-byte aligned.
 * The job area of the header is the one part that differs between the dataset's file and a node's landed copy.
 */
public final class MetadataTableDescriptor {
    /** "FANSMETA" in ASCII, as the first 8 bytes of the file. */
    public static final byte[] MAGIC = {'F', 'A', 'N', 'S', 'M', 'E', 'T', 'A'};
    /** Format number, the top byte of {@link #VERSION}. */
    public static final int FORMAT_VERSION = 3;
    /** Bytes in the header; the entries follow it. */
    public static final int HEADER_LENGTH = 160;
    /** Sections (entries, attributes, buckets, names) start at multiples of this. */
    public static final int SECTION_ALIGNMENT = 8;

    /** Header: the magic. */
    public static final int MAGIC_OFFSET = 0;
    /** Header: u32 version word, {@link #VERSION}. */
    public static final int VERSION_OFFSET = 8;
    /** Header: u32 header length, always {@link #HEADER_LENGTH}. */
    public static final int HEADER_LENGTH_OFFSET = 12;
    /** Header: u64 entry count E (entry 0 is the root ""). */
    public static final int ENTRY_COUNT_OFFSET = 16;
    /** Header: u64 bucket count B, E < B < 2^32 (the writer: E + ceil(3E / 5)). */
    public static final int BUCKET_COUNT_OFFSET = 24;
    /** Header: u64 file offset of the entries. */
    public static final int ENTRIES_OFFSET_OFFSET = 32;
    /** Header: u64 file offset of the buckets. */
    public static final int BUCKETS_OFFSET_OFFSET = 40;
    /** Header: u64 file offset of the attribute table (A x {@link #ATTRIBUTE_LENGTH} bytes). */
    public static final int ATTRIBUTES_OFFSET_OFFSET = 48;
    /** Header: u64 attribute count A, 1 to {@link #MAX_ATTRIBUTES}. */
    public static final int ATTRIBUTE_COUNT_OFFSET = 56;
    /** Header: u64 file offset of the names section. */
    public static final int NAMES_OFFSET_OFFSET = 64;
    /** Header: u64 names section length in bytes. */
    public static final int NAMES_LENGTH_OFFSET = 72;
    /** Header: u64 reserved, 0. */
    public static final int HEADER_RESERVED_OFFSET = 80;
    /** Header: u64 length of the table as prep wrote it; a landed copy appends its job trailer after it. */
    public static final int TABLE_LENGTH_OFFSET = 88;
    /** Header: u64 the dataset's identity ({@code Manifest.datasetId()}): a table of another dataset is refused. */
    public static final int DATASET_ID_OFFSET = 96;
    /** Header: u32 number of regular partitions. */
    public static final int PARTITIONS_OFFSET = 104;
    /** Header: u32 number of broadcast partitions. */
    public static final int BROADCAST_PARTITIONS_OFFSET = 108;
    /** Header: u32 st_dev reported for every entry. */
    public static final int ST_DEV_OFFSET = 112;
    /** Header: u32 CRC32C of the table: bytes [0, CRC_OFFSET) then [HEADER_LENGTH, table length). */
    public static final int CRC_OFFSET = 116;
    /** Header: where the job area starts: zero in the dataset's file, filled in each node's landed copy. */
    public static final int JOB_AREA_OFFSET = 120;
    /** Job area: u32 this node's rank. */
    public static final int RANK_OFFSET = 120;
    /** Job area: u32 number of ranks in the job. */
    public static final int WORLD_SIZE_OFFSET = 124;
    /** Job area: u32 extra copies of each regular partition (--replicas). */
    public static final int REPLICAS_OFFSET = 128;
    /** Job area: u32 reserved, 0. */
    public static final int JOB_RESERVED_OFFSET = 132;
    /** Job area: u64 file offset of the local root (NUL-terminated), at or after the table length. */
    public static final int LOCAL_ROOT_OFFSET_OFFSET = 136;
    /** Job area: u32 local root length, without its NUL. */
    public static final int LOCAL_ROOT_LENGTH_OFFSET = 144;
    /** Job area: u32 reserved, 0. */
    public static final int JOB_RESERVED2_OFFSET = 148;
    /** Job area: u64 generation, never 0 in a landed table. */
    public static final int GENERATION_OFFSET = 152;

    /** Bytes per entry (4-aligned only: fields are read one by one). */
    public static final int ENTRY_LENGTH = 44;
    /**
     * The only version word this code reads or writes: the format number and the structure sizes, one byte each
     * ({@code FORMAT_VERSION << 24 | ENTRY_LENGTH << 8 | HEADER_LENGTH}, byte 2 zero), so a reader built with
     * other structures refuses the table at open instead of reading fields at the wrong offsets.
     */
    public static final int VERSION = FORMAT_VERSION << 24 | ENTRY_LENGTH << 8 | HEADER_LENGTH;
    /** The version word of format 2 (72-byte entries): refused, named in the message that asks for an upgrade. */
    public static final int FORMAT_2_VERSION = 2 << 24 | 72 << 8 | HEADER_LENGTH;
    /** Entry: s64 mtime in nanoseconds since the epoch. */
    public static final int ENTRY_MTIME_OFFSET = 0;
    /** Entry: u48 st_size (the next u16 is the attribute index: read both as one u64). */
    public static final int ENTRY_SIZE_OFFSET = 8;
    /** Entry: u16 attribute index (st_mode, uid, gid). */
    public static final int ENTRY_ATTRIBUTE_OFFSET = 14;
    /** Entry: u32 parent entry index (the root: 0). */
    public static final int ENTRY_PARENT_OFFSET = 16;
    /** Entry: u32 offset of the stored name, relative to the parent's names base. */
    public static final int ENTRY_NAME_OFFSET_OFFSET = 20;
    /** Entry: u8 stored name length. */
    public static final int ENTRY_NAME_LENGTH_OFFSET = 24;
    /** Entry: u8 flags ({@link #FLAG_UNPACKABLE}, {@link #FLAG_NAME_EXTENDS_PARENT}, {@link #FLAG_COMPRESSED}). */
    public static final int ENTRY_FLAGS_OFFSET = 25;
    /** Regular file: u48 offset of the stored body in its partition file. */
    public static final int ENTRY_BODY_OFFSET_OFFSET = 26;
    /** Regular file: s32 partition, p for regular partition p, {@code -1 - i} for broadcast partition i. */
    public static final int ENTRY_PARTITION_OFFSET = 32;
    /** Regular file: u32 CRC32C of the raw bytes. */
    public static final int ENTRY_CRC_OFFSET = 36;
    /** Regular file: u32 stored length when COMPRESSED, else 0 (stored raw: the stored length is st_size). */
    public static final int ENTRY_STORED_LENGTH_OFFSET = 40;
    /** Directory: u48 offset in the names section where its children's stored names start (0 without children). */
    public static final int ENTRY_NAMES_BASE_OFFSET = 26;
    /** Directory: u32 entry index of its first child (0 without children). */
    public static final int ENTRY_FIRST_CHILD_OFFSET = 32;
    /** Directory: u32 child count. */
    public static final int ENTRY_CHILD_COUNT_OFFSET = 36;
    /** The partition reported for an entry without a body (directories, symlinks); never stored. */
    public static final int NO_PARTITION = Integer.MIN_VALUE;
    /** Largest st_size, body offset and names base: 48 bits. */
    public static final long MAX_U48 = (1L << 48) - 1;
    /** Longest name (a path component), in bytes. */
    public static final int MAX_NAME_LENGTH = 255;

    /** Bytes per attribute: u32 st_mode, u32 uid, u32 gid, u32 0. */
    public static final int ATTRIBUTE_LENGTH = 16;
    /** Most distinct (st_mode, uid, gid) triples a table holds. */
    public static final int MAX_ATTRIBUTES = 65536;
    /** Attribute: u32 st_mode including the S_IFMT type bits. */
    public static final int ATTRIBUTE_MODE_OFFSET = 0;
    /** Attribute: u32 uid. */
    public static final int ATTRIBUTE_UID_OFFSET = 4;
    /** Attribute: u32 gid. */
    public static final int ATTRIBUTE_GID_OFFSET = 8;

    /** Bytes per bucket: u32, 0 empty, otherwise entry index + 1. */
    public static final int BUCKET_LENGTH = 4;

    /** Stored raw under a name the runtime can unpack byte-exact: on a node holding its partition, the shim may
     * open {@code <local root>/<key>} itself (a "local raw" entry). */
    public static final int FLAG_UNPACKABLE = 0x1;
    /** The entry's full name is its parent's name followed by its stored name (suffix compression). */
    public static final int FLAG_NAME_EXTENDS_PARENT = 0x2;
    /** Flag bits an entry may carry. */
    public static final int FLAG_MASK = 0x7;
    /** The file is stored compressed (LZ4-chunked) and must be materialised by the runtime. */
    public static final int FLAG_COMPRESSED = 0x4;

    /** st_dev reported for every entry: fixed, so the same file has the same identity on every node. */
    public static final int DATASET_ST_DEV = 0xfa5703;

    /** st_size written for every directory. */
    public static final long DIRECTORY_SIZE = 4096;

    private MetadataTableDescriptor() {
    }

    /** A version word spelled out, for error messages. */
    public static String describeVersion(final int version) {
        return String.format("0x%08x (format %d, entry %d bytes, header %d bytes)", version, version >>> 24,
            version >>> 8 & 0xff, version & 0xff);
    }

    /** File offset of entry {@code index} given the entries section offset. */
    public static long entryOffset(final long entriesOffset, final int index) {
        return entriesOffset + (long)index * ENTRY_LENGTH;
    }

    /** Bucket count the writer uses for {@code entries} entries: E + ceil(3E / 5), a load of 0.625. */
    public static long bucketCountFor(final long entries) {
        return entries + (3 * entries + 4) / 5;
    }

    /** Home bucket of hash {@code h} among {@code buckets} (< 2^63): the high 64 bits of the unsigned h x B. */
    public static long homeBucket(final long h, final long buckets) {
        return Math.multiplyHigh(h, buckets) + ((h >> 63) & buckets);
    }

    /** Rounds {@code offset} up to the next section boundary. */
    public static long alignSection(final long offset) {
        return (offset + SECTION_ALIGNMENT - 1) & -SECTION_ALIGNMENT;
    }
}
