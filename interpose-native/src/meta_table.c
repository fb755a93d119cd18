/* meta_table: maps a node's landed meta.tbl read-only (lookups and keys: meta_table_lookup.c).
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
_Static_assert(offsetof(fs_meta_header, attrs_off) == 48, "header layout");
_Static_assert(offsetof(fs_meta_header, names_off) == 64, "header layout");
_Static_assert(offsetof(fs_meta_header, reserved) == 80, "header layout");
_Static_assert(offsetof(fs_meta_header, table_len) == 88, "header layout");
_Static_assert(offsetof(fs_meta_header, partitions) == 104, "header layout");
_Static_assert(offsetof(fs_meta_header, st_dev) == 112, "header layout");
_Static_assert(offsetof(fs_meta_header, crc32c) == 116, "header layout");
_Static_assert(offsetof(fs_meta_header, rank) == 120, "header layout");
_Static_assert(offsetof(fs_meta_header, local_root_off) == 136, "header layout");
_Static_assert(offsetof(fs_meta_header, generation) == 152, "header layout");
_Static_assert(sizeof(fs_meta_seal) == 64 && offsetof(fs_meta_seal, generation) == 56, "seal layout");

/* Bucket values are entry index + 1 in a u32, so an index must stay below UINT32_MAX. */
#define MAX_ENTRIES      ((uint64_t)UINT32_MAX - 1u)

/* True when a section of count elements of elem bytes at off lies after the header, inside len bytes,
 * and starts 8-aligned. Written so that no product or sum can overflow. */
static int section_fits(uint64_t off, uint64_t count, uint64_t elem, uint64_t len)
{
    if (off % 8 != 0 || off < FS_META_HEADER_SIZE || off > len)
        return 0;
    return count <= (len - off) / elem;
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
    /* E < B < 2^32: a probe always meets an empty bucket, and bucket numbers fit the home computation. */
    if (h->bucket_count <= h->entry_count || h->bucket_count > UINT32_MAX)
        return 0;
    if (h->attr_count < 1 || h->attr_count > FS_META_MAX_ATTRS)
        return 0;
    /* The sections lie in the table; only the local root lies after it. */
    uint64_t len = h->table_len;
    return section_fits(h->entries_off, h->entry_count, FS_META_ENTRY_SIZE, len) &&
           section_fits(h->buckets_off, h->bucket_count, sizeof(uint32_t), len) &&
           section_fits(h->attrs_off, h->attr_count, FS_META_ATTR_SIZE, len) &&
           section_fits(h->names_off, h->names_len, 1, len);
}

/* The root's own checks (entry 0): a directory named "" under itself, no flags, its children [1, 1 + count) inside
 * the table (count 0: first 0). The only per-entry checks a sealed open makes: every walk starts at the root. */
static int root_valid(const fs_table *t)
{
    const fs_entry *r = &t->entries[0];
    if (fs_entry_attr(r) >= t->attr_count || !S_ISDIR(fs_entry_mode(t, r)) || fs_entry_parent(r) != 0 ||
        fs_entry_name_len(r) != 0 || fs_entry_flags(r) != 0)
        return 0;
    uint32_t first = fs_dir_first(r), count = fs_dir_count(r);
    return count == 0 ? first == 0 : first == 1 && count <= t->entry_count - 1;
}

/* No '/' and no NUL in n bytes. */
static int name_bytes_valid(const char *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (s[i] == '/' || s[i] == '\0')
            return 0;
    return 1;
}

/* Entry i > 0 against its parent (already checked, parent < i): the parent is a directory whose child range holds
 * i, the name lies in the names section with a full name of 1..255 bytes. */
static int place_valid(const fs_table *t, const fs_entry *e, uint32_t i)
{
    uint32_t p = fs_entry_parent(e);
    if (p >= i)
        return 0;
    const fs_entry *pe = &t->entries[p];
    if (!S_ISDIR(fs_entry_mode(t, pe)) || i < fs_dir_first(pe) || i - fs_dir_first(pe) >= fs_dir_count(pe))
        return 0;
    uint32_t len = fs_entry_name_len(e), full = len;
    if (fs_entry_flags(e) & FS_ENTRY_NAME_EXTENDS) {
        if (p == 0 || (fs_entry_flags(pe) & FS_ENTRY_NAME_EXTENDS))
            return 0;
        full += fs_entry_name_len(pe);
    }
    if (full < 1 || full > FS_META_NAME_MAX)
        return 0;
    /* base < 2^48 and the offset < 2^32: the sum cannot overflow. */
    uint64_t off = fs_dir_names_base(pe) + fs_entry_name_off(e);
    if (off > t->names_len || len > t->names_len - off || !name_bytes_valid(t->names + off, len))
        return 0;
    if (S_ISLNK(fs_entry_mode(t, e)))
        return fs_entry_size(e) <= t->names_len - off - len;   /* the target follows the name */
    return 1;
}

/* Checks everything a reader dereferences: every entry's attribute, parent, name and type fields, that the
 * directories' child ranges tile [1, E) in directory order (so every entry but the root is the child of exactly
 * its parent, and children follow their parent), and that the buckets hold exactly E entry references (so every
 * probe meets an empty bucket). */
static int body_valid(const fs_table *t)
{
    if (!root_valid(t))
        return 0;
    uint64_t next = 1;   /* the first entry no directory's range has covered yet */
    for (uint64_t i = 0; i < t->entry_count; i++) {
        const fs_entry *e = &t->entries[i];
        uint32_t flags = fs_entry_flags(e);
        if (fs_entry_attr(e) >= t->attr_count || (flags & ~FS_ENTRY_FLAGS_KNOWN) != 0)
            return 0;
        if (i > 0 && !place_valid(t, e, (uint32_t)i))
            return 0;
        uint32_t mode = fs_entry_mode(t, e);
        if (S_ISREG(mode)) {
            int32_t p = fs_file_partition(e);
            /* -1 - partition computed in 64 bits: no overflow for INT32_MIN. */
            if (p >= 0 ? (uint32_t)p >= t->partitions : -1 - (int64_t)p >= (int64_t)t->broadcast_partitions)
                return 0;
            continue;
        }
        if (flags & (FS_ENTRY_COMPRESSED | FS_ENTRY_UNPACKABLE))
            return 0;
        if (S_ISDIR(mode)) {
            uint32_t first = fs_dir_first(e), count = fs_dir_count(e);
            if (count == 0) {
                if (first != 0)
                    return 0;
            } else if (first != next || count > t->entry_count - next) {
                return 0;
            } else {
                next += count;
            }
        }
    }
    if (next != t->entry_count)
        return 0;
    uint64_t used = 0;
    for (uint64_t i = 0; i < t->bucket_count; i++) {
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
    out->bucket_count = h->bucket_count;
    out->entries = (const fs_entry *)(base + h->entries_off);
    out->buckets = (const uint32_t *)(base + h->buckets_off);
    out->attrs = (const fs_attr *)(base + h->attrs_off);
    out->attr_count = h->attr_count;
    out->names = (const char *)(base + h->names_off);
    out->names_len = h->names_len;
    out->st_dev = h->st_dev;
    out->rank = h->rank;
    out->world_size = h->world_size;
    out->replicas = h->replicas;
    out->partitions = h->partitions;
    out->broadcast_partitions = h->broadcast_partitions;
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
        ok = (sealed ? root_valid(out) : body_valid(out)) && h->local_root_off >= h->table_len &&
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
