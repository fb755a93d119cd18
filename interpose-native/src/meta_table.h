/* meta_table: read-only view of a node's landed metadata table (meta.tbl: the dataset's namespace.tbl as prep wrote
 * it, plus this node's job area and local root). Format 3, the compact table: 44-byte entries in breadth-first
 * order, each directory's children contiguous, names stored once per directory block (a child's name may extend
 * its directory's), mode/uid/gid in an attribute table, buckets of entry indices without hashes.
 * Format: prep/format/src/main/java/org/fanstore/prep/format/table/README.md (the one specification).
 * Invariants: the table is immutable once mapped; a fs_table never changes after fs_table_open returns,
 * so lookups need no locks. No function here allocates after open or calls exit().
 * Entries are only 4-aligned and pack 48-bit fields: read them with the accessors below (memcpy loads), never
 * through a struct. */
#ifndef FANSTORE_META_TABLE_H
#define FANSTORE_META_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#define FS_META_MAGIC        "FANSMETA"
#define FS_META_FORMAT       3u
#define FS_META_HEADER_SIZE  160u
#define FS_META_ENTRY_SIZE   44u
#define FS_META_ATTR_SIZE    16u
#define FS_META_MAX_ATTRS    65536u
#define FS_META_NAME_MAX     255u

/* Entry flags (byte 25). */
#define FS_ENTRY_UNPACKABLE        0x1u
#define FS_ENTRY_NAME_EXTENDS      0x2u   /* full name = the parent's name + the stored bytes */
#define FS_ENTRY_COMPRESSED        0x4u
#define FS_ENTRY_FLAGS_KNOWN       0x7u
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
    uint64_t attrs_off;
    uint64_t attr_count;
    uint64_t names_off;
    uint64_t names_len;
    uint64_t reserved;
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

/* One entry: 44 opaque bytes (4-aligned in the file). Offsets of its fields: */
typedef struct fs_entry {
    unsigned char b[FS_META_ENTRY_SIZE];
} fs_entry;
enum {
    FS_E_MTIME = 0,       /* i64 nanoseconds since the epoch */
    FS_E_SIZE = 8,        /* u48 st_size */
    FS_E_ATTR = 14,       /* u16 attribute index */
    FS_E_PARENT = 16,     /* u32 */
    FS_E_NAME_OFF = 20,   /* u32, relative to the parent's names base */
    FS_E_NAME_LEN = 24,   /* u8 stored name length */
    FS_E_FLAGS = 25,      /* u8 */
    FS_E_BODY = 26,       /* file: u48 body offset; directory: u48 names base */
    FS_E_PARTITION = 32,  /* file: i32 partition; directory: u32 first child */
    FS_E_CRC = 36,        /* file: u32 CRC32C; directory: u32 child count */
    FS_E_STORED = 40,     /* file: u32 stored length when COMPRESSED */
};

/* One attribute triple (16 bytes, 8-aligned: read in place). */
typedef struct fs_attr {
    uint32_t mode;        /* st_mode, type bits included */
    uint32_t uid;
    uint32_t gid;
    uint32_t reserved;
} fs_attr;

/* The version word folds the format number and the sizes, one byte each (format << 24 | entry << 8 | header),
 * so a shim built for another layout refuses the table (-EINVAL) instead of misreading it. */
#define FS_META_VERSION ((FS_META_FORMAT << 24) | ((uint32_t)sizeof(fs_entry) << 8) | (uint32_t)sizeof(fs_meta_header))
_Static_assert(sizeof(fs_entry) == FS_META_ENTRY_SIZE && sizeof(fs_attr) == FS_META_ATTR_SIZE, "sizes");
_Static_assert(FS_META_VERSION == 0x03002ca0u, "version word: MetadataTableDescriptor.VERSION says the same");

typedef struct fs_table {
    const uint8_t  *base;
    size_t          length;
    uint64_t        entry_count;
    uint64_t        bucket_count;
    const fs_entry *entries;
    const uint32_t *buckets;
    const fs_attr  *attrs;
    uint64_t        attr_count;
    const char     *names;
    uint64_t        names_len;
    const char     *local_root;
    uint32_t        local_root_len;
    uint32_t        st_dev;
    uint32_t        rank;
    uint32_t        world_size;
    uint32_t        replicas;
    uint32_t        partitions;
    uint32_t        broadcast_partitions;
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

/* ---- entry accessors (little-endian loads of possibly unaligned fields) ---- */
static inline uint64_t fs_rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t fs_rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint16_t fs_rd16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
/* A u48 at off: 8 bytes loaded (off + 8 <= 44 for both u48 fields) and the top 16 bits dropped. */
static inline uint64_t fs_rd48(const unsigned char *p) { return fs_rd64(p) & 0xffffffffffffull; }

static inline const fs_entry *fs_table_entry(const fs_table *t, uint32_t idx) { return &t->entries[idx]; }
static inline int64_t  fs_entry_mtime_ns(const fs_entry *e) { return (int64_t)fs_rd64(e->b + FS_E_MTIME); }
static inline uint64_t fs_entry_size(const fs_entry *e) { return fs_rd48(e->b + FS_E_SIZE); }
static inline uint32_t fs_entry_attr(const fs_entry *e) { return fs_rd16(e->b + FS_E_ATTR); }
static inline uint32_t fs_entry_parent(const fs_entry *e) { return fs_rd32(e->b + FS_E_PARENT); }
static inline uint32_t fs_entry_name_off(const fs_entry *e) { return fs_rd32(e->b + FS_E_NAME_OFF); }
static inline uint32_t fs_entry_name_len(const fs_entry *e) { return e->b[FS_E_NAME_LEN]; }
static inline uint32_t fs_entry_flags(const fs_entry *e) { return e->b[FS_E_FLAGS]; }
static inline const fs_attr *fs_entry_attrs(const fs_table *t, const fs_entry *e) { return &t->attrs[fs_entry_attr(e)]; }
static inline uint32_t fs_entry_mode(const fs_table *t, const fs_entry *e) { return fs_entry_attrs(t, e)->mode; }
static inline uint32_t fs_entry_uid(const fs_table *t, const fs_entry *e) { return fs_entry_attrs(t, e)->uid; }
static inline uint32_t fs_entry_gid(const fs_table *t, const fs_entry *e) { return fs_entry_attrs(t, e)->gid; }
/* mtime split as struct timespec wants it (tv_nsec in [0, 1e9), also before the epoch). */
static inline void fs_entry_mtime(const fs_entry *e, int64_t *sec, uint32_t *nsec)
{
    int64_t ns = fs_entry_mtime_ns(e), s = ns / 1000000000, r = ns % 1000000000;
    if (r < 0)
        s--, r += 1000000000;
    *sec = s;
    *nsec = (uint32_t)r;
}
/* Directory: its children are the entries [first, first + count); names base of their stored names. */
static inline uint32_t fs_dir_first(const fs_entry *e) { return fs_rd32(e->b + FS_E_PARTITION); }
static inline uint32_t fs_dir_count(const fs_entry *e) { return fs_rd32(e->b + FS_E_CRC); }
static inline uint64_t fs_dir_names_base(const fs_entry *e) { return fs_rd48(e->b + FS_E_BODY); }
/* Regular file: partition (p, or -1 - i for broadcast i), body offset, CRC32C, stored length. */
static inline int32_t  fs_file_partition(const fs_entry *e) { return (int32_t)fs_rd32(e->b + FS_E_PARTITION); }
static inline uint64_t fs_file_body_offset(const fs_entry *e) { return fs_rd48(e->b + FS_E_BODY); }
static inline uint32_t fs_file_crc(const fs_entry *e) { return fs_rd32(e->b + FS_E_CRC); }
static inline uint64_t fs_file_stored_len(const fs_entry *e)
{
    return (fs_entry_flags(e) & FS_ENTRY_COMPRESSED) ? fs_rd32(e->b + FS_E_STORED) : fs_entry_size(e);
}
/* Partition of any entry: FS_NO_PARTITION unless a regular file. */
static inline int32_t fs_entry_partition(const fs_table *t, const fs_entry *e)
{
    return S_ISREG(fs_entry_mode(t, e)) ? fs_file_partition(e) : FS_NO_PARTITION;
}

/* The stored name bytes of entry e (> 0): in its parent's block of the names section. */
static inline const char *fs_entry_stored(const fs_table *t, const fs_entry *e)
{
    return t->names + fs_dir_names_base(fs_table_entry(t, fs_entry_parent(e))) + fs_entry_name_off(e);
}
/* Symlink target: fs_entry_size(e) bytes after the stored name (not NUL-terminated). */
static inline const char *fs_entry_link_target(const fs_table *t, const fs_entry *e)
{
    return fs_entry_stored(t, e) + fs_entry_name_len(e);
}

/* A name in two pieces: head (the parent's name, when the entry's name extends it; else empty) then tail. */
typedef struct fs_name {
    const char *head;
    const char *tail;
    uint32_t    head_len;
    uint32_t    tail_len;
} fs_name;
/* Name (last component of the key) of entry e; the root's is empty. Pointers into the table: no copy. */
static inline void fs_entry_name(const fs_table *t, const fs_entry *e, fs_name *n)
{
    if (e == t->entries) {
        *n = (fs_name){ .head = t->names, .tail = t->names, .head_len = 0, .tail_len = 0 };
        return;
    }
    uint32_t p = fs_entry_parent(e);
    const fs_entry *pe = fs_table_entry(t, p);
    n->tail = t->names + fs_dir_names_base(pe) + fs_entry_name_off(e);
    n->tail_len = fs_entry_name_len(e);
    n->head = n->tail;
    n->head_len = 0;
    if (fs_entry_flags(e) & FS_ENTRY_NAME_EXTENDS) {
        n->head = fs_entry_stored(t, pe);   /* the parent's own name never extends (validated) */
        n->head_len = fs_entry_name_len(pe);
    }
}
/* Key of entry idx written into buf with a NUL; returns its length, or -ENAMETOOLONG when cap is too small. */
ssize_t fs_table_key(const fs_table *t, uint32_t idx, char *buf, size_t cap);

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
/* An entry the shim opens as <local root>/<key> itself: unpackable and held on this node. Only regular files
 * are UNPACKABLE (validated), so the partition field is read as such. */
static inline int fs_entry_local_raw(const fs_table *t, const fs_entry *e)
{
    return (fs_entry_flags(e) & FS_ENTRY_UNPACKABLE) && fs_table_holds(t, fs_file_partition(e));
}

#endif
