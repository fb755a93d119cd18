/* meta_table: maps a node's landed meta.tbl read-only and answers key -> entry lookups.
 * Owns: the mapping (fs_table_open / fs_table_close) and the validation that makes every later access safe.
 * Invariant: once fs_table_open returns 0, every offset, index and length reachable from the table has been
 * checked against the mapping, so lookups, entry accessors and children walks never leave it, whatever the
 * file held. A malformed table is refused with -EINVAL and left unmapped; nothing here crashes on bad input.
 * fs_table_open_sealed keeps the invariant with one pass per node instead of per process: it skips the entry pass
 * only for the very file (device, inode, size, mtime, generation) an earlier process of the same user validated in
 * full and sealed (the table README, "Validated once per node").
 *
 * This code runs inside the LD_PRELOAD shim, which wraps open/openat/fstat/close. Calling those through libc
 * would re-enter the shim's own wrappers (and, during the shim's initialisation, recurse), so the file is
 * opened, stat'ed and closed with raw syscall(2). mmap/munmap are not wrapped by the shim (descriptors stay
 * real kernel descriptors, design item 4), so the libc ones are used. The caller's errno is preserved. */
#include "meta_table.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "meta.tbl is little-endian and read in place: a big-endian port must byte-swap every field"
#endif

_Static_assert(sizeof(fs_meta_header) == FS_META_HEADER_SIZE, "header layout");
_Static_assert(offsetof(fs_meta_header, entry_count) == 16, "header layout");
_Static_assert(offsetof(fs_meta_header, bodies_off) == 80, "header layout");
_Static_assert(offsetof(fs_meta_header, table_len) == 88, "header layout");
_Static_assert(offsetof(fs_meta_header, partitions) == 104, "header layout");
_Static_assert(offsetof(fs_meta_header, st_dev) == 112, "header layout");
_Static_assert(offsetof(fs_meta_header, crc32c) == 116, "header layout");
_Static_assert(offsetof(fs_meta_header, rank) == 120, "header layout");
_Static_assert(offsetof(fs_meta_header, local_root_off) == 136, "header layout");
_Static_assert(offsetof(fs_meta_header, generation) == 152, "header layout");
_Static_assert(sizeof(fs_entry) == FS_META_ENTRY_SIZE, "entry layout");
_Static_assert(offsetof(fs_entry, key_off) == 40, "entry layout");
_Static_assert(offsetof(fs_entry, parent) == 52, "entry layout");
_Static_assert(offsetof(fs_entry, flags) == 64, "entry layout");
_Static_assert(offsetof(fs_entry, partition) == 68, "entry layout");
_Static_assert(sizeof(fs_meta_seal) == 64 && offsetof(fs_meta_seal, generation) == 56, "seal layout");

#define FNV_OFFSET_BASIS 0xcbf29ce484222325ull
#define FNV_PRIME        0x100000001b3ull

/* Bucket values are entry index + 1 in a u32, so an index must stay below UINT32_MAX. */
#define MAX_ENTRIES      ((uint64_t)UINT32_MAX - 1u)

uint64_t fs_fnv1a64(const char *key, size_t len)
{
    uint64_t h = FNV_OFFSET_BASIS;
    for (size_t i = 0; i < len; i++) {
        h ^= (uint8_t)key[i];
        h *= FNV_PRIME;
    }
    return h;
}

/* True when a section of count elements of elem bytes at off lies after the header, inside len bytes,
 * and starts 8-aligned. Written so that no product or sum can overflow. */
static int section_fits(uint64_t off, uint64_t count, uint64_t elem, uint64_t len)
{
    if (off % 8 != 0 || off < FS_META_HEADER_SIZE || off > len)
        return 0;
    return count <= (len - off) / elem;
}

/* True when pool[off .. off+n) lies in the pool and is followed by a NUL, also inside the pool. */
static int string_fits(const fs_table *t, uint64_t off, uint64_t n)
{
    if (off >= t->strings_len || n >= t->strings_len - off)
        return 0;
    return t->strings[off + n] == '\0';
}

static int header_valid(const fs_meta_header *h, uint64_t file_len)
{
    if (memcmp(h->magic, FS_META_MAGIC, sizeof h->magic) != 0 || h->version != FS_META_VERSION ||
        h->header_size != FS_META_HEADER_SIZE || h->table_len < FS_META_HEADER_SIZE || h->table_len > file_len)
        return 0;
    if (h->entry_count < 1 || h->entry_count > MAX_ENTRIES || h->generation == 0)
        return 0;
    if (h->world_size < 1 || h->rank >= h->world_size || h->replicas >= h->world_size)
        return 0;
    if (h->partitions > INT32_MAX || h->broadcast_partitions > INT32_MAX)
        return 0;
    /* The sections lie in the table; only the local root lies after it. */
    file_len = h->table_len;
    uint64_t b = h->bucket_count;
    /* entry_count <= MAX_ENTRIES, so 2 * entry_count cannot overflow. */
    if (b == 0 || (b & (b - 1)) != 0 || b < 2 * h->entry_count)
        return 0;
    return section_fits(h->entries_off, h->entry_count, FS_META_ENTRY_SIZE, file_len) &&
           section_fits(h->buckets_off, b, sizeof(uint32_t), file_len) &&
           section_fits(h->children_off, h->children_count, sizeof(uint32_t), file_len) &&
           section_fits(h->strings_off, h->strings_len, 1, file_len) &&
           section_fits(h->bodies_off, h->entry_count, FS_META_BODY_SIZE, file_len);
}

static int entry_valid(const fs_table *t, const fs_entry *e, const fs_meta_header *h)
{
    if (e->key_len > t->strings_len || !string_fits(t, e->key_off, e->key_len))
        return 0;
    if (e->parent >= t->entry_count || e->mtime_nsec >= 1000000000u)
        return 0;
    if (S_ISREG(e->mode)) {
        /* -1 - partition computed in 64 bits: no overflow for INT32_MIN. */
        if (e->partition >= 0 ? (uint32_t)e->partition >= h->partitions
                              : -1 - (int64_t)e->partition >= (int64_t)h->broadcast_partitions)
            return 0;
    } else if (e->partition != FS_NO_PARTITION) {
        return 0;
    }
    if (S_ISDIR(e->mode)) {
        /* first_child + child_count in 64 bits: both are u32, no overflow. */
        return (uint64_t)e->first_child + e->child_count <= t->children_count;
    }
    if (e->first_child != 0)
        return 0;
    if (S_ISLNK(e->mode)) {
        /* The target follows the key's NUL: key_off + key_len + 1 <= strings_len was checked above. */
        return string_fits(t, e->key_off + e->key_len + 1, e->child_count);
    }
    return e->child_count == 0;
}

/* Checks everything a reader dereferences: every entry's strings and ranges, every child index, and that
 * the bucket array holds exactly one reference to each entry (so a probe always reaches an empty bucket). */
static int body_valid(const fs_table *t, const fs_meta_header *h)
{
    const fs_entry *root = &t->entries[0];
    if (root->key_len != 0 || !S_ISDIR(root->mode) || root->parent != 0)
        return 0;
    for (uint64_t i = 0; i < t->entry_count; i++) {
        if (!entry_valid(t, &t->entries[i], h))
            return 0;
    }
    for (uint64_t i = 0; i < t->children_count; i++) {
        /* Entry 0 is the root: never anyone's child, and the index also keeps walks from cycling to it. */
        if (t->children[i] == 0 || t->children[i] >= t->entry_count)
            return 0;
    }
    uint64_t used = 0;
    for (uint64_t i = 0; i <= t->bucket_mask; i++) {
        uint32_t b = t->buckets[i];
        if (b == 0)
            continue;
        if (b > t->entry_count)
            return 0;
        used++;
    }
    return used == t->entry_count;
}

/* Fills out from a mapped header already known to be valid. */
static void describe(fs_table *out, const uint8_t *base, size_t len, const fs_meta_header *h)
{
    out->base = base;
    out->length = len;
    out->entry_count = h->entry_count;
    out->bucket_mask = h->bucket_count - 1;
    out->entries = (const fs_entry *)(base + h->entries_off);
    out->buckets = (const uint32_t *)(base + h->buckets_off);
    out->children = (const uint32_t *)(base + h->children_off);
    out->children_count = h->children_count;
    out->strings = (const char *)(base + h->strings_off);
    out->strings_len = h->strings_len;
    out->st_dev = h->st_dev;
    out->rank = h->rank;
    out->world_size = h->world_size;
    out->replicas = h->replicas;
    out->generation = h->generation;
    out->local_root = NULL;
    out->local_root_len = 0;
}

/* Opens and fstat's path without going through libc's (shim-wrapped) open/fstat. Returns fd or -errno. */
static int open_raw(const char *path, struct stat *st_out)
{
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (syscall(SYS_fstat, (int)fd, &st) != 0) {
        int err = errno;
        syscall(SYS_close, (int)fd);
        return -err;
    }
    if (!S_ISREG(st.st_mode)) {
        syscall(SYS_close, (int)fd);
        return -EINVAL;
    }
    *st_out = st;
    return (int)fd;
}

/* The seal this process would write for the table it mapped: what fstat said of it, and its generation. */
static void seal_of(const struct stat *st, uint64_t generation, fs_meta_seal *seal)
{
    memset(seal, 0, sizeof *seal);
    memcpy(seal->magic, FS_META_SEAL_MAGIC, sizeof seal->magic);
    seal->version = FS_META_VERSION;
    seal->dev = (uint64_t)st->st_dev;
    seal->ino = (uint64_t)st->st_ino;
    seal->size = (uint64_t)st->st_size;
    seal->mtime_sec = (int64_t)st->st_mtim.tv_sec;
    seal->mtime_nsec = (int64_t)st->st_mtim.tv_nsec;
    seal->generation = generation;
}

/* True when seal_path holds exactly the seal want (raw syscalls: the shim wraps open/read). */
static int seal_matches(const char *seal_path, const fs_meta_seal *want)
{
    long fd = syscall(SYS_openat, AT_FDCWD, seal_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    fs_meta_seal got;
    long n = syscall(SYS_read, (int)fd, &got, sizeof got + 1);   /* one more: a longer file is no seal */
    syscall(SYS_close, (int)fd);
    return n == (long)sizeof got && memcmp(&got, want, sizeof got) == 0;
}

/* Writes seal under a temporary name and renames it over seal_path; failures are ignored (best effort). */
static void seal_write(const char *seal_path, const fs_meta_seal *seal)
{
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp-%ld", seal_path, (long)syscall(SYS_getpid));
    if (n < 0 || n >= (int)sizeof tmp)
        return;
    long fd = syscall(SYS_openat, AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    long w = syscall(SYS_write, (int)fd, seal, sizeof *seal);
    syscall(SYS_close, (int)fd);
    if (w != (long)sizeof *seal || syscall(SYS_renameat, AT_FDCWD, tmp, AT_FDCWD, seal_path) != 0)
        syscall(SYS_unlinkat, AT_FDCWD, tmp, 0);
}

/* The root entry's checks, the only per-entry ones a sealed open makes (entry 0 is read by every walk). */
static int root_valid(const fs_table *t, const fs_meta_header *h)
{
    const fs_entry *root = &t->entries[0];
    return root->key_len == 0 && S_ISDIR(root->mode) && root->parent == 0 && entry_valid(t, root, h);
}

int fs_table_open(const char *path, fs_table *out)
{
    return fs_table_open_sealed(path, NULL, out);
}

int fs_table_open_sealed(const char *path, const char *seal_path, fs_table *out)
{
    int saved_errno = errno;
    memset(out, 0, sizeof *out);
    struct stat st;
    memset(&st, 0, sizeof st);   /* filled by fstat (a raw syscall the compiler cannot see into) */
    int fd = open_raw(path, &st);
    if (fd < 0) {
        errno = saved_errno;
        return fd;
    }
    uint64_t size = (uint64_t)st.st_size;
    if (size < FS_META_HEADER_SIZE || size > SIZE_MAX) {
        syscall(SYS_close, fd);
        errno = saved_errno;
        return -EINVAL;
    }
    void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
    int map_errno = errno;
    /* The mapping keeps the file alive; the descriptor is not needed past this point. */
    syscall(SYS_close, fd);
    if (map == MAP_FAILED) {
        errno = saved_errno;
        return -map_errno;
    }
    const fs_meta_header *h = (const fs_meta_header *)map;
    int ok = header_valid(h, size);
    fs_meta_seal seal;
    int sealed = 0;
    if (ok) {
        describe(out, map, (size_t)size, h);
        seal_of(&st, h->generation, &seal);
        sealed = seal_path != NULL && seal_matches(seal_path, &seal);
        /* The local root lies in the job trailer, [table_len, size), followed by a NUL. */
        ok = (sealed ? root_valid(out, h) : body_valid(out, h)) && h->local_root_off >= h->table_len &&
             h->local_root_off < size && h->local_root_len < size - h->local_root_off &&
             ((const char *)map)[h->local_root_off + h->local_root_len] == '\0';
    }
    if (!ok) {
        munmap(map, (size_t)size);
        memset(out, 0, sizeof *out);
        errno = saved_errno;
        return -EINVAL;
    }
    out->local_root = (const char *)map + h->local_root_off;
    out->local_root_len = h->local_root_len;
    out->validated_here = !sealed;
    if (!sealed && seal_path != NULL)
        seal_write(seal_path, &seal);
    errno = saved_errno;
    return 0;
}

void fs_table_close(fs_table *t)
{
    if (t->base != NULL) {
        int saved_errno = errno;
        munmap((void *)t->base, t->length);
        errno = saved_errno;
    }
    memset(t, 0, sizeof *t);
}

int64_t fs_table_lookup(const fs_table *t, const char *key, size_t len)
{
    if (len > UINT32_MAX)
        return -1;
    const uint64_t h = fs_fnv1a64(key, len);
    const uint64_t mask = t->bucket_mask;
    const fs_entry *entries = t->entries;
    const uint32_t *buckets = t->buckets;
    /* Validation guarantees an empty bucket exists; the probe bound is a second line of defence. */
    for (uint64_t i = h & mask, probes = 0; probes <= mask; i = (i + 1) & mask, probes++) {
        uint32_t b = buckets[i];
        if (b == 0)
            return -1;
        const fs_entry *e = &entries[b - 1];
        if (e->hash == h && e->key_len == len && memcmp(t->strings + e->key_off, key, len) == 0)
            return (int64_t)(b - 1);
    }
    return -1;
}

const char *fs_entry_name(const fs_table *t, const fs_entry *e, size_t *len)
{
    const char *key = t->strings + e->key_off;
    const char *slash = memrchr(key, '/', e->key_len);
    const char *name = slash != NULL ? slash + 1 : key;
    *len = (size_t)(key + e->key_len - name);
    return name;
}
