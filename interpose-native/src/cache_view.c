/* cache_view: see cache_view.h. Runs inside the LD_PRELOAD shim, which wraps open/fstat/close/unlink: the ref file
 * is opened, stat'ed and closed, and pins unlinked, with raw syscall(2) (as meta_table.c does) so the shim never
 * re-enters itself. */
#include "cache_view.h"
#include "rank_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

_Static_assert(sizeof(_Atomic unsigned char) == 1, "one reference byte per entry, as the runtime writes them");

/* Bytes after the entries' bytes: the local threshold (ReferenceBits.TRAILER_BYTES). */
#define FS_CACHE_TRAILER 8u

/* The local cache directory: local_root's last component replaced by its name; none for an empty root. */
static int local_dir_of(fs_cache *c, const char *local_root, size_t len)
{
    c->local_dir_len = 0;
    while (len > 0 && local_root[len - 1] == '/')
        len--;
    while (len > 0 && local_root[len - 1] != '/')
        len--;
    if (len == 0)
        return 0;
    int n = snprintf(c->local_dir, sizeof c->local_dir, "%.*s" FS_RANK_LOCAL_CACHE_DIR, (int)len, local_root);
    if (n < 0 || (size_t)n >= sizeof c->local_dir - 16)
        return -ENAMETOOLONG;
    c->local_dir_len = (size_t)n;
    return 0;
}

int fs_cache_attach(fs_cache *c, const char *rank_dir, uint64_t entry_count, const char *local_root,
                    size_t local_root_len)
{
    c->ref = NULL;
    c->entries = 0;
    c->local_min = UINT64_MAX;
    int n = snprintf(c->dir, sizeof c->dir, "%s/" FS_RANK_CACHE_DIR, rank_dir);
    if (n < 0 || (size_t)n >= sizeof c->dir - 16)   /* room for "/e" + a 10-digit index */
        return -ENAMETOOLONG;
    c->dir_len = (size_t)n;
    if (local_dir_of(c, local_root, local_root_len) != 0)
        return -ENAMETOOLONG;
    char path[PATH_MAX];
    n = snprintf(path, sizeof path, "%s/" FS_RANK_CACHE_REF, rank_dir);
    if (n < 0 || (size_t)n >= sizeof path)
        return -ENAMETOOLONG;
    int saved = errno;
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        int err = -errno;
        errno = saved;
        return err;
    }
    struct stat st;
    int rc = 0;
    if (syscall(SYS_fstat, fd, &st) != 0)
        rc = -errno;
    else if (st.st_uid != geteuid() || !S_ISREG(st.st_mode))
        rc = -EACCES;
    else if (entry_count == 0 || (uint64_t)st.st_size != entry_count + FS_CACHE_TRAILER)
        rc = -EPROTO;   /* written for another table (or by another layout): not ours to interpret */
    void *map = MAP_FAILED;
    if (rc == 0) {
        map = mmap(NULL, (size_t)entry_count + FS_CACHE_TRAILER, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
        if (map == MAP_FAILED)
            rc = -errno;
    }
    syscall(SYS_close, fd);
    errno = saved;
    if (rc != 0)
        return rc;
    const unsigned char *t = (const unsigned char *)map + entry_count;   /* unaligned: byte by byte */
    uint64_t min = 0;
    for (int i = 7; i >= 0; i--)
        min = min << 8 | t[i];
    c->local_min = c->local_dir_len > 0 ? min : UINT64_MAX;
    c->ref = map;
    c->entries = entry_count;
    return 0;
}

void fs_cache_detach(fs_cache *c)
{
    if (c->ref != NULL)
        munmap((void *)c->ref, (size_t)c->entries + FS_CACHE_TRAILER);
    c->ref = NULL;
    c->entries = 0;
}

int fs_cache_path(const fs_cache *c, uint32_t idx, uint64_t size, char *buf, size_t cap)
{
    if (idx >= c->entries)
        return -ERANGE;
    int local = size >= c->local_min;
    int n = snprintf(buf, cap, "%.*s/" FS_RANK_CACHE_FILE_PREFIX "%u", (int)(local ? c->local_dir_len : c->dir_len),
                     local ? c->local_dir : c->dir, idx);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

void fs_cache_release_pin(const char *path)
{
    const char *base = strrchr(path, '/');
    if (base == NULL || strncmp(base + 1, FS_RANK_CACHE_PIN_PREFIX, strlen(FS_RANK_CACHE_PIN_PREFIX)) != 0)
        return;
    int saved = errno;
    syscall(SYS_unlinkat, AT_FDCWD, path, 0);
    errno = saved;
}
