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
    public static final int FORMAT_VERSION = 2;
    /** Bytes in the header; the entries follow it. */
    public static final int HEADER_LENGTH = 160;
    /** Sections (entries, buckets, children, strings) start at multiples of this. */
    public static final int SECTION_ALIGNMENT = 8;

    /** Header: the magic. */
    public static final int MAGIC_OFFSET = 0;
    /** Header: u32 version word, {@link #VERSION}. */
    public static final int VERSION_OFFSET = 8;
    /** Header: u32 header length, always {@link #HEADER_LENGTH}. */
    public static final int HEADER_LENGTH_OFFSET = 12;
    /** Header: u64 entry count E (entry 0 is the root ""). */
    public static final int ENTRY_COUNT_OFFSET = 16;
    /** Header: u64 bucket count B, a power of two, at least 2E. */
    public static final int BUCKET_COUNT_OFFSET = 24;
    /** Header: u64 file offset of the entries. */
    public static final int ENTRIES_OFFSET_OFFSET = 32;
    /** Header: u64 file offset of the buckets. */
    public static final int BUCKETS_OFFSET_OFFSET = 40;
    /** Header: u64 file offset of the children array. */
    public static final int CHILDREN_OFFSET_OFFSET = 48;
    /** Header: u64 number of u32 slots in the children array. */
    public static final int CHILDREN_COUNT_OFFSET = 56;
    /** Header: u64 file offset of the string pool. */
    public static final int STRINGS_OFFSET_OFFSET = 64;
    /** Header: u64 string pool length in bytes. */
    public static final int STRINGS_LENGTH_OFFSET = 72;
    /** Header: u64 file offset of the bodies section (E x {@link #BODY_LENGTH} bytes, read by the runtime only). */
    public static final int BODIES_OFFSET_OFFSET = 80;
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

    /** Bytes per entry. */
    public static final int ENTRY_LENGTH = 72;
    /**
     * The only version word this code reads or writes: the format number and the structure sizes, one byte each
     * ({@code FORMAT_VERSION << 24 | ENTRY_LENGTH << 8 | HEADER_LENGTH}, byte 2 zero), so a reader built with
     * other structures refuses the table at open instead of reading fields at the wrong offsets.
     */
    public static final int VERSION = FORMAT_VERSION << 24 | ENTRY_LENGTH << 8 | HEADER_LENGTH;
    /** Entry: u64 FNV-1a 64 hash of the key. */
    public static final int ENTRY_HASH_OFFSET = 0;
    /** Entry: u64 st_size. */
    public static final int ENTRY_SIZE_OFFSET = 8;
    /** Entry: s64 mtime seconds. */
    public static final int ENTRY_MTIME_SEC_OFFSET = 16;
    /** Entry: u32 mtime nanoseconds. */
    public static final int ENTRY_MTIME_NSEC_OFFSET = 24;
    /** Entry: u32 st_mode including the S_IFMT type bits. */
    public static final int ENTRY_MODE_OFFSET = 28;
    /** Entry: u32 uid. */
    public static final int ENTRY_UID_OFFSET = 32;
    /** Entry: u32 gid. */
    public static final int ENTRY_GID_OFFSET = 36;
    /** Entry: u64 pool offset of the key (then NUL, then a symlink's NUL-terminated target). */
    public static final int ENTRY_KEY_OFFSET_OFFSET = 40;
    /** Entry: u32 key length. */
    public static final int ENTRY_KEY_LENGTH_OFFSET = 48;
    /** Entry: u32 parent entry index (the root is its own parent). */
    public static final int ENTRY_PARENT_OFFSET = 52;
    /** Entry: u32 directory's first slot in the children array; 0 otherwise. */
    public static final int ENTRY_FIRST_CHILD_OFFSET = 56;
    /** Entry: u32 directory's child count, or symlink's target length; 0 otherwise. */
    public static final int ENTRY_CHILD_COUNT_OFFSET = 60;
    /** Entry: u32 flags ({@link #FLAG_UNPACKABLE}, {@link #FLAG_COMPRESSED}). */
    public static final int ENTRY_FLAGS_OFFSET = 64;
    /** Entry: s32 partition holding the body: p for regular partition p, {@code -1 - i} for broadcast partition i,
     * {@link #NO_PARTITION} for an entry without a body (directories, symlinks). */
    public static final int ENTRY_PARTITION_OFFSET = 68;
    /** The partition of an entry without a body. */
    public static final int NO_PARTITION = Integer.MIN_VALUE;

    /** Bytes per body record (bodies section, one per entry, zero for entries without a body). */
    public static final int BODY_LENGTH = 24;
    /** Body: u64 offset of the stored body in its partition file. */
    public static final int BODY_OFFSET_OFFSET = 0;
    /** Body: u64 stored length. */
    public static final int BODY_STORED_LENGTH_OFFSET = 8;
    /** Body: u32 CRC32C of the raw bytes. */
    public static final int BODY_CRC_OFFSET = 16;
    /** Body: u8 codec ({@code PartitionDescriptor.CODEC_*}), then 3 zero bytes. */
    public static final int BODY_CODEC_OFFSET = 20;

    /** Bytes per bucket: u32, 0 empty, otherwise entry index + 1. */
    public static final int BUCKET_LENGTH = 4;
    /** Bytes per children slot: u32 entry index. */
    public static final int CHILD_LENGTH = 4;

    /** Stored raw under a name the runtime can unpack byte-exact: on a node holding its partition, the shim may
     * open {@code <local root>/<key>} itself (a "local raw" entry). */
    public static final int FLAG_UNPACKABLE = 0x1;
    /** The file is stored compressed and must be materialised by the runtime. */
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

    /** File offset of body record {@code index} given the bodies section offset. */
    public static long bodyRecordOffset(final long bodiesOffset, final int index) {
        return bodiesOffset + (long)index * BODY_LENGTH;
    }

    /** Rounds {@code offset} up to the next section boundary. */
    public static long alignSection(final long offset) {
        return (offset + SECTION_ALIGNMENT - 1) & -SECTION_ALIGNMENT;
    }
}
