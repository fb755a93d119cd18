/* meta_table: read-only view of the runtime's metadata table (meta.tbl).
 * Format: runtime/src/main/java/org/fanstore/runtime/metadata/README.md (the one specification).
 * Invariants: the table is immutable once mapped; a fs_table never changes after fs_table_open returns,
 * so lookups need no locks. No function here allocates after open or calls exit(). */
#ifndef FANSTORE_META_TABLE_H
#define FANSTORE_META_TABLE_H

#include <stddef.h>
#include <stdint.h>

#define FS_META_MAGIC        "FANSMETA"
#define FS_META_FORMAT       1u
#define FS_META_HEADER_SIZE  128u
#define FS_META_ENTRY_SIZE   72u

#define FS_ENTRY_LOCAL_RAW   0x1u
#define FS_ENTRY_LOCAL       0x2u
#define FS_ENTRY_COMPRESSED  0x4u

/* The 128-byte header, exactly as laid out in the file (little-endian). Field order and offsets are the
 * specification's; meta_table.c asserts them at compile time. */
typedef struct fs_meta_header {
    char     magic[8];
    uint32_t version;
    uint32_t header_size;
    uint64_t entry_count;
    uint64_t bucket_count;
    uint64_t entries_off;
    uint64_t buckets_off;
    uint64_t children_off;
    uint64_t children_count;
    uint64_t strings_off;
    uint64_t strings_len;
    uint64_t total_size;
    uint32_t rank;
    uint32_t world_size;
    uint64_t local_root_off;
    uint32_t local_root_len;
    uint32_t st_dev;
    uint64_t generation;
    uint64_t reserved;
} fs_meta_header;

/* One entry, exactly as laid out in the file (72 bytes, little-endian, 8-aligned). */
typedef struct fs_entry {
    uint64_t hash;
    uint64_t size;
    int64_t  mtime_sec;
    uint32_t mtime_nsec;
    uint32_t mode;
    uint32_t uid;
    uint32_t gid;
    uint64_t key_off;
    uint32_t key_len;
    uint32_t parent;
    uint32_t first_child;
    uint32_t child_count;   /* dir: children; symlink: target length */
    uint32_t flags;
    uint32_t owner_rank;
} fs_entry;

/* The version word folds the format number and the struct sizes, one byte each (format << 24 | entry << 8 |
 * header), so a shim built with other structs refuses the table (-EINVAL) instead of misreading it. */
#define FS_META_VERSION ((FS_META_FORMAT << 24) | ((uint32_t)sizeof(fs_entry) << 8) | (uint32_t)sizeof(fs_meta_header))
_Static_assert(sizeof(fs_entry) < 256 && sizeof(fs_meta_header) < 256, "each size fits its byte of the version");
_Static_assert(FS_META_VERSION == 0x01004880u, "version word: MetadataTableDescriptor.VERSION says the same");

typedef struct fs_table {
    const uint8_t  *base;
    size_t          length;
    uint64_t        entry_count;
    uint64_t        bucket_mask;
    const fs_entry *entries;
    const uint32_t *buckets;
    const uint32_t *children;
    uint64_t        children_count;
    const char     *strings;
    uint64_t        strings_len;
    const char     *local_root;
    uint32_t        local_root_len;
    uint32_t        st_dev;
    uint32_t        rank;
    uint32_t        world_size;
    uint64_t        generation;
} fs_table;

uint64_t fs_fnv1a64(const char *key, size_t len);

/* Maps and validates path. Returns 0, or -errno (-EINVAL for a malformed table). */
int fs_table_open(const char *path, fs_table *out);
void fs_table_close(fs_table *t);

/* Entry index of key (len bytes, no NUL needed), or -1 when absent. "" is the root (index 0). */
int64_t fs_table_lookup(const fs_table *t, const char *key, size_t len);

static inline const fs_entry *fs_table_entry(const fs_table *t, uint32_t idx) { return &t->entries[idx]; }
static inline const char *fs_entry_key(const fs_table *t, const fs_entry *e) { return t->strings + e->key_off; }
/* Symlink target (NUL-terminated, e->child_count bytes). */
static inline const char *fs_entry_link_target(const fs_table *t, const fs_entry *e) {
    return t->strings + e->key_off + e->key_len + 1;
}
/* Name = last component of the key. */
const char *fs_entry_name(const fs_table *t, const fs_entry *e, size_t *len);

#endif
