/* partition_format: the layout of a dataset partition file (*.fsp) as C structs.
 * Format: prep/format/src/main/java/org/fanstore/prep/format/README.md (the one specification; the Java
 * constants are PartitionDescriptor's). The shim never reads partitions: this header is for C tools and
 * tests, and the golden vectors in tests/vectors/partition keep it and the Java description in step.
 * All integers are little-endian; the structs are read by memcpy from the file bytes. */
#ifndef FANSTORE_PARTITION_FORMAT_H
#define FANSTORE_PARTITION_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define FS_PART_MAGIC            "FANSPART"
#define FS_PART_LAYOUT_REVISION  2u
#define FS_PART_HEADER_SIZE      64u
#define FS_PART_ENTRY_FIXED_SIZE 56u
#define FS_PART_DATA_ALIGNMENT   4096u
#define FS_PART_FLAG_BROADCAST   0x1u

#define FS_PART_TYPE_FILE        1u
#define FS_PART_TYPE_DIRECTORY   2u
#define FS_PART_TYPE_SYMLINK     3u
#define FS_PART_CODEC_RAW        0u
#define FS_PART_CODEC_LZ4        1u
#define FS_PART_LZ4_CHUNK_RAW    (4u * 1024u * 1024u)

/* The 64-byte header at offset 0. */
typedef struct fs_part_header {
    char     magic[8];
    uint32_t version;        /* FS_PART_VERSION */
    uint32_t header_size;
    uint32_t partition_index;
    uint32_t flags;
    uint64_t entry_count;
    uint64_t table_offset;   /* = header size */
    uint64_t table_length;
    uint64_t data_offset;    /* table end rounded up to FS_PART_DATA_ALIGNMENT */
    uint32_t table_crc;      /* CRC32C of the table bytes */
    uint32_t header_crc;     /* CRC32C of the header bytes before this field */
} fs_part_header;

/* A table entry is `u32 path length L, L path bytes`, then these fixed fields. They follow a path of any
 * length, so they are unaligned in the file: packed, and copied out rather than pointed at. */
typedef struct __attribute__((packed)) fs_part_entry_fixed {
    uint8_t  type;           /* FS_PART_TYPE_* */
    uint8_t  codec;          /* FS_PART_CODEC_* */
    uint16_t reserved;
    uint32_t mode;           /* st_mode, type bits included */
    uint32_t uid;
    uint32_t gid;
    int64_t  mtime_sec;
    uint32_t mtime_nsec;
    uint64_t raw_length;     /* st_size; symlink: target length; directory: 0 */
    uint64_t stored_length;  /* bytes in the data area */
    uint64_t body_offset;    /* relative to the data offset */
    uint32_t body_crc;       /* CRC32C of the raw bytes */
} fs_part_entry_fixed;

/* Each LZ4 chunk of a codec-1 body starts with this; the LZ4 block follows. */
typedef struct fs_part_lz4_chunk {
    uint32_t raw_length;
    uint32_t compressed_length;
} fs_part_lz4_chunk;

/* The version word: revision, entry fixed size and header size, a byte each, so a reader built with structs
 * of another size refuses the file instead of misreading it (Java: PartitionDescriptor.versionWord). */
#define FS_PART_VERSION_WORD(revision, header_size, entry_fixed_size) \
    (((uint32_t)(revision) & 0xffu) | ((uint32_t)(entry_fixed_size) & 0xffu) << 8 | \
     ((uint32_t)(header_size) & 0xffu) << 16)
#define FS_PART_VERSION \
    FS_PART_VERSION_WORD(FS_PART_LAYOUT_REVISION, sizeof(fs_part_header), sizeof(fs_part_entry_fixed))

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the structs are the file's little-endian bytes");
_Static_assert(sizeof(fs_part_header) == FS_PART_HEADER_SIZE, "header layout");
_Static_assert(offsetof(fs_part_header, version) == 8, "header layout");
_Static_assert(offsetof(fs_part_header, entry_count) == 24, "header layout");
_Static_assert(offsetof(fs_part_header, data_offset) == 48, "header layout");
_Static_assert(offsetof(fs_part_header, table_crc) == 56, "header layout");
_Static_assert(offsetof(fs_part_header, header_crc) == 60, "header layout");
_Static_assert(sizeof(fs_part_entry_fixed) == FS_PART_ENTRY_FIXED_SIZE, "entry layout");
_Static_assert(offsetof(fs_part_entry_fixed, mode) == 4, "entry layout");
_Static_assert(offsetof(fs_part_entry_fixed, mtime_sec) == 16, "entry layout");
_Static_assert(offsetof(fs_part_entry_fixed, raw_length) == 28, "entry layout");
_Static_assert(offsetof(fs_part_entry_fixed, body_offset) == 44, "entry layout");
_Static_assert(offsetof(fs_part_entry_fixed, body_crc) == 52, "entry layout");
_Static_assert(sizeof(fs_part_lz4_chunk) == 8, "LZ4 chunk header layout");
_Static_assert(FS_PART_VERSION == 0x00403802u, "version word of revision 2 with these sizes");

#endif
