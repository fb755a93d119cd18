package org.fanstore.runtime.metadata;

/**
 * Layout of {@code meta.tbl}, the metadata table shared with the shim: the one place its offsets live in Java.
 * The specification is README.md beside this file; the C twin is {@code interpose-native/src/meta_table.h}.
 * All integers are little-endian and every section starts 8-byte aligned.
 */
public final class MetadataTableDescriptor {
    /** "FANSMETA" in ASCII, as the first 8 bytes of the file. */
    public static final byte[] MAGIC = {'F', 'A', 'N', 'S', 'M', 'E', 'T', 'A'};
    /** Format number, the top byte of {@link #VERSION}. */
    public static final int FORMAT_VERSION = 1;
    /** Bytes in the header; the entries follow it. */
    public static final int HEADER_LENGTH = 128;
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
    /** Header: u64 length of the whole file (a truncated copy is refused). */
    public static final int TOTAL_LENGTH_OFFSET = 80;
    /** Header: u32 rank of the runtime that wrote the table. */
    public static final int RANK_OFFSET = 88;
    /** Header: u32 number of ranks in the job. */
    public static final int WORLD_SIZE_OFFSET = 92;
    /** Header: u64 pool offset of the local root (NUL-terminated). */
    public static final int LOCAL_ROOT_OFFSET_OFFSET = 96;
    /** Header: u32 local root length, without its NUL. */
    public static final int LOCAL_ROOT_LENGTH_OFFSET = 104;
    /** Header: u32 st_dev reported for every entry. */
    public static final int ST_DEV_OFFSET = 108;
    /** Header: u64 generation, never 0. */
    public static final int GENERATION_OFFSET = 112;
    /** Header: u64 reserved, written as 0. */
    public static final int RESERVED_OFFSET = 120;

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
    /** Entry: u32 flags ({@link #FLAG_LOCAL_RAW}, {@link #FLAG_LOCAL}, {@link #FLAG_COMPRESSED}). */
    public static final int ENTRY_FLAGS_OFFSET = 64;
    /** Entry: u32 owner rank. */
    public static final int ENTRY_OWNER_RANK_OFFSET = 68;

    /** Bytes per bucket: u32, 0 empty, otherwise entry index + 1. */
    public static final int BUCKET_LENGTH = 4;
    /** Bytes per children slot: u32 entry index. */
    public static final int CHILD_LENGTH = 4;

    /** The shim may open {@code <local root>/<key>} itself. */
    public static final int FLAG_LOCAL_RAW = 0x1;
    /** The file is held on this node. */
    public static final int FLAG_LOCAL = 0x2;
    /** The file is stored compressed and must be materialised by the runtime. */
    public static final int FLAG_COMPRESSED = 0x4;

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

    /** Rounds {@code offset} up to the next section boundary. */
    public static long alignSection(final long offset) {
        return (offset + SECTION_ALIGNMENT - 1) & -SECTION_ALIGNMENT;
    }
}
