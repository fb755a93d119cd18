/* output_journal: the layout of the output journal `outputs` (in the rank's shared-memory directory) and a
 * checked record iterator. Specification: runtime/src/main/java/org/fanstore/runtime/output/README.md; Java twin:
 * OutputJournalDescriptor (writer: OutputJournal); golden file both sides check: tests/vectors/outputs/.
 * The writer appends whole records, then moves `published` past them with a release store; a reader loads it
 * with acquire and reads only below it. Native-endian. */
#ifndef FANSTORE_OUTPUT_JOURNAL_H
#define FANSTORE_OUTPUT_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#define FS_OJ_MAGIC          "FANSOUT1"
#define FS_OJ_FORMAT         2u
#define FS_OJ_HEADER_SIZE    4096u
#define FS_OJ_ALIGNMENT      8u

/* Record kinds: OutputRecord.Kind codes. */
#define FS_OJ_FILE   1u
#define FS_OJ_DIR    2u
#define FS_OJ_UNLINK 3u
#define FS_OJ_RMDIR  4u
#define FS_OJ_RENAME 5u

typedef struct fs_oj_header {
    char              magic[8];
    _Atomic uint32_t  version;         /* FS_OJ_VERSION, stored last by the writer */
    int32_t           rank;            /* the rank writing it: FILE records it holds are in its upper */
    uint64_t          capacity;        /* the file's length */
    _Atomic uint64_t  published;       /* end of the published records, a file offset >= FS_OJ_HEADER_SIZE */
    uint32_t          staging_len;     /* length of the path at offset 64: the UPPER directory (format 2) */
    uint8_t           reserved[28];
} fs_oj_header;

typedef struct fs_oj_record {
    uint32_t length;                   /* header + key + target + padding, a multiple of 8 */
    uint16_t kind;
    uint16_t key_len;
    uint16_t target_len;
    uint16_t reserved0;
    uint32_t mode;
    uint64_t size;
    int64_t  mtime_ns;
    int32_t  holder;
    uint32_t reserved1;
    uint64_t object_id;
    /* key bytes, target bytes, zero padding */
} fs_oj_record;

/* Where the rank's upper directory path lies (the field is named staging; it holds the upper path). */
#define FS_OJ_STAGING_OFFSET 64u
#define FS_OJ_VERSION ((FS_OJ_FORMAT << 24) | (uint32_t)sizeof(fs_oj_record))

_Static_assert(sizeof(fs_oj_header) == 64, "journal header");
_Static_assert(offsetof(fs_oj_header, version) == 8 && offsetof(fs_oj_header, rank) == 12, "journal header");
_Static_assert(offsetof(fs_oj_header, capacity) == 16 && offsetof(fs_oj_header, published) == 24, "journal header");
_Static_assert(offsetof(fs_oj_header, staging_len) == 32, "journal header");
_Static_assert(sizeof(fs_oj_record) == 48, "journal record");
_Static_assert(offsetof(fs_oj_record, kind) == 4 && offsetof(fs_oj_record, key_len) == 6, "journal record");
_Static_assert(offsetof(fs_oj_record, target_len) == 8 && offsetof(fs_oj_record, mode) == 12, "journal record");
_Static_assert(offsetof(fs_oj_record, size) == 16 && offsetof(fs_oj_record, mtime_ns) == 24, "journal record");
_Static_assert(offsetof(fs_oj_record, holder) == 32 && offsetof(fs_oj_record, object_id) == 40, "journal record");
_Static_assert(FS_OJ_VERSION == 0x02000030u, "version word: OutputJournalDescriptor.VERSION says the same");

/* Checks a mapped journal of size bytes (magic, version, capacity, staging path). 0 or -EPROTO. */
int fs_oj_check(const void *base, size_t size);

/* The record at offset pos (< end, end <= size, both as published), validated; its key follows it, then its
 * target. Returns the offset of the next record, or -EPROTO for a record that does not fit or is malformed. */
int64_t fs_oj_next(const void *base, uint64_t pos, uint64_t end, const fs_oj_record **out);

static inline const char *fs_oj_key(const fs_oj_record *r) { return (const char *)(r + 1); }
static inline const char *fs_oj_target(const fs_oj_record *r) { return (const char *)(r + 1) + r->key_len; }

#endif
