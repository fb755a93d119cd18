/* slice_view: slices.map, mapped read-only; see slice_view.h. System calls are raw (syscall()) so that attaching
 * never re-enters the shim's own wrappers. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rank_dir.h"
#include "slice_view.h"


static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

int fs_slices_view(fs_slices *v, const void *map, size_t length, uint64_t entry_count)
{
    const unsigned char *b = map;
    v->base = NULL;
    if (length < FS_SLICE_HEADER_SIZE || memcmp(b, FS_SLICE_MAGIC, 8) != 0 || le32(b + 8) != FS_SLICE_VERSION)
        return -EPROTO;
    uint32_t slots = le32(b + 12);
    uint64_t entries = le64(b + 16);
    if (entries != entry_count || entries > (UINT64_MAX - FS_SLICE_HEADER_SIZE) / 64 ||
        length != FS_SLICE_HEADER_SIZE + (uint64_t)slots * FS_SLICE_SLOT_SIZE + entries * FS_SLICE_ENTRY_SIZE)
        return -EPROTO;
    v->base = b;
    v->length = length;
    v->slots = slots;
    v->entries = entries;
    return 0;
}

int fs_slices_attach(fs_slices *v, const char *rank_dir, uint64_t entry_count)
{
    v->base = NULL;
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/" FS_RANK_SLICE_MAP, rank_dir);
    if (n < 0 || (size_t)n >= sizeof path)
        return -ENAMETOOLONG;
    int saved = errno;
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        int err = -errno;
        errno = saved;
        return err;
    }
    struct stat st;
    int rc = 0;
    void *map = MAP_FAILED;
    if (syscall(SYS_fstat, fd, &st) != 0)
        rc = -errno;
    else if (st.st_uid != geteuid() || !S_ISREG(st.st_mode))
        rc = -EACCES;
    else if (st.st_size < (off_t)FS_SLICE_HEADER_SIZE)
        rc = -EPROTO;
    if (rc == 0) {
        map = (void *)syscall(SYS_mmap, NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
            rc = -errno;
    }
    syscall(SYS_close, fd);
    if (rc == 0 && (rc = fs_slices_view(v, map, (size_t)st.st_size, entry_count)) != 0)
        syscall(SYS_munmap, map, (size_t)st.st_size);
    errno = saved;
    return rc;
}

void fs_slices_detach(fs_slices *v)
{
    if (v->base != NULL)
        syscall(SYS_munmap, (void *)v->base, v->length);
    v->base = NULL;
}

int fs_slices_lookup(const fs_slices *v, uint32_t idx, const char **path, size_t *path_len, uint64_t *offset)
{
    if (v == NULL || v->base == NULL || idx >= v->entries)
        return 0;
    const unsigned char *rec = v->base + FS_SLICE_HEADER_SIZE + (uint64_t)v->slots * FS_SLICE_SLOT_SIZE +
                               (uint64_t)idx * FS_SLICE_ENTRY_SIZE;
    /* The map is little-endian and 4/8-aligned at these offsets; the machine is little-endian (partition_format.h). */
    uint32_t slot1 = atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)rec, memory_order_acquire);
    if (slot1 == 0 || slot1 > v->slots)
        return 0;
    const unsigned char *s = v->base + FS_SLICE_HEADER_SIZE + (uint64_t)(slot1 - 1) * FS_SLICE_SLOT_SIZE;
    uint32_t len = atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)s, memory_order_acquire);
    if (len == 0 || len > FS_SLICE_PATH_MAX)
        return 0;
    *path = (const char *)s + 4;
    *path_len = len;
    *offset = le64(rec + 8);
    return 1;
}
