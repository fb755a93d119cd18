/* shim_counters: see shim_counters.h. The file is opened, stat'ed and closed with raw syscall(2), as
 * cache_view.c does, so the shim never re-enters its own wrappers. */
#include "shim_counters.h"
#include "rank_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int fs_counters_attach(fs_counters **out, const char *rank_dir)
{
    *out = NULL;
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/" FS_RANK_SHIM_COUNTERS, rank_dir);
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
    else if ((size_t)st.st_size != sizeof(fs_counters))
        rc = -EPROTO;
    fs_counters *map = MAP_FAILED;
    if (rc == 0) {
        map = mmap(NULL, sizeof *map, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
        if (map == MAP_FAILED)
            rc = -errno;
    }
    syscall(SYS_close, fd);
    if (rc == 0 && (memcmp(map->magic, FS_COUNTERS_MAGIC, 8) != 0 || map->version != FS_COUNTERS_VERSION
                    || map->count != FS_CTR_COUNT)) {
        munmap(map, sizeof *map);
        rc = -EPROTO;   /* written by another layout: adding to it would corrupt someone else's numbers */
    }
    errno = saved;
    if (rc != 0)
        return rc;
    *out = map;
    return 0;
}

void fs_counters_detach(fs_counters *c)
{
    if (c != NULL)
        munmap(c, sizeof *c);
}
