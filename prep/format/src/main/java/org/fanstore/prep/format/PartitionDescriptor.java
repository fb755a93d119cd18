package org.fanstore.prep.format;

import java.nio.charset.StandardCharsets;

/**
 * The layout of a partition file ({@code *.fsp}), as specified in this package's README.md. Every offset the
 * reader and writer use comes from here; all integers are little-endian.
 */
public final class PartitionDescriptor {
    /** The 8 ASCII bytes every partition file starts with. */
    public static final byte[] MAGIC = "FANSPART".getBytes(StandardCharsets.US_ASCII);
    /** The layout revision; bump it for any change the sizes below do not reveal (a field's meaning, order). */
    public static final int LAYOUT_REVISION = 2;
    /**
     * The only version word this code reads and writes: {@link #versionWord} of the revision and the sizes of
     * the header and of an entry's fixed fields, so a reader whose layout differs in size refuses the file
     * instead of misreading it. The C description (interpose-native/src/partition_format.h) computes the same
     * word from its structs.
     */
    public static final int FORMAT_VERSION;

    /** Offset of the magic bytes. */
    public static final int MAGIC_OFFSET;
    /** Offset of the int32 format version. */
    public static final int VERSION_OFFSET;
    /** Offset of the int32 header size. */
    public static final int HEADER_SIZE_OFFSET;
    /** Offset of the int32 partition index (within its kind: regular or broadcast). */
    public static final int PARTITION_INDEX_OFFSET;
    /** Offset of the int32 flags word. */
    public static final int FLAGS_OFFSET;
    /** Offset of the int64 entry count. */
    public static final int ENTRY_COUNT_OFFSET;
    /** Offset of the int64 table offset. */
    public static final int TABLE_OFFSET_OFFSET;
    /** Offset of the int64 table length in bytes. */
    public static final int TABLE_LENGTH_OFFSET;
    /** Offset of the int64 data offset (table end rounded up to {@link #DATA_ALIGNMENT}). */
    public static final int DATA_OFFSET_OFFSET;
    /** Offset of the int32 CRC32C of the table bytes. */
    public static final int TABLE_CRC_OFFSET;
    /** Offset of the int32 CRC32C of the header bytes before it. */
    public static final int HEADER_CRC_OFFSET;
    /** Length of the header; the table starts right after it. */
    public static final int HEADER_LENGTH;

    /** Flags bit: the partition holds files of --broadcast directories. */
    public static final int FLAG_BROADCAST = 1;
    /** The data area starts at a multiple of this, so bodies can be read with page-aligned I/O. */
    public static final int DATA_ALIGNMENT = 4096;

    /** Offset, within an entry, of the int32 path length; the path bytes follow it. */
    public static final int PATH_LENGTH_OFFSET;
    /** Offset, within an entry, of the path bytes. */
    public static final int PATH_OFFSET;
    /** Offset, after the path bytes, of the int8 entry type. */
    public static final int TYPE_OFFSET;
    /** Offset, after the path bytes, of the int8 codec. */
    public static final int CODEC_OFFSET;
    /** Offset, after the path bytes, of the 2 reserved (zero) bytes. */
    public static final int RESERVED_OFFSET;
    /** Offset, after the path bytes, of the int32 st_mode. */
    public static final int MODE_OFFSET;
    /** Offset, after the path bytes, of the int32 uid. */
    public static final int UID_OFFSET;
    /** Offset, after the path bytes, of the int32 gid. */
    public static final int GID_OFFSET;
    /** Offset, after the path bytes, of the int64 mtime seconds. */
    public static final int MTIME_SEC_OFFSET;
    /** Offset, after the path bytes, of the int32 mtime nanoseconds. */
    public static final int MTIME_NSEC_OFFSET;
    /** Offset, after the path bytes, of the int64 raw length. */
    public static final int RAW_LENGTH_OFFSET;
    /** Offset, after the path bytes, of the int64 stored length. */
    public static final int STORED_LENGTH_OFFSET;
    /** Offset, after the path bytes, of the int64 body offset (relative to the data offset). */
    public static final int BODY_OFFSET_OFFSET;
    /** Offset, after the path bytes, of the int32 CRC32C of the raw bytes. */
    public static final int BODY_CRC_OFFSET;
    /** Length of an entry's fields after its path bytes. */
    public static final int ENTRY_FIXED_LENGTH;

    /** Entry type: regular file. */
    public static final int TYPE_FILE = 1;
    /** Entry type: directory. */
    public static final int TYPE_DIRECTORY = 2;
    /** Entry type: symbolic link (the body is its target). */
    public static final int TYPE_SYMLINK = 3;

    /** Codec: the body is the raw bytes. */
    public static final int CODEC_RAW = 0;
    /** Codec: the body is LZ4 chunked (see {@link Lz4Chunked}). */
    public static final int CODEC_LZ4_CHUNKED = 1;

    /** Raw bytes per LZ4 chunk (all but the last chunk of a body). */
    public static final int LZ4_CHUNK_RAW_LENGTH = 4 * 1024 * 1024;
    /** Offset, within an LZ4 chunk, of the uint32 raw chunk length. */
    public static final int LZ4_CHUNK_RAW_LENGTH_OFFSET;
    /** Offset, within an LZ4 chunk, of the uint32 compressed length. */
    public static final int LZ4_CHUNK_COMPRESSED_LENGTH_OFFSET;
    /** Length of an LZ4 chunk header; the LZ4 block follows it. */
    public static final int LZ4_CHUNK_HEADER_LENGTH;

    static {
        int offset = 0;
        MAGIC_OFFSET = offset;
        offset += MAGIC.length;
        VERSION_OFFSET = offset;
        offset += Integer.BYTES;
        HEADER_SIZE_OFFSET = offset;
        offset += Integer.BYTES;
        PARTITION_INDEX_OFFSET = offset;
        offset += Integer.BYTES;
        FLAGS_OFFSET = offset;
        offset += Integer.BYTES;
        ENTRY_COUNT_OFFSET = offset;
        offset += Long.BYTES;
        TABLE_OFFSET_OFFSET = offset;
        offset += Long.BYTES;
        TABLE_LENGTH_OFFSET = offset;
        offset += Long.BYTES;
        DATA_OFFSET_OFFSET = offset;
        offset += Long.BYTES;
        TABLE_CRC_OFFSET = offset;
        offset += Integer.BYTES;
        HEADER_CRC_OFFSET = offset;
        offset += Integer.BYTES;
        HEADER_LENGTH = offset;

        PATH_LENGTH_OFFSET = 0;
        PATH_OFFSET = Integer.BYTES;

        offset = 0;
        TYPE_OFFSET = offset;
        offset += Byte.BYTES;
        CODEC_OFFSET = offset;
        offset += Byte.BYTES;
        RESERVED_OFFSET = offset;
        offset += Short.BYTES;
        MODE_OFFSET = offset;
        offset += Integer.BYTES;
        UID_OFFSET = offset;
        offset += Integer.BYTES;
        GID_OFFSET = offset;
        offset += Integer.BYTES;
        MTIME_SEC_OFFSET = offset;
        offset += Long.BYTES;
        MTIME_NSEC_OFFSET = offset;
        offset += Integer.BYTES;
        RAW_LENGTH_OFFSET = offset;
        offset += Long.BYTES;
        STORED_LENGTH_OFFSET = offset;
        offset += Long.BYTES;
        BODY_OFFSET_OFFSET = offset;
        offset += Long.BYTES;
        BODY_CRC_OFFSET = offset;
        offset += Integer.BYTES;
        ENTRY_FIXED_LENGTH = offset;

        LZ4_CHUNK_RAW_LENGTH_OFFSET = 0;
        LZ4_CHUNK_COMPRESSED_LENGTH_OFFSET = Integer.BYTES;
        LZ4_CHUNK_HEADER_LENGTH = 2 * Integer.BYTES;

        if (HEADER_LENGTH != 64 || ENTRY_FIXED_LENGTH != 56) {
            throw new AssertionError("partition layout drifted from README.md");
        }
        FORMAT_VERSION = versionWord(LAYOUT_REVISION, HEADER_LENGTH, ENTRY_FIXED_LENGTH);
    }

    private PartitionDescriptor() {
    }

    /** The version word: revision in bits 0-7, entry fixed length in bits 8-15, header length in bits 16-23. */
    public static int versionWord(final int revision, final int headerLength, final int entryFixedLength) {
        return (revision & 0xFF) | (entryFixedLength & 0xFF) << 8 | (headerLength & 0xFF) << 16;
    }

    /** Bytes a table entry with a path of {@code pathLength} bytes occupies. */
    public static long entryLength(final int pathLength) {
        return PATH_OFFSET + (long)pathLength + ENTRY_FIXED_LENGTH;
    }

    /** Where the data area starts for a table of {@code tableLength} bytes. */
    public static long dataOffset(final long tableLength) {
        final long tableEnd = HEADER_LENGTH + tableLength;
        return (tableEnd + DATA_ALIGNMENT - 1) / DATA_ALIGNMENT * DATA_ALIGNMENT;
    }

    /** File name of regular partition {@code index}. */
    public static String regularFileName(final int index) {
        return String.format("part-%05d.fsp", index);
    }

    /** File name of broadcast partition {@code index}. */
    public static String broadcastFileName(final int index) {
        return String.format("bcast-%05d.fsp", index);
    }
}
