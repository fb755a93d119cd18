/* meta_table: read-only view of a node's landed metadata table (meta.tbl: the dataset's namespace.tbl as prep wrote
 * it, plus this node's job area and local root).
 * Format: prep/format/src/main/java/org/fanstore/prep/format/table/README.md (the one specification).
 * Invariants: the table is immutable once mapped; a fs_table never changes after fs_table_open returns,
 * so lookups need no locks. No function here allocates after open or calls exit(). */
#ifndef FANSTORE_META_TABLE_H
#define FANSTORE_META_TABLE_H

#include <stddef.h>
#include <stdint.h>

#define FS_META_MAGIC        "FANSMETA"
#define FS_META_FORMAT       2u
#define FS_META_HEADER_SIZE  160u
#define FS_META_ENTRY_SIZE   72u
#define FS_META_BODY_SIZE    24u

#define FS_ENTRY_UNPACKABLE  0x1u
#define FS_ENTRY_COMPRESSED  0x4u
/* The partition of an entry without a body (directories, symlinks). */
#define FS_NO_PARTITION      INT32_MIN

/* The 160-byte header, exactly as laid out in the file (little-endian). Field order and offsets are the
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
    uint64_t bodies_off;
    uint64_t table_len;     /* the table as prep wrote it; the job trailer follows */
    uint64_t dataset_id;
    uint32_t partitions;
    uint32_t broadcast_partitions;
    uint32_t st_dev;
    uint32_t crc32c;        /* of [0, 116) and [160, table_len): checked by the runtime, not here */
    /* job area: zero in the dataset's file, filled by the runtime in its node's copy */
    uint32_t rank;
    uint32_t world_size;
    uint32_t replicas;
    uint32_t job_reserved;
    uint64_t local_root_off; /* file offset, in the job trailer */
    uint32_t local_root_len;
    uint32_t job_reserved2;
    uint64_t generation;
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
    int32_t  partition;     /* p (regular), -1 - i (broadcast i), FS_NO_PARTITION */
} fs_entry;

/* The version word folds the format number and the struct sizes, one byte each (format << 24 | entry << 8 |
 * header), so a shim built with other structs refuses the table (-EINVAL) instead of misreading it. */
#define FS_META_VERSION ((FS_META_FORMAT << 24) | ((uint32_t)sizeof(fs_entry) << 8) | (uint32_t)sizeof(fs_meta_header))
_Static_assert(sizeof(fs_entry) < 256 && sizeof(fs_meta_header) < 256, "each size fits its byte of the version");
_Static_assert(FS_META_VERSION == 0x020048a0u, "version word: MetadataTableDescriptor.VERSION says the same");

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
    uint32_t        replicas;
    uint64_t        generation;
    uint32_t        validated_here; /* 1 when this open walked every entry, 0 when a matching seal vouched */
} fs_table;

/* The seal: a record, beside a landed table, that a process validated that very file in full (format: the table
 * README, "Validated once per node"). Exactly as laid out in the file (64 bytes, little-endian). */
#define FS_META_SEAL_MAGIC "FANSSEAL"
typedef struct fs_meta_seal {
    char     magic[8];
    uint32_t version;      /* FS_META_VERSION */
    uint32_t reserved;     /* 0 */
    uint64_t dev;
    uint64_t ino;
    uint64_t size;
    int64_t  mtime_sec;
    int64_t  mtime_nsec;
    uint64_t generation;
} fs_meta_seal;

uint64_t fs_fnv1a64(const char *key, size_t len);

/* Maps and validates path. Returns 0, or -errno (-EINVAL for a malformed table). */
int fs_table_open(const char *path, fs_table *out);
/* As fs_table_open, but the per-entry pass is skipped when seal_path holds a seal of this very file (same device,
 * inode, size, mtime and generation); after a full pass that accepts the table, writes that seal (best effort:
 * a failure to write it only means the next process validates in full too). */
int fs_table_open_sealed(const char *path, const char *seal_path, fs_table *out);
void fs_table_close(fs_table *t);

/* Entry index of key (len bytes, no NUL needed), or -1 when absent. "" is the root (index 0). */
int64_t fs_table_lookup(const fs_table *t, const char *key, size_t len);

static inline const fs_entry *fs_table_entry(const fs_table *t, uint32_t idx) { return &t->entries[idx]; }
static inline const char *fs_entry_key(const fs_table *t, const fs_entry *e) { return t->strings + e->key_off; }
/* Symlink target (NUL-terminated, e->child_count bytes). */
static inline const char *fs_entry_link_target(const fs_table *t, const fs_entry *e) {
    return t->strings + e->key_off + e->key_len + 1;
}
/* Whether this node holds partition p (MetadataTable.holds in Java computes the same): broadcast partitions always,
 * regular partition p when this rank is its owner (p % world) or one of the replicas ranks after it. */
static inline int fs_table_holds(const fs_table *t, int32_t p)
{
    if (p == FS_NO_PARTITION)
        return 0;
    if (p < 0)
        return 1;
    uint32_t owner = (uint32_t)p % t->world_size;
    uint32_t distance = (t->rank + t->world_size - owner) % t->world_size;
    return distance <= t->replicas;
}
/* An entry the shim opens as <local root>/<key> itself: unpackable and held on this node. */
static inline int fs_entry_local_raw(const fs_table *t, const fs_entry *e)
{
    return (e->flags & FS_ENTRY_UNPACKABLE) && fs_table_holds(t, e->partition);
}
/* Name = last component of the key. */
const char *fs_entry_name(const fs_table *t, const fs_entry *e, size_t *len);

#endif
