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

int fs_cache_attach(fs_cache *c, const char *rank_dir, uint64_t entry_count)
{
    c->ref = NULL;
    c->entries = 0;
    int n = snprintf(c->dir, sizeof c->dir, "%s/" FS_RANK_CACHE_DIR, rank_dir);
    if (n < 0 || (size_t)n >= sizeof c->dir - 16)   /* room for "/e" + a 10-digit index */
        return -ENAMETOOLONG;
    c->dir_len = (size_t)n;
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
    else if (entry_count == 0 || (uint64_t)st.st_size != entry_count)
        rc = -EPROTO;   /* written for another table (or by another layout): not ours to interpret */
    void *map = MAP_FAILED;
    if (rc == 0) {
        map = mmap(NULL, (size_t)entry_count, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
        if (map == MAP_FAILED)
            rc = -errno;
    }
    syscall(SYS_close, fd);
    errno = saved;
    if (rc != 0)
        return rc;
    c->ref = map;
    c->entries = entry_count;
    return 0;
}

void fs_cache_detach(fs_cache *c)
{
    if (c->ref != NULL)
        munmap((void *)c->ref, (size_t)c->entries);
    c->ref = NULL;
    c->entries = 0;
}

int fs_cache_path(const fs_cache *c, uint32_t idx, char *buf, size_t cap)
{
    if (idx >= c->entries)
        return -ERANGE;
    int n = snprintf(buf, cap, "%.*s/" FS_RANK_CACHE_FILE_PREFIX "%u", (int)c->dir_len, c->dir, idx);
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
